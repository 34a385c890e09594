"""read, write, edit, ls, grep and find over a workspace: pi's parameters, texts and details."""

# pyodide-runner: no-fs
from __future__ import annotations

import base64
from typing import Any

import pytest

from py_agent.ai.abort import AbortController
from py_agent.core.types import AgentTool, AgentToolResult
from py_agent.tools import Workspace, make_tools, make_workspace_tools
from py_agent.tools.files import prepare_edit_arguments
from py_agent.tools.settings import ToolSettings
from py_agent.tools.workspace import WorkspaceError


async def setup(files: dict[str, str | bytes] | None = None) -> tuple[Workspace, dict[str, AgentTool]]:
    ws = await Workspace.open()
    for path, data in (files or {}).items():
        await ws.write(path, data)
    return ws, {tool.name: tool for tool in make_workspace_tools(ws)}


async def run(tool: AgentTool, **params: Any) -> AgentToolResult:
    assert tool.execute is not None
    result = await tool.execute("call-1", params, None, None)
    assert isinstance(result, AgentToolResult)
    return result


def text(result: AgentToolResult) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_tool_set_and_schemas_match_pi() -> None:
    tools = make_workspace_tools(Workspace())
    assert [t.name for t in tools] == ["read", "write", "edit", "ls", "grep", "find"]
    by_name = {t.name: t for t in tools}
    assert by_name["read"].parameters["required"] == ["path"]
    assert set(by_name["read"].parameters["properties"]) == {"path", "offset", "limit"}
    assert set(by_name["write"].parameters["properties"]) == {"path", "content"}
    assert by_name["edit"].parameters["required"] == ["path", "edits"]
    assert set(by_name["edit"].parameters["properties"]["edits"]["items"]["properties"]) == {"oldText", "newText"}
    assert set(by_name["grep"].parameters["properties"]) == {
        "pattern",
        "path",
        "glob",
        "ignoreCase",
        "literal",
        "context",
        "limit",
    }
    assert by_name["ls"].description.startswith("List directory contents.")
    assert all(t.label == t.name for t in tools)


def test_disabled_tools_are_left_out() -> None:
    tools = make_tools(Workspace(), ToolSettings(disabled_tools=frozenset({"grep", "find"})))
    assert [t.name for t in tools] == ["read", "write", "edit", "ls"]


# ---- read


async def test_read_whole_file() -> None:
    _, tools = await setup({"a.txt": "one\ntwo\nthree"})
    assert text(await run(tools["read"], path="a.txt")) == "one\ntwo\nthree"


async def test_read_offset_and_limit_with_continuation_notice() -> None:
    _, tools = await setup({"a.txt": "\n".join(f"line {i}" for i in range(1, 11))})
    result = await run(tools["read"], path="a.txt", offset=3, limit=2)
    assert text(result) == "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    assert text(await run(tools["read"], path="a.txt", offset=9)) == "line 9\nline 10"
    with pytest.raises(Exception, match=r"Offset 20 is beyond end of file \(10 lines total\)"):
        await run(tools["read"], path="a.txt", offset=20)


