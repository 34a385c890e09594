"""A session's workspace in the page: IndexedDB storage, zip export and the preview's data.

- :class:`IndexedDBWorkspaceStore`: a :class:`~py_agent.tools.workspace.WorkspaceStore` over
  ``web/sandbox/workspace-db.js`` (database ``py-agent-workspaces``, keyed by session id), so a
  session's files are kept with it across reloads.
- :func:`workspace_zip`: the whole workspace as a zip (Python's ``zipfile``).
- :func:`export_workspace` / :func:`import_workspace`: the workspace as JSON text.
- :func:`session_workspace_attachment` / :func:`restore_session_workspace`: the workspace in a
  session's ``.jsonl`` export (one ``py-agent/workspace`` custom entry, see
  :mod:`py_agent.session.attachments`), hooked in by ``py_agent.web.plugins.SESSION_EXPORT_HOOKS``.
- :class:`PreviewSource`: what the preview panel (``web/sandbox/preview.js``) reads.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Callable, Iterable
from typing import Any

from ..tools.workspace import (
    MemoryWorkspaceStore,
    Workspace,
    WorkspaceChange,
    WorkspaceFile,
    WorkspaceStore,
    files_from_export,
    workspace_attachment,
)
from .sandbox import ffi, load_sandbox_api

__all__ = [
    "IndexedDBWorkspaceStore",
    "PreviewSource",
    "delete_workspace",
    "export_workspace",
    "import_workspace",
    "open_workspace",
    "restore_session_workspace",
    "session_workspace_attachment",
    "workspace_zip",
]


class IndexedDBWorkspaceStore:
    """One session's files in the ``py-agent-workspaces`` database."""

    def __init__(self, session_id: str, db: Any = None) -> None:
        self.session_id = session_id
        self._db = db

    async def _api(self) -> Any:
        if self._db is None:
            self._db = (await load_sandbox_api()).workspaceDb
        return self._db

    async def load_all(self) -> list[WorkspaceFile]:
        records = (await (await self._api()).loadAll(self.session_id)).to_py()
        files = []
        for record in records:
            data = record["data"]
            files.append(
                WorkspaceFile(
                    str(record["path"]),
                    str(data) if record["kind"] == "text" else bytes(data),
                    int(record.get("mtime") or 0),
                )
            )
        return files

    async def put(self, file: WorkspaceFile) -> None:
        db = await self._api()
        if isinstance(file.data, str):
            await db.put(self.session_id, file.path, "text", file.data, file.mtime)
        else:
            await db.put(self.session_id, file.path, "bytes", ffi().to_js(file.data), file.mtime)

    async def delete(self, path: str) -> None:
        await (await self._api()).remove(self.session_id, path)

    async def clear(self) -> None:
        await (await self._api()).clear(self.session_id)


_open: dict[str, Workspace] = {}


async def open_workspace(session_id: str, store: WorkspaceStore | None = None) -> Workspace:
    """The session's workspace (one object per session id in this page, loaded once). In the
    page its files are in IndexedDB; elsewhere (CPython tests of the app) in memory."""
    workspace = _open.get(session_id)
    if workspace is None:
        if store is None:
            in_page = sys.platform == "emscripten"
            store = IndexedDBWorkspaceStore(session_id) if in_page else MemoryWorkspaceStore()
        workspace = await Workspace.open(store)
        _open[session_id] = workspace
    return workspace


async def delete_workspace(session_id: str) -> None:
    """Remove a session's files (when the session is deleted)."""
    workspace = _open.pop(session_id, None)
    if workspace is not None:
        await workspace.clear()
    else:
        await IndexedDBWorkspaceStore(session_id).clear()


def workspace_zip(workspace: Workspace) -> bytes:
    """Every file of the workspace in a zip, paths as in the workspace."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in workspace.files():
            info = zipfile.ZipInfo(file.path, date_time=_zip_time(file.mtime))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, file.to_bytes())
    return buffer.getvalue()


def _zip_time(mtime_ms: int) -> tuple[int, int, int, int, int, int]:
    import time

    stamp = time.gmtime(max(mtime_ms, 315532800000) / 1000)  # zip cannot hold dates before 1980
    return (stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec)


def export_workspace(workspace: Workspace) -> str:
    """The workspace as JSON text (:meth:`Workspace.export_json`), for a session export."""
    return json.dumps(workspace.export_json(), ensure_ascii=False)


async def import_workspace(session_id: str, text: str) -> int:
    """Replace a session's workspace with an exported one; returns the number of files."""
    workspace = await open_workspace(session_id)
    return await workspace.import_json(json.loads(text))


async def session_workspace_attachment(session_id: str, secrets: Iterable[str] = ()) -> dict[str, Any] | None:
    """The data of the ``py-agent/workspace`` entry of the session's export, ``None`` when its
    workspace is empty. A workspace not open in this page is read from IndexedDB (not kept open)."""
    workspace = _open.get(session_id)
    if workspace is None:
        if sys.platform != "emscripten":
            return None  # CPython: only workspaces opened in this process exist
        workspace = await Workspace.open(IndexedDBWorkspaceStore(session_id))
    return workspace_attachment(workspace, secrets)


async def restore_session_workspace(session_id: str, data: Any) -> list[str]:
    """Give an imported session the workspace its file carried (every valid file; one problem
    per thing that could not be restored)."""
    files, problems = files_from_export(data)
    workspace = await open_workspace(session_id)
    problems.extend(await workspace.restore(files))
    return problems


class PreviewSource:
    """What ``web/sandbox/preview.js`` reads: the file list, one file, the zip, and changes."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def list(self) -> str:
        return json.dumps([{"path": f.path, "size": f.size, "mtime": f.mtime} for f in self.workspace.files()])

    def read(self, path: str) -> Any:
        """The file's bytes as a Uint8Array, or ``None`` when it is gone."""
        file = self.workspace.get(path)
        return None if file is None else ffi().to_js(file.to_bytes())

    def zip(self) -> Any:
        return ffi().to_js(workspace_zip(self.workspace))

    def subscribe(self, callback: Callable[[str], Any]) -> Callable[[], None]:
        """``callback(json)`` after each change (``{kind, path, source}``); returns the remover."""

        def listener(change: WorkspaceChange) -> None:
            callback(json.dumps({"kind": change.kind, "path": change.path, "source": change.source}))

        return self.workspace.subscribe(listener)
