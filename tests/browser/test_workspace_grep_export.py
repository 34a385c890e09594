"""grep in a worker and the workspace export, in Chromium through the chat app (one booted page):

- a session's workspace is exported with it (one trailing `py-agent/workspace` custom entry of
  the .jsonl) and imported with it: the imported session's preview lists the same files with the
  same content, and a reload keeps them;
- `grep` runs its regex in a worker: a catastrophic pattern ends at the time limit with an error
  that tells the model to simplify it while the page stays responsive, an abort ends it at once,
  the next grep works, and normal greps give exactly what CPython's grep gives. The Python ->
  JavaScript regex translation is checked against Python's `re` on a corpus, in this browser.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import SandboxPage
from web_app_helpers import App, open_app, wait_until

from py_agent.browser.grep import GREP_TIMEOUT_MS
from py_agent.tools import Workspace
from py_agent.tools.files import make_grep_tool
from py_agent.tools.grep_regex import UntranslatableRegex, to_js_regex

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)
FILES: dict[str, str | bytes] = {
    "notes/todo.txt": "Buy milk\nCall Zoë ☎\nTODO: fix the café sign\n",
    "données/日本語.csv": "name,value\nこんにちは,1\n",
    "img/dot.png": PNG,
}


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        yield app


def run_py(app: App, code: str) -> Any:
    return app.page.evaluate("async (code) => (await window.pyAgent.ready).pyodide.runPythonAsync(code)", code)


def workspace_files(app: App, session_id: str) -> dict[str, tuple[str, str]]:
    """The session's files as the page's Python has them: path -> (kind, text or base64)."""
    raw = run_py(
        app,
        f"""
