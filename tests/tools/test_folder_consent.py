"""Deletions and overwrites of the user's files in a folder ask first (py_agent/tools/consent.py,
Workspace.confirm_changes; docs/folders.md): who is asked when, a "no" is an error that changes
nothing, the agent's own files and `edit` are not asked about, the stored workspace never asks.
The page's dialog is replaced by a fake asker; its glue (WebApp.choose, folder_asker) is tested too."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend
from py_agent.app.workspace_tools import CONSENT_CHOICES, folder_asker
from py_agent.browser.sandbox import PythonRunner
from py_agent.core.types import AgentTool
from py_agent.tools import make_tools
from py_agent.tools.consent import ConsentAnswer, ConsentRequest
from py_agent.tools.workspace import DeclinedError, MemoryWorkspaceStore, Workspace, WorkspaceFile


class Folder(MemoryWorkspaceStore):
    """A FolderStore in a dict; ``changes`` reports what the test put in ``outside``."""

    name = "my-project"

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(WorkspaceFile(p, t, 1) for p, t in files.items())
        self.outside: list[WorkspaceFile] = []

    async def changes(self) -> tuple[list[WorkspaceFile], list[str]]:
        changed, self.outside = self.outside, []
        for file in changed:
            self.files[file.path] = file
        return changed, []


class Asker:
    def __init__(self, *answers: ConsentAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[ConsentRequest] = []

    async def __call__(self, request: ConsentRequest) -> ConsentAnswer:
        self.asked.append(request)
        return self.answers.pop(0)


async def folder_workspace(asker: Asker | None, **files: str) -> tuple[Workspace, Folder]:
    folder = Folder(files or {"README.md": "mine\n", "notes.txt": "user notes\n"})
    workspace = await Workspace.open(folder)
    workspace.consent.asker = asker
    return workspace, folder


async def run(tools: list[AgentTool], name: str, **params: Any) -> str:
    execute = next(t for t in tools if t.name == name).execute
    assert execute is not None
    result: Any = await execute("c1", params, None, None)
    return "".join(block.text for block in result.content if block.type == "text")


async def test_write_over_a_users_file_asks_and_a_no_changes_nothing() -> None:
    asker = Asker("deny", "allow")
    workspace, folder = await folder_workspace(asker)
    tools = make_tools(workspace)
    with pytest.raises(DeclinedError) as declined:
        await run(tools, "write", path="README.md", content="overwritten\n")
    assert "The user declined" in str(declined.value) and "README.md" in str(declined.value)
    assert "nothing was changed" in str(declined.value)
    assert folder.files["README.md"].data == "mine\n" and workspace.get("README.md") is not None
    assert workspace.history.state("c1") == "none"
    (request,) = asker.asked
    assert request.overwrite == ("README.md",) and request.delete == ()
    assert request.message.startswith("The agent wants to overwrite README.md in my-project")

    assert "Successfully wrote" in await run(tools, "write", path="README.md", content="overwritten\n")
    assert folder.files["README.md"].data == "overwritten\n"
    # Allowed once, it is the agent's file now: the next write does not ask.
    await run(tools, "write", path="README.md", content="again\n")
    assert len(asker.asked) == 2 and folder.files["README.md"].data == "again\n"


async def test_the_agents_own_files_and_edits_do_not_ask() -> None:
    asker = Asker()  # any question fails the test (nothing to pop)
    workspace, folder = await folder_workspace(asker)
    tools = make_tools(workspace)
    await run(tools, "write", path="new.md", content="one\n")
    await run(tools, "edit", path="new.md", edits=[{"oldText": "one", "newText": "two"}])
    await run(tools, "write", path="new.md", content="three\n")  # still its own after its edit
    await run(tools, "edit", path="notes.txt", edits=[{"oldText": "user", "newText": "the user's"}])
    assert folder.files["new.md"].data == "three\n" and folder.files["notes.txt"].data == "the user's notes\n"
    await workspace.delete("new.md", source="python")
    assert asker.asked == [] and "new.md" not in folder.files


async def test_an_edited_users_file_or_one_changed_outside_is_the_users_again() -> None:
    asker = Asker("deny", "deny")
    workspace, folder = await folder_workspace(asker)
    tools = make_tools(workspace)
    await run(tools, "edit", path="notes.txt", edits=[{"oldText": "user", "newText": "edited"}])
    with pytest.raises(DeclinedError):  # an edit of the user's file does not make it the agent's
        await run(tools, "write", path="notes.txt", content="replaced\n")
    await run(tools, "write", path="mine.txt", content="agent's\n")
    folder.outside.append(WorkspaceFile("mine.txt", "changed in an editor\n", 99))
    await workspace.refresh()  # as before every tool call in the app
    await run(tools, "read", path="mine.txt")
    with pytest.raises(DeclinedError):
        await run(tools, "write", path="mine.txt", content="replaced\n")
    assert [r.overwrite for r in asker.asked] == [("notes.txt",), ("mine.txt",)]
    assert folder.files["mine.txt"].data == "changed in an editor\n"


async def test_deleting_asks_once_for_a_folders_files_and_allow_for_the_folder_asks_no_more() -> None:
    asker = Asker("deny", "allow_folder")
    workspace, folder = await folder_workspace(asker, **{"docs/a.md": "a", "docs/b.md": "b", "c.md": "c"})
    with pytest.raises(DeclinedError):
        await workspace.delete("docs", source="python")
    assert sorted(folder.files) == ["c.md", "docs/a.md", "docs/b.md"]
    assert asker.asked[0].delete == ("docs/a.md", "docs/b.md")
    assert "delete docs/a.md and docs/b.md in my-project" in asker.asked[0].message
    assert await workspace.delete("docs", source="python")
    await workspace.write("c.md", "replaced", source="javascript")
    assert len(asker.asked) == 2 and sorted(folder.files) == ["c.md"]
    # Another folder (or the same one opened again) asks afresh.
    await workspace.use_store(Folder({"c.md": "c"}))
    asker.answers.append("deny")
    with pytest.raises(DeclinedError):
        await workspace.write("c.md", "x", source="write")


async def test_a_batch_of_calls_asks_one_question_at_a_time() -> None:
    asker = Asker("allow_folder")
    workspace, folder = await folder_workspace(asker)
    await asyncio.gather(
        workspace.write("README.md", "1", source="write"), workspace.write("notes.txt", "2", source="write")
    )
    assert len(asker.asked) == 1 and folder.files["README.md"].data == "1" and folder.files["notes.txt"].data == "2"


async def test_without_an_asker_it_is_declined_and_other_sources_never_ask() -> None:
    workspace, folder = await folder_workspace(None)
    with pytest.raises(DeclinedError):
        await workspace.write("README.md", "x", source="write")
    # The user's own actions (Files panel, uploads, undo) and edit are not asked about.
    for source in ("panel", "attachment", "undo", "edit", None):
        await workspace.write("README.md", f"by {source}", source=source)
    await workspace.delete("notes.txt", source="panel")
    assert folder.files["README.md"].data == "by None" and "notes.txt" not in folder.files


async def test_the_stored_workspace_never_asks() -> None:
    workspace = await Workspace.open(MemoryWorkspaceStore([WorkspaceFile("a.txt", "a", 1)]))
    workspace.consent.asker = Asker()
    await workspace.write("a.txt", "b", source="write")
    assert await workspace.delete("a.txt", source="python")


async def test_the_python_copy_back_asks_once_and_keeps_a_declined_file() -> None:
    asker = Asker("deny")
    workspace, folder = await folder_workspace(asker)
    runner = PythonRunner()
    changes = {
        "files": [
            {"path": "README.md", "data": b"rewritten"},
            {"path": "out.txt", "data": b"result"},
            {"path": "../outside.txt", "data": b"no"},  # refused by the write, as before
        ],
        "deletes": ["notes.txt"],
    }
    written, deleted, problems = await runner._write_back(workspace, changes, "c1")
    (request,) = asker.asked
    assert request.tool == "python" and request.overwrite == ("README.md",) and request.delete == ("notes.txt",)
    assert [f.path for f in written] == ["out.txt"] and deleted == []
    assert len(problems) == 2 and "The user declined" in problems[0] and "'..' is not allowed" in problems[1]
    assert folder.files["README.md"].data == "mine\n" and folder.files["notes.txt"].data == "user notes\n"
    assert folder.files["out.txt"].data == "result"


async def test_the_page_dialog_answers_map_to_the_consent() -> None:
    app = WebApp(MemoryBackend(), MemoryTabStore(), lambda _k, _p: None, demo_tokens_per_second=0, plugins=[])
    await app.start()
    shown: list[dict[str, Any]] = []
    app.emit = lambda kind, payload: shown.append(payload) if kind == "confirm" else None  # type: ignore[method-assign]
    ask = folder_asker(app.choose)
    assert ask is not None and folder_asker(None) is None
    request = ConsentRequest("my-project", "write", ("README.md",))
    for answer in ("allow_folder", None, "deny"):
        pending = asyncio.ensure_future(ask(request))
        await asyncio.sleep(0)
        question = shown[-1]
        assert question["message"] == request.message
        assert [c["label"] for c in question["choices"]] == [label for _v, label in CONSENT_CHOICES]
        args = {"id": question["id"], "ok": answer is not None, "choice": answer}
        assert json.loads(await app.dispatch("answer", json.dumps(args))) == {}
        assert await pending == (answer or "deny")
