"""The workspace in the page: files in IndexedDB, ``grep`` in a worker, the code tools' sandboxes,
and what the preview panel reads.

- :class:`IndexedDBWorkspaceStore`: a :class:`~py_agent.tools.workspace.WorkspaceStore` over
  ``web/sandbox/workspace-db.js`` (database ``py-agent-workspaces``, keyed by session id), so a
  session's files are kept with it across reloads.
- :func:`page_workspace_platform`: the :class:`~py_agent.app.workspace_store.WorkspacePlatform`
  the page gives the workspace plugin (:func:`py_agent.browser.main.start` passes it to
  :func:`py_agent.app.plugins.default_plugins`).
- :class:`PreviewSource` / :func:`preview_source`: what ``web/files/preview.js`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..app import workspace_store
from ..app.workspace_store import (
    WorkspacePlatform,
    add_file,
    create_file,
    delete_file,
    open_workspace,
    rename_file,
    workspace_zip,
)
from ..core.types import AgentTool
from ..tools.workspace import Workspace, WorkspaceChange, WorkspaceError, WorkspaceFile, safe_path, unique_path
from .grep import make_browser_grep_searcher
from .sandbox import SettingsSource, ffi, load_sandbox_api, make_javascript_tool, make_python_tool

__all__ = [
    "IndexedDBChangeStore",
    "IndexedDBWorkspaceStore",
    "PreviewSource",
    "code_tools",
    "load_undo_state",
    "open_page_workspace",
    "page_workspace_platform",
    "preview_source",
    "undo_change",
    "undo_state",
]


class _SessionDb:
    """One session's part of the ``py-agent-workspaces`` database (``web/sandbox/workspace-db.js``)."""

    def __init__(self, session_id: str, db: Any = None) -> None:
        self.session_id = session_id
        self._db = db

    async def _api(self) -> Any:
        if self._db is None:
            self._db = (await load_sandbox_api()).workspaceDb
        return self._db


class IndexedDBWorkspaceStore(_SessionDb):
    """One session's files in the ``py-agent-workspaces`` database."""

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


class IndexedDBChangeStore(_SessionDb):
    """One session's changes kept for undo, in the ``changes`` store of ``py-agent-workspaces``."""

    async def load_all(self) -> list[dict[str, Any]]:
        texts = (await (await self._api()).loadChanges(self.session_id)).to_py()
        records = []
        for text in texts:
            try:
                record = json.loads(str(text))
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records

    async def put(self, record: dict[str, Any]) -> None:
        await (await self._api()).putChange(self.session_id, record["call"], record["path"], json.dumps(record))

    async def clear(self) -> None:
        await (await self._api()).clearChanges(self.session_id)


def code_tools(workspace: Workspace, settings: SettingsSource) -> list[AgentTool]:
    """The sandboxed ``javascript`` and ``python`` tools over ``workspace``."""
    return [make_javascript_tool(workspace, settings), make_python_tool(workspace, settings)]


def page_workspace_platform() -> WorkspacePlatform:
    return WorkspacePlatform(
        open_store=IndexedDBWorkspaceStore,
        open_changes=IndexedDBChangeStore,
        grep_searcher=make_browser_grep_searcher,
        code_tools=code_tools,
        persistent=True,
    )


async def open_page_workspace(session_id: str) -> Workspace:
    """The session's workspace, its files in IndexedDB (whether or not the app has started)."""
    return await open_workspace(session_id, IndexedDBWorkspaceStore(session_id), IndexedDBChangeStore(session_id))


def undo_state(session_id: str, call_id: str) -> str:
    """Whether a tool call's changes can be undone: ``"available"``, ``"undone"`` or ``"none"``;
    ``"unknown"`` when the session's workspace is not open yet (:func:`load_undo_state` opens it)."""
    workspace = workspace_store.opened_workspace(session_id)
    return "unknown" if workspace is None else workspace.history.state(call_id)


async def load_undo_state(session_id: str, call_id: str) -> str:
    """:func:`undo_state`, opening the session's workspace first."""
    return (await open_workspace(session_id)).history.state(call_id)


async def undo_change(session_id: str, call_id: str, force: bool = False) -> str:
    """Undo a tool call's changes (the card's Undo): JSON ``{status: "done"|"confirm"|"none",
    message, paths}`` (``confirm``: nothing done, ``message`` asks the user; call again with
    ``force``), or ``{status: "error", message}``."""
    try:
        workspace = await open_workspace(session_id)
        outcome = await workspace.history.undo(workspace, call_id, force=bool(force))
    except Exception as error:
        return json.dumps({"status": "error", "message": f"The change could not be undone: {error}"})
    return json.dumps(outcome.to_json())


def _outcome(path: str | None = None, error: BaseException | None = None) -> str:
    return json.dumps({"error": str(error)} if error is not None else {"path": path})


def _bytes(data: Any) -> bytes:
    """A Uint8Array (or ArrayBuffer) from the page, or bytes, as bytes."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    return bytes(data.to_bytes())


class PreviewSource:
    """What ``web/files/preview.js`` reads (the file list, one file, the zip, the limits, changes)
    and does for the user (upload, new file, rename, delete). The changes answer JSON:
    ``{"path": ...}`` or ``{"error": "a sentence for the user"}``."""

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

    def limits(self) -> str:
        limits = self.workspace.limits
        return json.dumps(
            {
                "maxFileBytes": limits.max_file_bytes,
                "maxTotalBytes": limits.max_total_bytes,
                "maxFiles": limits.max_files,
                "totalBytes": self.workspace.total_bytes,
                "files": len(self.workspace),
            }
        )

    def exists(self, path: str) -> bool:
        try:
            return self.workspace.exists(path)
        except WorkspaceError:
            return False

    def target(self, name: str) -> str:
        """Where an upload named ``name`` goes (:func:`~py_agent.tools.workspace.safe_path`):
        ``{"path", "taken"}``, or ``{"error"}`` naming it when nothing of the name can be kept."""
        try:
            path = safe_path(name)
        except WorkspaceError as error:
            return _outcome(error=error)
        return json.dumps({"path": path, "taken": self.workspace.exists(path)})

    def free_path(self, path: str) -> str:
        """``path``, or ``name (2).ext``... when taken: "keep both" of a re-upload."""
        return unique_path(path, self.workspace.exists)

    async def add(self, path: str, data: Any) -> str:
        try:
            return _outcome(await add_file(self.workspace, path, _bytes(data)))
        except WorkspaceError as error:
            return _outcome(error=error)

    async def create(self, path: str) -> str:
        try:
            return _outcome(await create_file(self.workspace, path))
        except WorkspaceError as error:
            return _outcome(error=error)

    async def rename(self, old: str, new: str) -> str:
        try:
            return _outcome(await rename_file(self.workspace, old, new))
        except WorkspaceError as error:
            return _outcome(error=error)

    async def remove(self, path: str) -> str:
        try:
            return _outcome(path if await delete_file(self.workspace, path) else None)
        except WorkspaceError as error:
            return _outcome(error=error)

    def subscribe(self, callback: Callable[[str], Any]) -> Callable[[], None]:
        """``callback(json)`` after each change (``{kind, path, source}``); returns the remover."""

        def listener(change: WorkspaceChange) -> None:
            callback(json.dumps({"kind": change.kind, "path": change.path, "source": change.source}))

        return self.workspace.subscribe(listener)


async def preview_source(session_id: str) -> PreviewSource:
    """The preview panel's data for a session (its workspace, opened if needed)."""
    return PreviewSource(await open_page_workspace(session_id))
