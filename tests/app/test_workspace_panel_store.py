"""What the Files panel does to a workspace (py_agent/app/workspace_store.py): uploads keep text as
text and anything else as bytes, exactly; new file and rename refuse a taken name; a failed change
says why in a sentence for the user and leaves every file as it was."""

from __future__ import annotations

import pytest

from py_agent.app.workspace_store import PANEL_SOURCE, add_file, create_file, delete_file, rename_file, user_error
from py_agent.tools.workspace import MemoryWorkspaceStore, Workspace, WorkspaceChange, WorkspaceError, WorkspaceFile


class FullStore(MemoryWorkspaceStore):
    """A store whose browser storage is full."""

    async def put(self, file: WorkspaceFile) -> None:
        raise RuntimeError("The browser's storage is full (quota exceeded): delete files or sessions to make room")


async def test_uploads_keep_text_as_text_and_the_rest_as_exact_bytes() -> None:
    workspace = await Workspace.open()
    changes: list[WorkspaceChange] = []
    workspace.subscribe(changes.append)
    text = "\ufeffname,value\r\nä,1\r\n".encode()
    binary = bytes(range(256))
    assert await add_file(workspace, "data/table.csv", text) == "data/table.csv"
    assert await add_file(workspace, "/workspace/raw.bin", binary) == "raw.bin"
    assert workspace.get("data/table.csv").data == text.decode()  # type: ignore[union-attr]
    assert workspace.get("data/table.csv").to_bytes() == text  # type: ignore[union-attr]
    assert workspace.get("raw.bin").data == binary  # type: ignore[union-attr]
    assert {change.source for change in changes} == {PANEL_SOURCE}
    with pytest.raises(WorkspaceError, match=r"\.\."):
        await add_file(workspace, "../escape.txt", b"x")


async def test_new_file_and_rename_refuse_taken_names_and_rename_moves_the_file() -> None:
    workspace = await Workspace.open()
    await add_file(workspace, "a.txt", b"alpha")
    await add_file(workspace, "docs/b.md", b"beta")
    assert await create_file(workspace, "notes/new.md") == "notes/new.md"
    assert workspace.get("notes/new.md").data == ""  # type: ignore[union-attr]
    with pytest.raises(WorkspaceError, match=r"a\.txt already exists: pick another name"):
        await create_file(workspace, "a.txt")
    with pytest.raises(WorkspaceError, match="docs already exists"):
        await rename_file(workspace, "a.txt", "docs")
    mtime = workspace.get("a.txt").mtime  # type: ignore[union-attr]
    assert await rename_file(workspace, "a.txt", "archive/a.txt") == "archive/a.txt"
    assert workspace.paths() == ["archive/a.txt", "docs/b.md", "notes/new.md"]
    assert workspace.get("archive/a.txt").data == "alpha" and workspace.get("archive/a.txt").mtime == mtime  # type: ignore[union-attr]
    with pytest.raises(WorkspaceError, match=r"a\.txt no longer exists"):
        await rename_file(workspace, "a.txt", "c.txt")
    assert await delete_file(workspace, "docs") is True
    assert await delete_file(workspace, "docs") is False
    assert workspace.paths() == ["archive/a.txt", "notes/new.md"]


async def test_a_full_storage_is_a_clear_message_and_nothing_is_lost() -> None:
    workspace = await Workspace.open(MemoryWorkspaceStore([WorkspaceFile("kept.txt", "kept", 1)]))
    workspace.store = FullStore(dict(workspace.store.files).values())  # type: ignore[attr-defined]
    with pytest.raises(WorkspaceError) as raised:
        await add_file(workspace, "big.csv", b"a,b\n")
    assert str(raised.value) == (
        "big.csv was not saved: this browser's storage for the page is full. "
        "Delete files or old chats to make room, then try again."
    )
    with pytest.raises(WorkspaceError, match=r"kept-renamed\.txt was not saved"):
        await rename_file(workspace, "kept.txt", "kept-renamed.txt")
    assert workspace.paths() == ["kept.txt"] and workspace.get("kept.txt").data == "kept"  # type: ignore[union-attr]
    assert user_error(WorkspaceError("Cannot write x: it is a folder")) == "Cannot write x: it is a folder"
