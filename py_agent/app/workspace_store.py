"""A session's workspace in the app: where it is kept, zip export and the export entry.

- :class:`WorkspacePlatform`: what the platform adds to the workspace plugin: where a session's
  files are kept (the page: IndexedDB, :mod:`py_agent.browser.workspace`; default: memory), the
  ``grep`` searcher and the code tools. The browser adapter sets the page's with
  :func:`set_workspace_platform` when the app starts.
- :func:`workspace_zip`: the whole workspace as a zip (Python's ``zipfile``).
- :func:`export_workspace` / :func:`import_workspace`: the workspace as JSON text.
- :func:`session_workspace_attachment` / :func:`restore_session_workspace`: the workspace in a
  session's ``.jsonl`` export (one ``py-agent/workspace`` custom entry, see
  :mod:`py_agent.session.export_attachments`), declared by :func:`py_agent.app.workspace_tools.workspace_plugin`.
- :func:`open_folder` / :func:`close_folder`: a session's workspace becomes a folder the user
  picked (a :class:`~py_agent.tools.workspace.FolderStore`) and back to its stored files.
- :func:`add_file`, :func:`create_file`, :func:`rename_file`, :func:`delete_file`: what the Files
  panel does for the user (upload, new file, rename, delete); each raises :class:`WorkspaceError`
  with a sentence for the user (:func:`user_error`) and leaves the workspace as it was.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..core.types import AgentTool
from ..tools.files import GrepSearcher
from ..tools.history import ChangeHistory, ChangeStore, MemoryChangeStore
from ..tools.settings import ToolSettings
from ..tools.workspace import (
    FolderStore,
    MemoryWorkspaceStore,
    Workspace,
    WorkspaceError,
    WorkspaceStore,
    files_from_export,
    normalize_path,
    workspace_attachment,
)

__all__ = [
    "PANEL_SOURCE",
    "SettingsSource",
    "WorkspacePlatform",
    "add_file",
    "close_folder",
    "create_file",
    "delete_file",
    "delete_workspace",
    "export_workspace",
    "import_workspace",
    "open_folder",
    "open_workspace",
    "opened_workspace",
    "rename_file",
    "restore_session_workspace",
    "session_workspace_attachment",
    "set_workspace_platform",
    "stored_data",
    "user_error",
    "workspace_platform",
    "workspace_zip",
]


SettingsSource = ToolSettings | Callable[[], ToolSettings]
"""The user's tool settings, or a function that reads them at every run."""


def _no_code_tools(workspace: Workspace, settings: SettingsSource) -> list[AgentTool]:
    return []


@dataclass(frozen=True)
class WorkspacePlatform:
    """What the platform gives the workspace plugin (defaults: CPython, files in memory)."""

    open_store: Callable[[str], WorkspaceStore] = field(default=lambda session_id: MemoryWorkspaceStore())
    """Where a session's files are kept (``session_id -> store``)."""
    open_changes: Callable[[str], ChangeStore] = field(default=lambda session_id: MemoryChangeStore())
    """Where the agent's changes of a session's files are kept for undo (``session_id -> store``)."""
    grep_searcher: Callable[[], GrepSearcher | None] = field(default=lambda: None)
    """``grep``'s search (``None``: Python ``re`` in this process)."""
    code_tools: Callable[[Workspace, SettingsSource], list[AgentTool]] = field(default=_no_code_tools)
    """The ``javascript`` and ``python`` tools (only the page has their sandboxes)."""
    persistent: bool = False
    """Whether a session's files outlive this process (exports then read closed workspaces)."""


_platform = WorkspacePlatform()
_open: dict[str, Workspace] = {}


def set_workspace_platform(platform: WorkspacePlatform) -> None:
    global _platform
    _platform = platform


def workspace_platform() -> WorkspacePlatform:
    return _platform


async def open_workspace(
    session_id: str, store: WorkspaceStore | None = None, changes: ChangeStore | None = None
) -> Workspace:
    """The session's workspace (one object per session id, loaded once), kept where the
    platform keeps files and changes (:class:`WorkspacePlatform`) unless ``store`` and
    ``changes`` are given."""
    workspace = _open.get(session_id)
    if workspace is None:
        if store is None:
            store = _platform.open_store(session_id)
        history = await ChangeHistory.open(changes if changes is not None else _platform.open_changes(session_id))
        workspace = await Workspace.open(store, history=history)
        _open[session_id] = workspace
    return workspace