import base64, json
from py_agent.browser.workspace import open_page_workspace as open_workspace
_w = await open_workspace({session_id!r})
json.dumps({{f.path: ["text", f.data] if isinstance(f.data, str) else ["bytes", base64.b64encode(f.data).decode()] for f in _w.files()}})
""",
    )
    return {path: (kind, value) for path, (kind, value) in json.loads(raw).items()}


def expected_files() -> dict[str, tuple[str, str]]:
    return {
        path: ("text", data) if isinstance(data, str) else ("bytes", base64.b64encode(data).decode())
        for path, data in FILES.items()
    }


def show_workspace_panel(app: App, select: str) -> list[str]:
    """Open the workspace panel on a file (what a file chip of a tool card does); the listed files."""
    page = app.page

    def opened() -> bool:
        app.py("panel_message", panel="workspace", data={"type": "open", "path": select})
        return page.locator("#side-panel").is_visible()

    wait_until(opened, timeout=30)
    wait_until(lambda: page.locator("#side-panel .pa-file-name").count() == len(FILES), timeout=30)
    return page.locator("#side-panel .pa-file-name").all_inner_texts()


def test_the_workspace_is_exported_and_imported_with_its_session(app: App, tmp_path: Path) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("demo", "Demo")
    app.type_and_enter("Hello there")
    page.locator("#transcript .msg.assistant:not(.streaming)").first.wait_for()
    app.wait_idle()
    session_id = app.current_session_id()
    writes = "\n".join(
        f"await _w.write({path!r}, {data!r}, mtime={1_700_000_000_000 + i})"
        for i, (path, data) in enumerate(FILES.items())
    )
    run_py(
        app,
        f"from py_agent.browser.workspace import open_page_workspace as open_workspace\n_w = await open_workspace({session_id!r})\n{writes}\n",
    )

    page.locator("#session-menu-btn").click()
    with page.expect_download() as download_info:
        page.locator("#session-menu [role=menuitem]", has_text="Export").click()
    path = tmp_path / "with-workspace.jsonl"
    download_info.value.save_as(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    stored = sorted((r for r in app.idb_dump()["entries"] if r["sessionId"] == session_id), key=lambda r: r["seq"])
    assert lines[1:-1] == [r["line"] for r in stored]  # pi's format, line for line
    entry = json.loads(lines[-1])
    assert entry["type"] == "custom" and entry["customType"] == "py-agent/workspace"
    assert entry["parentId"] == json.loads(stored[-1]["line"])["id"]
    assert sorted(f["path"] for f in entry["data"]["files"]) == sorted(FILES)

    # Imported (as a copy: the original is still there), the workspace comes with it.
    page.locator("#import-file").set_input_files(str(path))
    wait_until(lambda: app.current_session_id() != session_id, timeout=30)
    copy_id = app.current_session_id()
    page.locator("#transcript .msg.assistant").first.wait_for()
    assert show_workspace_panel(app, "notes/todo.txt") == sorted(FILES)
    wait_until(lambda: "Call Zoë ☎" in (page.locator("#side-panel pre.pa-text").text_content() or ""), timeout=30)
    assert workspace_files(app, copy_id) == expected_files()
    copy_lines = app.py("export_session")["text"].splitlines()
    assert copy_lines[1:-1] == lines[1:-1] and json.loads(copy_lines[-1])["data"] == entry["data"]
    assert [json.loads(r["line"]) for r in app.idb_dump()["entries"] if r["sessionId"] == copy_id] == [
        json.loads(line) for line in lines[1:-1]
    ]  # the workspace entry itself is not stored

    # A reload (a fresh interpreter, files read from IndexedDB) keeps them.
    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    assert app.current_session_id() == copy_id
    # The session menu's "Files…" opens the panel (a chat may have no tool card to click).
    page.locator("#session-menu-btn").click()
    page.locator("#session-menu [role=menuitem]", has_text="Files").click()
    page.locator("#side-panel").wait_for(state="visible", timeout=30_000)
    wait_until(lambda: page.locator("#side-panel .pa-file-name").count() == len(FILES), timeout=30)
    assert page.locator("#side-panel .pa-file-name").all_inner_texts() == sorted(FILES)
    assert workspace_files(app, copy_id) == expected_files()
    assert not app.page_errors, app.page_errors


# ---- grep ------------------------------------------------------------------------------------

GREP_FILES: dict[str, str | bytes] = {
    "src/app.py": "import os\n\ndef main():\n    # TODO: handle errors\n    return os.getcwd()\n\ndef helper(x):\n    return x * 2\n",
    "src/util.js": "export function foo(a) {\r\n  return a.b;\r\n}\r\n// todo: tests\r\n",
    "docs/été.md": "# Été\n\nCafé, naïve, Zoë.\nfoo bar foo_bar\n٣ digits\n",
    "data/blob.bin": b"\x00\x01def main\x00",
    "slow.txt": "start\n" + "a" * 100 + "b\nend\n",
}
NORMAL_GREPS: list[dict[str, Any]] = [
    {"pattern": r"def \w+\("},
    {"pattern": "(?i)todo", "context": 1},
    {"pattern": r"\bfoo\b"},
    {"pattern": "a.b", "literal": True},
    {"pattern": r"^\s*return", "glob": "*.py"},
    {"pattern": r"caf(?P<e>é)|(?P<x>x) \* 2"},
    {"pattern": r"\d", "path": "docs"},
    {"pattern": r"[^\x00-\x7f]+", "limit": 2},
    {"pattern": "nothing like this"},
]
SETUP_GREP = """
import json
from py_agent.ai.abort import AbortController
from py_agent.tools import Workspace
from py_agent.app.workspace_store import set_workspace_platform
from py_agent.app.workspace_tools import make_tools
from py_agent.browser.workspace import page_workspace_platform
set_workspace_platform(page_workspace_platform())

_gws = await Workspace.open()
for _path, _data in json.loads(FILES_JSON).items():
    await _gws.write(_path, _data if isinstance(_data, str) else bytes.fromhex(_data[0]))
_grep = next(t for t in make_tools(_gws) if t.name == "grep")
_grep_controllers = {}

async def _grep_run(params_json, run_id):
    controller = AbortController()
    _grep_controllers[run_id] = controller
    try:
        result = await _grep.execute("g", json.loads(params_json), controller.signal, None)
        return json.dumps({"ok": True, "text": result.content[0].text, "details": result.details})
    except Exception as error:
        return json.dumps({"ok": False, "text": str(error)})
    finally:
        _grep_controllers.pop(run_id, None)