async def test_read_truncates_at_2000_lines() -> None:
    _, tools = await setup({"big.txt": "\n".join(str(i) for i in range(1, 2501))})
    result = await run(tools["read"], path="big.txt")
    body = text(result)
    assert body.endswith("\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    assert body.split("\n")[1999] == "2000"
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert result.details["truncation"]["outputLines"] == 2000


async def test_read_truncates_at_50kb() -> None:
    line = "x" * 1000
    _, tools = await setup({"wide.txt": "\n".join([line] * 100)})
    result = await run(tools["read"], path="wide.txt")
    assert text(result).endswith("[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]")
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_read_first_line_over_the_limit() -> None:
    _, tools = await setup({"one.txt": "y" * 60000})
    result = await run(tools["read"], path="one.txt")
    assert text(result).startswith("[Line 1 is 58.6KB, exceeds 50.0KB limit.")
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_read_missing_directory_binary_and_image() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
    _, tools = await setup({"d/x.txt": "x", "blob.bin": b"\x00\xff\x00", "pic.png": png})
    with pytest.raises(Exception, match=r"^ENOENT: no such file or directory, access 'nope\.txt'$"):
        await run(tools["read"], path="nope.txt")
    with pytest.raises(Exception, match=r"^EISDIR: illegal operation on a directory, read$"):
        await run(tools["read"], path="d")
    with pytest.raises(Exception, match="binary file"):
        await run(tools["read"], path="blob.bin")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        await run(tools["read"], path="/etc/passwd")
    result = await run(tools["read"], path="pic.png")
    assert text(result) == "Read image file [image/png]"
    image = result.content[1]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png


async def test_read_omits_an_image_above_the_inline_limit() -> None:
    """pi resizes large images; the page cannot, so it sends none (docs/deviations.md T3)."""
    from py_agent.tools.files import MAX_INLINE_IMAGE_BYTES

    big = b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_INLINE_IMAGE_BYTES
    _, tools = await setup({"big.png": big})
    result = await run(tools["read"], path="big.png")
    assert [block.type for block in result.content] == ["text"]
    assert text(result) == (
        "Read image file [image/png]\n[Image omitted: it is larger than the inline image size limit.]"
    )


# ---- write


async def test_write_creates_and_overwrites() -> None:
    ws, tools = await setup()
    result = await run(tools["write"], path="new/dir/f.txt", content="héllo 👋")
    # pi counts JavaScript string length (UTF-16 code units), and calls it bytes.
    assert text(result) == "Successfully wrote 8 bytes to new/dir/f.txt"
    assert ws.get("new/dir/f.txt").data == "héllo 👋"
    await run(tools["write"], path="new/dir/f.txt", content="replaced")
    assert ws.get("new/dir/f.txt").data == "replaced"
    with pytest.raises(WorkspaceError, match=r"'\.\.' is not allowed"):
        await run(tools["write"], path="../x", content="x")


# ---- edit


async def test_edit_replaces_unique_text_and_reports_a_diff() -> None:
    ws, tools = await setup({"a.py": "def f():\n    return 1\n\nprint(f())\n"})
    result = await run(tools["edit"], path="a.py", edits=[{"oldText": "return 1", "newText": "return 2"}])
    assert text(result) == "Successfully replaced 1 block(s) in a.py."
    assert ws.get("a.py").data == "def f():\n    return 2\n\nprint(f())\n"
    assert result.details["diff"] == " 1 def f():\n-2     return 1\n+2     return 2\n 3 \n 4 print(f())"
    assert result.details["firstChangedLine"] == 2


async def test_edit_several_blocks_against_the_original() -> None:
    ws, tools = await setup({"a.txt": "alpha\nbeta\ngamma\n"})
    edits = [{"oldText": "gamma", "newText": "GAMMA"}, {"oldText": "alpha", "newText": "ALPHA"}]
    assert text(await run(tools["edit"], path="a.txt", edits=edits)) == "Successfully replaced 2 block(s) in a.txt."
    assert ws.get("a.txt").data == "ALPHA\nbeta\nGAMMA\n"


async def test_edit_failures_are_clear() -> None:
    ws, tools = await setup({"a.txt": "x = 1\nx = 1\ny = 2\n"})
    with pytest.raises(Exception, match=r"Could not find the exact text in a.txt\. The old text must match exactly"):
        await run(tools["edit"], path="a.txt", edits=[{"oldText": "z = 3", "newText": "z = 4"}])
    with pytest.raises(Exception, match=r"Found 2 occurrences of the text in a.txt\. The text must be unique"):
        await run(tools["edit"], path="a.txt", edits=[{"oldText": "x = 1", "newText": "x = 9"}])
    with pytest.raises(Exception, match=r"Could not find edits\[1\] in a.txt"):
        await run(
            tools["edit"], path="a.txt", edits=[{"oldText": "y", "newText": "Y"}, {"oldText": "q", "newText": ""}]
        )
    with pytest.raises(Exception, match=r"edits\[0\] and edits\[1\] overlap"):
        await run(
            tools["edit"],
            path="a.txt",
            edits=[{"oldText": "y = 2", "newText": "a"}, {"oldText": "= 2", "newText": "b"}],
        )
    with pytest.raises(Exception, match="oldText must not be empty"):
        await run(tools["edit"], path="a.txt", edits=[{"oldText": "", "newText": "x"}])
    with pytest.raises(Exception, match=r"No changes made to a\.txt"):
        await run(tools["edit"], path="a.txt", edits=[{"oldText": "y = 2", "newText": "y = 2"}])
    with pytest.raises(Exception, match=r"^Could not edit file: b\.txt\. Error code: ENOENT\.$"):
        await run(tools["edit"], path="b.txt", edits=[{"oldText": "a", "newText": "b"}])
    with pytest.raises(Exception, match="edits must contain at least one replacement"):
        await run(tools["edit"], path="a.txt", edits=[])
    assert ws.get("a.txt").data == "x = 1\nx = 1\ny = 2\n"


async def test_edit_keeps_crlf_and_bom_and_matches_fuzzily_like_pi() -> None:
    ws, tools = await setup({"w.txt": "\ufefffirst\r\nsecond\r\n", "q.txt": "say \u201chi\u201d  \nend\n"})
    await run(tools["edit"], path="w.txt", edits=[{"oldText": "second", "newText": "2nd"}])
    assert ws.get("w.txt").data == "\ufefffirst\r\n2nd\r\n"
    await run(tools["edit"], path="q.txt", edits=[{"oldText": 'say "hi"', "newText": 'say "bye"'}])
    assert ws.get("q.txt").data == 'say "bye"\nend\n'


def test_edit_accepts_the_single_replacement_forms() -> None:
    assert prepare_edit_arguments({"path": "a", "oldText": "x", "newText": "y"}) == {
        "path": "a",
        "edits": [{"oldText": "x", "newText": "y"}],
    }
    assert prepare_edit_arguments({"path": "a", "old_text": "x", "new_text": "y"})["edits"] == [
        {"oldText": "x", "newText": "y"}
    ]
    assert prepare_edit_arguments({"path": "a", "edits": '[{"oldText": "1", "newText": "2"}]'})["edits"] == [
        {"oldText": "1", "newText": "2"}
    ]


# ---- ls


async def test_ls() -> None:
    _, tools = await setup({"b.txt": "", "A.md": "", "src/x.py": "", ".env": ""})
    assert text(await run(tools["ls"])) == ".env\nA.md\nb.txt\nsrc/"
    assert text(await run(tools["ls"], path="src")) == "x.py"
    result = await run(tools["ls"], path=".", limit=2)
    assert text(result) == ".env\nA.md\n\n[2 entries limit reached. Use limit=4 for more]"
    assert result.details == {"entryLimitReached": 2}
    with pytest.raises(Exception, match="Path not found: nope"):
        await run(tools["ls"], path="nope")
    with pytest.raises(Exception, match=r"Not a directory: b\.txt"):
        await run(tools["ls"], path="b.txt")


async def test_ls_of_an_empty_workspace() -> None:
    _, tools = await setup()
    assert text(await run(tools["ls"])) == "(empty directory)"


# ---- grep


async def test_grep_lines_paths_and_options() -> None:
    files = {"src/a.py": "import os\nx = 1\nX = 2\n", "src/b.js": "let x = 1;\n", "notes.md": "nothing\n"}
    _, tools = await setup(files)
    assert text(await run(tools["grep"], pattern="x = 1")) == "src/a.py:2: x = 1\nsrc/b.js:1: let x = 1;"
    assert text(await run(tools["grep"], pattern="^x", ignoreCase=True, path="src")) == "a.py:2: x = 1\na.py:3: X = 2"
    assert text(await run(tools["grep"], pattern="x", glob="*.js")) == "src/b.js:1: let x = 1;"
    assert text(await run(tools["grep"], pattern="x", glob="src/**/*.py")) == "src/a.py:2: x = 1"
    assert text(await run(tools["grep"], pattern="x = 1;", path="src/b.js")) == "b.js:1: let x = 1;"
    assert text(await run(tools["grep"], pattern="(", literal=True)) == "No matches found"
    assert text(await run(tools["grep"], pattern="zzz")) == "No matches found"
    context = text(await run(tools["grep"], pattern="x = 1", path="src/a.py", context=1))
    assert context == "a.py-1- import os\na.py:2: x = 1\na.py-3- X = 2"
    with pytest.raises(Exception, match="regex parse error"):
        await run(tools["grep"], pattern="(")
    with pytest.raises(Exception, match="Path not found: missing"):
        await run(tools["grep"], pattern="x", path="missing")


async def test_grep_limits() -> None:
    _, tools = await setup({"many.txt": "hit\n" * 10, "long.txt": "hit " + "y" * 600, "bin.dat": b"hit\x00\xff"})
    result = await run(tools["grep"], pattern="hit", path="many.txt", limit=3)
    assert text(result) == (
        "many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n\n"
        "[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    )
    assert result.details == {"matchLimitReached": 3}
    result = await run(tools["grep"], pattern="hit", path="long.txt")
    assert text(result).endswith(
        "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert "bin.dat" not in text(await run(tools["grep"], pattern="hit"))


# ---- find


async def test_find() -> None:
    _, tools = await setup({"src/a.py": "", "src/sub/b.py": "", "c.txt": "", "docs/x.md": ""})
    assert text(await run(tools["find"], pattern="*.py")) == "src/a.py\nsrc/sub/b.py"
    assert text(await run(tools["find"], pattern="src/**/*.py")) == "src/a.py\nsrc/sub/b.py"
    assert text(await run(tools["find"], pattern="sub")) == "src/sub/"
    assert text(await run(tools["find"], pattern="*.py", path="src/sub")) == "b.py"
    assert text(await run(tools["find"], pattern="*.{md,txt}")) == "c.txt\ndocs/x.md"
    assert text(await run(tools["find"], pattern="*.rs")) == "No files found matching pattern"
    limited = await run(tools["find"], pattern="*", limit=2)
    assert text(limited).endswith("[2 results limit reached. Use limit=4 for more, or refine pattern]")


# ---- abort


async def test_tools_refuse_to_start_after_abort() -> None:
    _, tools = await setup({"a.txt": "x"})
    controller = AbortController()
    controller.abort()
    execute = tools["read"].execute
    assert execute is not None
    with pytest.raises(Exception, match="Operation aborted"):
        await execute("1", {"path": "a.txt"}, controller.signal, None)


def test_long_outputs_keep_their_tail() -> None:
    from py_agent.tools._text import keep_tail

    assert keep_tail("a\nb") == "a\nb"
    out = keep_tail("\n".join(str(i) for i in range(3000)))
    assert out.startswith("[Output truncated: showing the last 2000 of 3000 lines (50.0KB limit)]\n1000\n")
    assert out.endswith("\n2999")
    wide = keep_tail("\n".join(["x" * 1000] * 100))
    assert wide.startswith("[Output truncated: showing the last 51 of 100 lines (50.0KB limit)]")


# ---- .gitignore in grep and find (ripgrep's and fd's rules) ----------------------------------

IGNORED_PROJECT: dict[str, str | bytes] = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n/root-only.txt\ndocs/*.tmp\n",
    "app.py": "needle\n",
    "debug.log": "needle\n",
    "keep.log": "needle\n",
    "build/out.py": "needle\n",
    "src/build/gen.py": "needle\n",
    "root-only.txt": "needle\n",
    "src/root-only.txt": "needle\n",
    "docs/a.tmp": "needle\n",
    "docs/deep/b.tmp": "needle\n",
    "src/.gitignore": "secret.py\n!debug.log\n",
    "src/secret.py": "needle\n",
    "src/debug.log": "needle\n",
    "lib/.ignore": "vendored/\n",
    "lib/vendored/x.py": "needle\n",
    ".git/config": "needle\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "sub/.git": "gitdir: ../.git/worktrees/sub\nneedle\n",
    ".hidden/visible.py": "needle\n",
}


async def test_grep_honours_gitignore_and_skips_git() -> None:
    _ws, tools = await setup(IGNORED_PROJECT)
    found = sorted(line.split(":")[0] for line in text(await run(tools["grep"], pattern="needle")).splitlines())
    assert found == [
        ".hidden/visible.py",  # rg --hidden: dotfiles are searched
        "app.py",
        "docs/deep/b.tmp",  # docs/*.tmp names docs/a.tmp only
        "keep.log",  # re-included by !keep.log
        "src/debug.log",  # re-included by src/.gitignore
        "src/root-only.txt",  # /root-only.txt is anchored to the root
    ]


async def test_grep_in_a_subfolder_applies_the_rules_above_it() -> None:
    _ws, tools = await setup(IGNORED_PROJECT)
    out = text(await run(tools["grep"], pattern="needle", path="src"))
    assert sorted(line.split(":")[0] for line in out.splitlines()) == ["debug.log", "root-only.txt"]
    # A file named explicitly is searched even when ignored (as ripgrep does).
    assert text(await run(tools["grep"], pattern="needle", path="debug.log")) == "debug.log:1: needle"
    # So is an ignored folder asked for by name; the rules still apply below it.
    assert text(await run(tools["grep"], pattern="needle", path="build")) == "out.py:1: needle"


async def test_find_honours_gitignore_and_skips_git() -> None:
    _ws, tools = await setup(IGNORED_PROJECT)
    out = text(await run(tools["find"], pattern="*"))
    assert out.splitlines() == [
        ".gitignore",
        ".hidden/",
        ".hidden/visible.py",
        "app.py",
        "docs/",
        "docs/deep/",
        "docs/deep/b.tmp",
        "keep.log",
        "lib/",
        "lib/.ignore",
        "src/",
        "src/.gitignore",
        "src/debug.log",
        "src/root-only.txt",
        "sub/",  # listed although all it holds is .git (fd lists folders that are not ignored)
    ]
    assert text(await run(tools["find"], pattern="*.log")).splitlines() == ["keep.log", "src/debug.log"]


async def test_grep_and_find_without_gitignore_see_everything_but_git() -> None:
    _ws, tools = await setup({"a.log": "x\n", ".git/index": "x\n", "b/c.txt": "x\n"})
    assert text(await run(tools["find"], pattern="*")).splitlines() == ["a.log", "b/", "b/c.txt"]
    assert sorted(text(await run(tools["grep"], pattern="x")).splitlines()) == ["a.log:1: x", "b/c.txt:1: x"]


# ---- safety: stale edits, refusals, write's diff, undo ---------------------------------------


async def test_edit_of_a_file_changed_since_it_was_read_is_refused_until_read_again() -> None:
    ws, tools = await setup({"a.txt": "one\ntwo\n"})
    # Never read: edit works (pi's edit needs no read first).
    await run(tools["edit"], path="a.txt", edits=[{"oldText": "one", "newText": "ONE"}])
    await run(tools["read"], path="a.txt")
    await ws.write("a.txt", "ONE\ntwo\nthree\n", mtime=ws.get("a.txt").mtime + 5, source="panel")  # type: ignore[union-attr]
    with pytest.raises(Exception, match=r"a\.txt was modified since you last read it.*Read the file again"):
        await run(tools["edit"], path="a.txt", edits=[{"oldText": "two", "newText": "TWO"}])
    with pytest.raises(Exception, match="modified since you last read it"):
        await run(tools["write"], path="a.txt", content="x")
    assert ws.get("a.txt").data == "ONE\ntwo\nthree\n"  # type: ignore[union-attr]
    await run(tools["read"], path="a.txt")
    await run(tools["edit"], path="a.txt", edits=[{"oldText": "two", "newText": "TWO"}])
    assert ws.get("a.txt").data == "ONE\nTWO\nthree\n"  # type: ignore[union-attr]


async def test_the_agents_own_changes_do_not_make_a_file_stale() -> None:
    ws, tools = await setup({"a.txt": "one\n"})
    await run(tools["read"], path="a.txt")
    await ws.write("a.txt", "two\n", mtime=ws.get("a.txt").mtime + 5, source="python")  # type: ignore[union-attr]
    await run(tools["edit"], path="a.txt", edits=[{"oldText": "two", "newText": "three"}])
    await run(tools["write"], path="a.txt", content="four\n")
    assert ws.get("a.txt").data == "four\n"  # type: ignore[union-attr]


async def test_read_and_edit_refuse_big_and_binary_files() -> None:
    from py_agent.tools.files import MAX_TEXT_FILE_BYTES

    big = "x" * (MAX_TEXT_FILE_BYTES + 1)
    _ws, tools = await setup({"big.txt": big, "blob.bin": b"\x00\x01\x02"})
    for tool in ("read", "edit"):
        params: dict[str, Any] = {"path": "big.txt"}
        if tool == "edit":
            params["edits"] = [{"oldText": "x", "newText": "y"}]
        with pytest.raises(Exception, match=r"big\.txt: it is 10\.0MB, over the 10\.0MB limit"):
            await run(tools[tool], **params)
    with pytest.raises(Exception, match=r"blob\.bin is a binary file"):
        await run(tools["read"], path="blob.bin")
    with pytest.raises(Exception, match=r"blob\.bin\. It is a binary file .*text files only"):
        await run(tools["edit"], path="blob.bin", edits=[{"oldText": "a", "newText": "b"}])


async def test_write_details_say_what_changed() -> None:
    _ws, tools = await setup({"a.txt": "one\ntwo\n"})
    created = await run(tools["write"], path="new.txt", content="hello\n")
    assert created.details == {"created": True}
    replaced = await run(tools["write"], path="a.txt", content="one\n2\n")
    assert replaced.details == {"created": False, "diff": " 1 one\n-2 two\n+2 2", "firstChangedLine": 2}
    assert text(replaced) == "Successfully wrote 6 bytes to a.txt"


async def test_undo_restores_the_previous_bytes_and_asks_when_the_file_changed_since() -> None:
    ws, tools = await setup({"a.txt": "one\r\ntwo\r\n", "bin.dat": b"\xff\x00"})
    await run(tools["edit"], path="a.txt", edits=[{"oldText": "two", "newText": "TWO"}])  # call-1
    assert ws.history.state("call-1") == "available"
    outcome = await ws.history.undo(ws, "call-1")
    assert outcome.status == "done" and ws.get("a.txt").to_bytes() == b"one\r\ntwo\r\n"  # type: ignore[union-attr]
    assert ws.history.state("call-1") == "undone"
    assert (await ws.history.undo(ws, "call-1")).message == "This change was already undone."
    assert (await ws.history.undo(ws, "call-9")).status == "none"

    assert tools["write"].execute is not None
    await tools["write"].execute("call-2", {"path": "new.txt", "content": "made"}, None, None)
    await tools["write"].execute("call-3", {"path": "bin.dat", "content": "text now"}, None, None)
    await ws.write("bin.dat", "the user's", source="panel")
    asked = await ws.history.undo(ws, "call-3")
    assert asked.status == "confirm" and "bin.dat changed after the agent's change" in asked.message
    assert ws.get("bin.dat").data == "the user's"  # type: ignore[union-attr]
    assert (await ws.history.undo(ws, "call-3", force=True)).status == "done"
    assert ws.get("bin.dat").data == b"\xff\x00"  # type: ignore[union-attr]
    assert (await ws.history.undo(ws, "call-2")).status == "done"
    assert ws.get("new.txt") is None  # it did not exist before


async def test_change_history_is_kept_in_its_store_and_cleared() -> None:
    from py_agent.tools.history import ChangeHistory, MemoryChangeStore

    store = MemoryChangeStore()
    ws = await Workspace.open(history=await ChangeHistory.open(store))
    await ws.write("a.bin", b"\x00old", source="panel")
    await ws.write("a.bin", b"\x00new", source="python", change="run-1")
    await ws.write("a.bin", b"\x00newer", source="python", change="run-1")
    again = await ChangeHistory.open(store)  # after a reload
    assert [c.before for c in again.changes("run-1")] == [b"\x00old"]
    assert (await again.undo(ws, "run-1")).status == "done" and ws.get("a.bin").data == b"\x00old"  # type: ignore[union-attr]
    await again.clear()
    assert store.records == {} and again.state("run-1") == "none"
