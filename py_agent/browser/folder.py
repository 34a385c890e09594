"""A folder on the user's disk as a session's workspace (Chromium's File System Access API).

:class:`FolderWorkspaceStore` is a :class:`~py_agent.tools.workspace.FolderStore` over
``web/sandbox/folder.js``: it reads the folder's tree through its ``FileSystemDirectoryHandle``
(``.git/`` and ``node_modules/`` are not read, see docs/folders.md), writes and deletes through
it, and tells :meth:`~py_agent.tools.workspace.Workspace.refresh` what changed outside (a file's
size or ``lastModified`` differ from the last look). What is written here is also kept in the
session's stored workspace (IndexedDB): the files the agent touched, which the session exports
and falls back to when the folder is closed or gone.

The page (``web/files/folder-bar.js``) calls :func:`open_folder`, :func:`close_folder` and
:func:`refresh_folder`; each answers JSON (``{"error": ...}`` with a sentence on failure).
"""

from __future__ import annotations

import json
from typing import Any

from ..app import workspace_store
from ..app.workspace_store import stored_data
from ..tools.workspace import WorkspaceError, WorkspaceFile, WorkspaceLimits, WorkspaceStore
from .sandbox import ffi, js_module, load_sandbox_api
from .workspace import IndexedDBWorkspaceStore

__all__ = ["FolderWorkspaceStore", "close_folder", "open_folder", "refresh_folder"]


class FolderWorkspaceStore:
    """One session's workspace in a folder the user picked (``handle``)."""

    def __init__(self, session_id: str, handle: Any, copy: WorkspaceStore, limits: WorkspaceLimits) -> None:
        self.session_id = session_id
        self.handle = handle
        self.name = str(handle.name)
        self.copy = copy
        self.limits = limits
        self.skipped: list[str] = []
        """Folders not read (``.git``, ``node_modules``), for the user."""
        self.capped = 0
        """Files not read: past the file count or over the size limit."""
        self._known: dict[str, tuple[int, int]] = {}

    async def _api(self) -> Any:
        return (await load_sandbox_api()).folder

    async def load_all(self) -> list[WorkspaceFile]:
        self._known = {}
        files, _gone = await self.changes()
        return files

    async def changes(self) -> tuple[list[WorkspaceFile], list[str]]:
        to_js, Object = ffi().to_js, js_module().Object
        known = to_js({path: list(state) for path, state in self._known.items()}, dict_converter=Object.fromEntries)
        options = to_js(
            {
                "maxFiles": self.limits.max_files,
                "maxFileBytes": self.limits.max_file_bytes,
                "maxTotalBytes": self.limits.max_total_bytes,
            },
            dict_converter=Object.fromEntries,
        )
        try:
            result = await (await self._api()).scan(self.handle, known, options)
        except Exception as error:
            raise WorkspaceError(
                f"The folder {self.name} could not be read ({error}): it may have been moved or deleted. "
                "Close it, or open it again from the Files panel."
            ) from error
        files = []
        for item in result.changed:
            path, size, mtime = str(item.path), int(item.size), int(item.mtime)
            self._known[path] = (size, mtime)
            files.append(WorkspaceFile(path, stored_data(bytes(item.data.to_bytes())), mtime))
        gone = [str(path) for path in result.gone]
        for path in gone:
            self._known.pop(path, None)
        self.skipped = [str(path) for path in result.skipped]
        self.capped = int(result.capped)
        return files, gone

    async def put(self, file: WorkspaceFile) -> None:
        if ".git" in file.path.split("/")[:-1]:
            # A repository's insides (hooks run on the user's machine) are not the agent's to write.
            raise WorkspaceError(f"{file.path} is inside a .git folder, which is not written from here")
        replace = file.path in self._known
        state = await (await self._api()).write(self.handle, file.path, ffi().to_js(file.to_bytes()), replace)
        self._known[file.path] = (int(state[0]), int(state[1]))
        await self.copy.put(file)

    async def delete(self, path: str) -> None:
        await (await self._api()).remove(self.handle, path)
        self._known.pop(path, None)
        await self.copy.delete(path)

    async def clear(self) -> None:
        """Forgets the session's copy and its folder; the folder's files stay."""
        await self.copy.clear()
        await (await self._api()).forget(self.session_id)


async def open_folder(session_id: str, handle: Any) -> str:
    """The session's workspace becomes the folder (permission already granted):
    ``{name, skipped, capped}`` or ``{error}``."""
    workspace = await workspace_store.open_workspace(session_id)
    store = FolderWorkspaceStore(session_id, handle, IndexedDBWorkspaceStore(session_id), workspace.limits)
    try:
        await workspace_store.open_folder(session_id, store)
    except Exception as error:  # the store's own sentence (WorkspaceError), or the page's error
        await workspace_store.close_folder(session_id)
        return json.dumps({"error": str(error)})
    return json.dumps({"name": store.name, "skipped": store.skipped, "capped": store.capped})


async def close_folder(session_id: str) -> None:
    """Back to the session's stored workspace."""
    await workspace_store.close_folder(session_id)


async def refresh_folder(session_id: str) -> None:
    """Take in the folder's outside changes now (the page came back to the front)."""
    await (await workspace_store.open_workspace(session_id)).refresh()