"""


@pytest.fixture(scope="module")
def grep_page(app: App) -> SandboxPage:
    files = {path: data if isinstance(data, str) else [data.hex()] for path, data in GREP_FILES.items()}
    run_py(app, SETUP_GREP.replace("FILES_JSON", repr(json.dumps(files))))
    return SandboxPage(app.page, app.base)


def start_grep(sandbox: SandboxPage, params: dict[str, Any], run_id: str = "g") -> None:
    sandbox.page.evaluate(
        """async ([params, id]) => {
            const { pyodide } = await window.pyAgent.ready;
            window.__greps = window.__greps || {};
            window.__greps[id] = pyodide.globals.get("_grep_run")(params, id);
        }""",
        [json.dumps(params), run_id],
    )


def finish_grep(sandbox: SandboxPage, run_id: str = "g") -> dict[str, Any]:
    result: dict[str, Any] = json.loads(sandbox.page.evaluate("async (id) => await window.__greps[id]", run_id))
    return result


def grep(sandbox: SandboxPage, **params: Any) -> dict[str, Any]:
    start_grep(sandbox, params)
    return finish_grep(sandbox)


def cpython_grep(params: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        workspace = await Workspace.open()
        for path, data in GREP_FILES.items():
            await workspace.write(path, data)
        try:
            result = await make_grep_tool(workspace).execute("g", params, None, None)  # type: ignore[misc]
            return {"ok": True, "text": result.content[0].text, "details": result.details}
        except Exception as error:
            return {"ok": False, "text": str(error)}

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # not in Playwright's thread (its loop)
        return pool.submit(asyncio.run, run()).result()


def catastrophic_grep_is_responsive(sandbox: SandboxPage) -> tuple[dict[str, Any], float, float]:
    since = sandbox.start_responsiveness()
    result = grep(sandbox, pattern="(a+)+$")
    until = sandbox.now()
    # The search itself (its first 300 ms, when the files are sent, and the end left out).
    task, gap, fps = sandbox.stop_responsiveness(since + 300, until - 200)
    print(
        f"catastrophic grep: {until - since:.0f} ms; longest task {task:.0f} ms, frame gap {gap:.0f} ms, {fps:.0f} frames/s"
    )
    return result, task, gap


def test_a_catastrophic_pattern_times_out_while_the_page_stays_responsive(grep_page: SandboxPage) -> None:
    assert grep(grep_page, pattern="end")["text"] == "slow.txt:3: end"  # warm: the worker script is loaded
    result, task, gap = catastrophic_grep_is_responsive(grep_page)
    if task > 100 or gap >= 1000:  # a busy machine can stretch one ordinary task: measure once more
        result, task, gap = catastrophic_grep_is_responsive(grep_page)
    assert not result["ok"], result
    assert result["text"].startswith("grep stopped: searching 4 files with this pattern took longer than 5 s")
    assert "too slow" in result["text"] and "Simplify the pattern" in result["text"]
    assert GREP_TIMEOUT_MS == 5000
    assert task <= 100, f"a main-thread task took {task:.0f} ms during the search"
    assert gap < 1000, f"no animation frame for {gap:.0f} ms during the search"
    # The next grep works.
    assert grep(grep_page, pattern=r"^a+b$")["text"] == "slow.txt:2: " + "a" * 100 + "b"


def test_an_aborted_grep_ends_at_once_and_the_next_one_works(grep_page: SandboxPage) -> None:
    start_grep(grep_page, {"pattern": "(a|aa)+$"}, "slow")
    grep_page.page.wait_for_timeout(300)
    grep_page.py("_grep_controllers['slow'].abort()")
    assert finish_grep(grep_page, "slow") == {"ok": False, "text": "Operation aborted"}
    assert grep(grep_page, pattern="helper")["text"] == "src/app.py:7: def helper(x):"


def test_normal_greps_give_what_cpython_gives(grep_page: SandboxPage) -> None:
    for params in NORMAL_GREPS:
        assert grep(grep_page, **params) == cpython_grep(params), params
    # The same clear errors: a bad pattern (Python compiles it first), and one JavaScript cannot run.
    bad = grep(grep_page, pattern="(unclosed")
    assert bad == cpython_grep({"pattern": "(unclosed"})
    assert bad["text"] == "regex parse error:\n    (unclosed\n    ^\nerror: unclosed group"
    conditional = grep(grep_page, pattern="(a)?(?(1)b|c)")
    assert not conditional["ok"]
    assert conditional["text"].startswith("grep cannot run this pattern in the browser: it uses a conditional group")


# fmt: off
PATTERNS = [
    r"a", r"^a", r"c$", r"\Aabc\Z", r"(?P<w>ab)(?P=w)", r"(?i)quick", r"(?i:QUICK) Brown", r"(?i)(?-i:Q)uick",
    r"\d+", r"\w+", r"^\w+$", r"\s", r"\S+\s\S+", r"\bbar\b", r"\Bar", r"[^\W\d]+", r"[\d\s]", r"(?a)\w+$",
    r"(?a)\d", r"x{,2}=", r"\N{EM DASH}|é", r"[]a]", r"[^]a]", r"a.c", r"(?s)x.y", r"x.y", r"(?x) a  b # comment",
    r"(?>a+)b", r"a++b", r"a*+a", r"(a|ab)(c|bcd)", r"(?<=a)b", r"(?<!a)b", r"a(?=b)", r"a(?!b)", r"[a-c]{2,}",
    r"\.\*", r"\[\]\{\}", r"\\\^\$", r"(?i)k", r"(?i)s", r"😀", r"[😀-😂]", r"(?:ab)+$", r"a{2}1", r"(?m)^ab",
    r"(?m)c$", r"\x41|\u00e9|\U0001F600", r"(?i)[A-C]+", r"(?i)é", r"a|", r"()", r"(?!)", r"(a)\1", r"(?i)(a)\1",
    r"\w+@\w+\.com", r"[\w.-]+", r"(\d+)-(\d+)", r"(?:(?:a|b)c)+d", r"[^\s]", r"[\S]", r"[\W]+", r"\W\w",
]
LINES = [
    "", "a", "abc", "ABC", "foo bar", "foo_bar9", "x=1;y=22", "été 2024", "naïve café", "日本語テキスト",
    "٣٤ arabic digits", "tab\there", "nbsp\xa0here", "\x1cfs", "emoji 😀 ok", "a.b*c+d?", "[]{}()|\\^$", "aaaaab",
    "abab", "The Quick Brown", "The quick Brown", "\u017f long s", "\u212a kelvin", "x\u2028y", "x\ry", "12-345", "me@host.com",
    "acbcd", "aa1", "e\u0301 combining", "\ufeffbom",
]
# fmt: on


def test_translated_patterns_find_the_same_lines_as_python(grep_page: SandboxPage) -> None:
    cases = []
    for pattern in PATTERNS:
        compiled = re.compile(pattern)
        js = to_js_regex(compiled)
        cases.append(
            {
                "pattern": pattern,
                "source": js.source,
                "flags": js.flags,
                "expect": [bool(compiled.search(line)) for line in LINES],
            }
        )
    with pytest.raises(UntranslatableRegex):
        to_js_regex(re.compile(r"(a)?(?(1)b|c)"))
    problems = grep_page.page.evaluate(
        """([cases, lines]) => {
            const problems = [];
            for (const c of cases) {
                let regex;
                try { regex = new RegExp(c.source, c.flags); } catch (error) { problems.push([c.pattern, c.source, String(error)]); continue; }
                const wrong = lines.filter((line, i) => regex.test(line) !== c.expect[i]);
                if (wrong.length) problems.push([c.pattern, c.source, wrong]);
            }
            return problems;
        }""",
        [cases, LINES],
    )
    assert problems == []
