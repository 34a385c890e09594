"""A session's workspace as a folder (py_agent.app.workspace_store open_folder/close_folder, the
FolderStore protocol), in CPython with a folder in a dict: the tools built before the folder was
opened work on it, what changes there between two tool calls is what the next call sees, writes
reach the folder and the session's copy, the export carries only the copy, and closing or
deleting the session never touches the folder's files. (The page's folder: tests/browser/test_folder.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.app import workspace_store, workspace_tools
from py_agent.app.workspace_store import (
    WorkspacePlatform,
    close_folder,
    delete_workspace,
    open_folder,
    open_workspace,
    session_workspace_attachment,
    set_workspace_platform,
    workspace_platform,
)
from py_agent.core.types import AgentTool
from py_agent.tools import Workspace
from py_agent.tools.workspace import FolderStore, MemoryWorkspaceStore, WorkspaceFile


class DictFolder:
    """A FolderStore over ``disk`` (path -> (text, mtime)), which the test edits as an editor would."""

    def __init__(self, disk: dict[str, tuple[str, int]], copy: MemoryWorkspaceStore) -> None:
        self.name = "my-project"
        self.disk = disk
        self.copy = copy
        self.seen: dict[str, int] = {}
        self.looks = 0

    async def load_all(self) -> list[WorkspaceFile]:
        self.seen = {}
        return (await self.changes())[0]

    async def changes(self) -> tuple[list[WorkspaceFile], list[str]]:
        self.looks += 1
        await asyncio.sleep(0)  # a real folder answers later
        changed = [WorkspaceFile(p, t, m) for p, (t, m) in self.disk.items() if self.seen.get(p) != m]
        gone = [p for p in self.seen if p not in self.disk]
        self.seen = {p: m for p, (_t, m) in self.disk.items()}
        return changed, gone

    async def put(self, file: WorkspaceFile) -> None:
        assert isinstance(file.data, str)
        self.disk[file.path] = (file.data, file.mtime)
        self.seen[file.path] = file.mtime
        await self.copy.put(file)

    async def delete(self, path: str) -> None:
        self.disk.pop(path, None)
        self.seen.pop(path, None)
        await self.copy.delete(path)

    async def clear(self) -> None:
        await self.copy.clear()


COPIES: dict[str, MemoryWorkspaceStore] = {}


@pytest.fixture(autouse=True)
def platform() -> Iterator[None]:
    before = workspace_platform()
    workspace_tools.workspace_plugin(
        WorkspacePlatform(open_store=lambda sid: COPIES.setdefault(sid, MemoryWorkspaceStore()), persistent=True)
    )
    try:
        yield
    finally:
        set_workspace_platform(before)
        workspace_store._open.clear()
        COPIES.clear()


def tool(tools: list[AgentTool], name: str) -> AgentTool:
    return next(t for t in tools if t.name == name)


async def call(tools: list[AgentTool], name: str, **params: Any) -> str:
    execute = tool(tools, name).execute
    assert execute is not None
    result: Any = await execute("c1", params, None, None)
    return "".join(block.text for block in result.content if block.type == "text")


async def test_the_tools_work_on_the_folder_and_see_outside_changes() -> None:
    stored = await open_workspace("s1")
    await stored.write("stored.txt", "kept in the browser")
    tools = workspace_tools.make_tools(stored)  # built before the folder is opened
    disk = {"README.md": ("hello\n", 1), "src/app.py": ("print(1)\n", 1)}
    folder = DictFolder(disk, COPIES["s1"])
    assert isinstance(folder, FolderStore)

    workspace = await open_folder("s1", folder)
    assert workspace is stored and workspace.folder is folder
    assert workspace.paths() == ["README.md", "src/app.py"]
    assert "hello" in await call(tools, "read", path="README.md")

    # An editor saves the file and adds one: the next calls see both.
    disk["README.md"] = ("changed outside\n", 2)
    disk["notes.md"] = ("new\n", 2)
    assert "changed outside" in await call(tools, "read", path="README.md")
    assert "notes.md" in await call(tools, "find", pattern="*.md")
    assert workspace.get("README.md") == WorkspaceFile("README.md", "changed outside\n", 2)  # the folder's mtime
    del disk["notes.md"]
    assert "notes.md" not in await call(tools, "ls", path="")

    # The agent's write reaches the folder and the session's copy; the export carries the copy only.
    await call(tools, "write", path="out/result.txt", content="42\n")
    assert disk["out/result.txt"][0] == "42\n"
    exported = await session_workspace_attachment("s1")
    assert exported is not None
    assert sorted(f["path"] for f in exported["files"]) == ["out/result.txt", "stored.txt"]

    # Closed: back to the stored files (with what was written), the folder left as it was.
    await close_folder("s1")
    assert workspace.folder is None
    assert workspace.paths() == ["out/result.txt", "stored.txt"]
    assert sorted(disk) == ["README.md", "out/result.txt", "src/app.py"]


async def test_deleting_the_session_keeps_the_folders_files() -> None:
    disk = {"a.txt": ("a", 1)}
    await open_workspace("s2")
    workspace = await open_folder("s2", DictFolder(disk, COPIES["s2"]))
    await workspace.write("b.txt", "b")
    await delete_workspace("s2")
    assert sorted(disk) == ["a.txt", "b.txt"]
    assert COPIES["s2"].files == {}


async def test_a_stored_workspace_does_not_refresh() -> None:
    workspace = await Workspace.open()
    await workspace.write("a.txt", "a")
    await workspace.refresh()
    assert workspace.folder is None and workspace.paths() == ["a.txt"]


async def test_a_batch_of_tool_calls_shares_one_look_at_the_folder() -> None:
    disk = {"a.txt": ("a", 1)}
    await open_workspace("s3")
    folder = DictFolder(disk, COPIES["s3"])
    workspace = await open_folder("s3", folder)
    tools = workspace_tools.make_tools(workspace)
    looks = folder.looks
    disk["a.txt"] = ("changed", 2)
    texts = await asyncio.gather(*(call(tools, "read", path="a.txt") for _ in range(4)))
    assert folder.looks == looks + 1
    assert all("changed" in text for text in texts)
    await call(tools, "read", path="a.txt")  # the next call looks again
    assert folder.looks == looks + 2
