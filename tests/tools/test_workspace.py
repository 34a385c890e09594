"""The workspace model: files in memory, written through to a store, change listeners, limits,
export and import."""

# pyodide-runner: no-fs
from __future__ import annotations

import pytest

from py_agent.tools.workspace import (
    MemoryWorkspaceStore,
    Workspace,
    WorkspaceChange,
    WorkspaceError,
    WorkspaceFile,
    WorkspaceLimits,
)


async def test_write_read_and_store_write_through() -> None:
    store = MemoryWorkspaceStore()
    ws = await Workspace.open(store)
    file = await ws.write("notes/a.txt", "hello")
    assert file.path == "notes/a.txt" and file.data == "hello" and file.size == 5
    assert store.files["notes/a.txt"] is file
    assert ws.get("./notes//a.txt") is file
    assert ws.get("notes/missing.txt") is None
    await ws.write("img.bin", b"\x00\x01\xff")
    assert store.files["img.bin"].data == b"\x00\x01\xff"
    assert ws.paths() == ["img.bin", "notes/a.txt"]


async def test_reopening_from_the_store_restores_everything() -> None:
    store = MemoryWorkspaceStore()
    ws = await Workspace.open(store)
    await ws.write("a.txt", "one")
    await ws.write("d/b.bin", b"\x89PNG")
    again = await Workspace.open(store)
    assert [(f.path, f.data) for f in again.files()] == [("a.txt", "one"), ("d/b.bin", b"\x89PNG")]


async def test_folders_are_implicit() -> None:
    ws = await Workspace.open()
    await ws.write("src/app/main.py", "print(1)")
    await ws.write("src/README.md", "# x")
    assert ws.is_dir("src") and ws.is_dir("src/app") and ws.is_dir(".")
    assert not ws.is_dir("src/README.md") and ws.is_file("src/README.md")
    assert sorted(ws.list_dir("src")) == [("README.md", False), ("app", True)]
    assert sorted(ws.list_dir("")) == [("src", True)]
    assert [f.path for f in ws.files("src/app")] == ["src/app/main.py"]


async def test_file_and_folder_cannot_share_a_name() -> None:
    ws = await Workspace.open()
    await ws.write("a", "file")
    with pytest.raises(WorkspaceError, match="a is a file, not a folder"):
        await ws.write("a/b.txt", "x")
    await ws.write("d/e.txt", "x")
    with pytest.raises(WorkspaceError, match="it is a folder"):
        await ws.write("d", "x")


async def test_delete_file_and_folder() -> None:
    ws = await Workspace.open()
    await ws.write("d/1.txt", "1")
    await ws.write("d/sub/2.txt", "2")
    await ws.write("keep.txt", "k")
    assert await ws.delete("d/1.txt")
    assert not await ws.delete("d/1.txt")
    assert await ws.delete("d")
    assert ws.paths() == ["keep.txt"]


async def test_listeners_hear_every_change_and_broken_ones_do_not_break_writes() -> None:
    ws = await Workspace.open()
    seen: list[WorkspaceChange] = []
    remove = ws.subscribe(seen.append)

    def broken(_change: WorkspaceChange) -> None:
        raise RuntimeError("ui bug")

    ws.subscribe(broken)
    await ws.write("a.txt", "x", source="write")
    await ws.delete("a.txt", source="python")
    await ws.clear()
    assert [(c.kind, c.path, c.source) for c in seen] == [
        ("write", "a.txt", "write"),
        ("delete", "a.txt", "python"),
        ("reset", None, None),
    ]
    remove()
    await ws.write("b.txt", "y")
    assert len(seen) == 3


class FailingStore(MemoryWorkspaceStore):
    async def put(self, file: WorkspaceFile) -> None:
        raise RuntimeError("QuotaExceededError: the quota has been exceeded")


async def test_a_failed_save_changes_nothing_and_says_why() -> None:
    ws = await Workspace.open(FailingStore())
    with pytest.raises(WorkspaceError, match=r"Could not save a.txt: QuotaExceededError"):
        await ws.write("a.txt", "x")
    assert ws.get("a.txt") is None


async def test_limits() -> None:
    ws = await Workspace.open(limits=WorkspaceLimits(max_file_bytes=10, max_total_bytes=15, max_files=2))
    with pytest.raises(WorkspaceError, match="limit of 10 bytes per file"):
        await ws.write("big.txt", "x" * 11)
    await ws.write("a.txt", "x" * 10)
    with pytest.raises(WorkspaceError, match="over its limit of 15 bytes"):
        await ws.write("b.txt", "x" * 6)
    await ws.write("a.txt", "x" * 2)  # replacing counts the new size only
    await ws.write("b.txt", "x" * 6)
    with pytest.raises(WorkspaceError, match="already holds 2 files"):
        await ws.write("c.txt", "x")


async def test_text_and_binary() -> None:
    assert WorkspaceFile("a", b"caf\xc3\xa9", 0).text() == "café"
    assert WorkspaceFile("a", b"\xff\xfe", 0).text() is None
    assert WorkspaceFile("a", b"a\x00b", 0).text() is None
    assert WorkspaceFile("a", "é", 0).size == 2


async def test_export_import_round_trip() -> None:
    ws = await Workspace.open()
    await ws.write("a.txt", "text ✓", mtime=1000)
    await ws.write("b/c.bin", bytes(range(256)), mtime=2000)
    exported = ws.export_json()
    assert exported["version"] == 1
    assert exported["files"][0] == {"path": "a.txt", "encoding": "utf8", "data": "text ✓", "mtime": 1000}
    assert exported["files"][1]["encoding"] == "base64"
    other = await Workspace.open()
    await other.write("old.txt", "gone after import")
    assert await other.import_json(exported) == 2
    assert [(f.path, f.data, f.mtime) for f in other.files()] == [
        ("a.txt", "text ✓", 1000),
        ("b/c.bin", bytes(range(256)), 2000),
    ]


async def test_a_bad_import_changes_nothing() -> None:
    ws = await Workspace.open()
    await ws.write("keep.txt", "k")
    bad_documents = [
        {"files": [{"path": "../escape.txt", "data": "x"}]},
        {"files": [{"path": "ok.txt", "data": "x"}, {"path": "b", "encoding": "base64", "data": "!!"}]},
        {"files": [{"path": "x", "data": "1"}, {"path": "x/y", "data": "2"}]},
        {"version": 99, "files": []},
        {"nope": []},
    ]
    for document in bad_documents:
        with pytest.raises(WorkspaceError):
            await ws.import_json(document)
        assert ws.paths() == ["keep.txt"]