async def open_folder(session_id: str, store: FolderStore) -> Workspace:
    """The session's workspace becomes the folder ``store`` is over (the same object, so the
    tools already built work on the folder)."""
    workspace = await open_workspace(session_id)
    await workspace.use_store(store)
    return workspace


async def close_folder(session_id: str) -> None:
    """Back to the session's stored files (the folder is left as it is)."""
    workspace = _open.get(session_id)
    if workspace is not None and workspace.folder is not None:
        await workspace.use_store(_platform.open_store(session_id))


def opened_workspace(session_id: str) -> Workspace | None:
    """The session's workspace if it is open here (no loading)."""
    return _open.get(session_id)


async def delete_workspace(session_id: str) -> None:
    """Remove a session's files and the changes kept for undo (when the session is deleted); a
    folder's files stay (its store's ``clear`` forgets only the session's copy)."""
    workspace = _open.pop(session_id, None)
    if workspace is not None:
        await workspace.clear()
        await workspace.history.clear()
    else:
        await _platform.open_store(session_id).clear()
        await _platform.open_changes(session_id).clear()


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
    workspace is empty. A workspace not open here is read from where it is kept (not kept open)."""
    workspace = _open.get(session_id)
    if workspace is not None and workspace.folder is not None:
        # A folder's session exports what was written to it here (the session's copy), not the
        # user's whole project.
        workspace = await Workspace.open(_platform.open_store(session_id))
    if workspace is None:
        if not _platform.persistent:
            return None  # only workspaces opened in this process exist
        workspace = await Workspace.open(_platform.open_store(session_id))
    return workspace_attachment(workspace, secrets)


async def restore_session_workspace(session_id: str, data: Any) -> list[str]:
    """Give an imported session the workspace its file carried (every valid file; one problem
    per thing that could not be restored)."""
    files, problems = files_from_export(data)
    workspace = await open_workspace(session_id)
    problems.extend(await workspace.restore(files))
    return problems


# ---- what the Files panel does --------------------------------------------------------------

PANEL_SOURCE = "panel"
"""The ``source`` of the changes the user makes in the Files panel (never auto-opened)."""


def stored_data(data: bytes) -> str | bytes:
    """UTF-8 text without NUL is kept as text (the tools read and grep it; the bytes round-trip
    exactly); anything else as bytes."""
    if b"\x00" in data:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def user_error(error: BaseException) -> str:
    """A sentence for the user about a failed change (storage full, limits, bad names)."""
    text = str(error)
    if "quota" in text.lower():
        path = text.removeprefix("Could not save ").split(":", 1)[0]
        return (
            f"{path} was not saved: this browser's storage for the page is full. "
            "Delete files or old chats to make room, then try again."
        )
    return text


async def add_file(workspace: Workspace, path: str, data: bytes, *, source: str = PANEL_SOURCE) -> str:
    """Add (or replace) an uploaded file; returns its workspace path."""
    try:
        return (await workspace.write(path, stored_data(bytes(data)), source=source)).path
    except WorkspaceError as error:
        raise WorkspaceError(user_error(error)) from error


async def create_file(workspace: Workspace, path: str, text: str = "") -> str:
    """A new file (empty unless ``text``); refuses a name already taken."""
    normalized = normalize_path(path)
    if workspace.exists(normalized):
        raise WorkspaceError(f"{normalized} already exists: pick another name")
    try:
        return (await workspace.write(normalized, text, source=PANEL_SOURCE)).path
    except WorkspaceError as error:
        raise WorkspaceError(user_error(error)) from error


async def rename_file(workspace: Workspace, old: str, new: str) -> str:
    """Move a file to a new path (folders in it are created); refuses a name already taken.
    The new file is saved before the old one is removed, so a failure loses nothing."""
    source, target = normalize_path(old), normalize_path(new)
    file = workspace.get(source)
    if file is None:
        raise WorkspaceError(f"{source} no longer exists")
    if target == source:
        return source
    if workspace.exists(target):
        raise WorkspaceError(f"{target} already exists: pick another name")
    try:
        await workspace.write(target, file.data, mtime=file.mtime, source=PANEL_SOURCE)
        await workspace.delete(source, source=PANEL_SOURCE)
    except WorkspaceError as error:
        raise WorkspaceError(user_error(error)) from error
    return target


async def delete_file(workspace: Workspace, path: str) -> bool:
    """Delete a file (or a folder and what it holds); ``False`` when nothing was there."""
    try:
        return await workspace.delete(path, source=PANEL_SOURCE)
    except WorkspaceError as error:
        raise WorkspaceError(user_error(error)) from error
