"""A session's workspace: the files the agent's tools read and write.

The browser has no filesystem, so each session gets a set of files (workspace path -> text or
bytes, with a modification time) kept in a :class:`WorkspaceStore` (IndexedDB in the page,
:class:`MemoryWorkspaceStore` in tests and in CPython). :class:`Workspace` holds the files in
memory, writes through to its store, and tells listeners (the preview panel) what changed.
Folders are implicit: a folder exists while a file lies under it.

Workspace paths are ``/``-separated and relative to the workspace root (``notes/todo.md``).
``/workspace/...`` is accepted as the root's absolute spelling (the ``python`` tool's working
folder); every other absolute path, ``~``, ``..``, backslashes, drive letters, URLs and control
characters (NUL included) are refused with a message that says why (:func:`normalize_path`).

Pure: standard library and pydantic only (no filesystem, no browser).
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .consent import ASKING_SOURCES, ConsentRequest, FolderConsent
from .history import ChangeHistory

__all__ = [
    "AGENT_SOURCES",
    "WORKSPACE_CUSTOM_TYPE",
    "WORKSPACE_EXPORT_VERSION",
    "WORKSPACE_ROOT",
    "DeclinedError",
    "FolderStore",
    "MemoryWorkspaceStore",
    "StaleFileError",
    "Workspace",
    "WorkspaceChange",
    "WorkspaceError",
    "WorkspaceFile",
    "WorkspaceLimits",
    "WorkspaceStore",
    "files_from_export",
    "normalize_path",
    "safe_path",
    "unique_path",
    "workspace_attachment",
]

WORKSPACE_ROOT = "/workspace"
"""The root's absolute spelling (the ``python`` tool's working folder); accepted in paths."""
WORKSPACE_EXPORT_VERSION = 1
WORKSPACE_CUSTOM_TYPE = "py-agent/workspace"
"""The ``customType`` of the entry that carries a session's workspace in its ``.jsonl`` export."""
MAX_PATH_LENGTH = 1024
MAX_SEGMENT_LENGTH = 255

_DRIVE = re.compile(r"^[A-Za-z]:")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class WorkspaceError(ValueError):
    """A refused path or operation; the message is meant for the model and the user."""


def normalize_path(path: Any, *, allow_root: bool = False) -> str:
    """The canonical workspace path for ``path`` (``""`` is the root, only with ``allow_root``)."""
    if not isinstance(path, str):
        raise WorkspaceError(f"Invalid path: expected a string, got {type(path).__name__}")
    shown = repr(path) if len(path) <= 200 else repr(path[:200] + "...")
    if "\x00" in path:
        raise WorkspaceError(f"Invalid path {shown}: NUL characters are not allowed")
    if _CONTROL.search(path):
        raise WorkspaceError(f"Invalid path {shown}: control characters are not allowed")
    if "\\" in path:
        raise WorkspaceError(f"Invalid path {shown}: backslashes are not allowed; use '/' to separate folders")
    if len(path) > MAX_PATH_LENGTH:
        raise WorkspaceError(f"Invalid path: longer than {MAX_PATH_LENGTH} characters")
    candidate = path[1:] if path.startswith("@") else path  # pi strips a leading '@' (file mentions)
    if _SCHEME.match(candidate):
        raise WorkspaceError(f"Invalid path {shown}: URLs are not workspace paths")
    if _DRIVE.match(candidate):
        raise WorkspaceError(f"Absolute host path {shown} is not allowed: use a path inside the workspace")
    if candidate.startswith("~"):
        raise WorkspaceError(f"Home-relative path {shown} is not allowed: use a path inside the workspace")
    if candidate.startswith("/"):
        if candidate == WORKSPACE_ROOT or candidate.startswith(WORKSPACE_ROOT + "/"):
            candidate = candidate[len(WORKSPACE_ROOT) :]
        else:
            raise WorkspaceError(
                f"Absolute path {shown} is outside the workspace: use a workspace path such as "
                f"'notes/todo.md' (relative to the workspace root, which is {WORKSPACE_ROOT} in the python tool)"
            )
    parts: list[str] = []
    for segment in candidate.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            raise WorkspaceError(f"Invalid path {shown}: '..' is not allowed in workspace paths")
        if len(segment) > MAX_SEGMENT_LENGTH:
            raise WorkspaceError(f"Invalid path: a name is longer than {MAX_SEGMENT_LENGTH} characters")
        parts.append(segment)
    normalized = "/".join(parts)
    if not normalized and not allow_root:
        raise WorkspaceError(f"Invalid path {shown}: it names the workspace root, not a file")
    return normalized


_DOTS = re.compile(r"^\.+$")
_EXTENSION = re.compile(r"(\.[^.]{1,16})$")
ELLIPSIS = "\u2026"


def _shorten(segment: str, limit: int = MAX_SEGMENT_LENGTH) -> str:
    """``segment`` cut to ``limit`` characters in its middle (marked with ``…``), its extension kept."""
    if len(segment) <= limit:
        return segment
    match = _EXTENSION.search(segment)
    ext = match.group(1) if match and match.start() > 0 else ""
    return segment[: limit - len(ext) - 1] + ELLIPSIS + ext


def safe_path(name: Any) -> str:
    """A workspace path for a name the user gave (an upload, a drop, an attachment), which may be
    anything a drag from another page can carry: the name itself when :func:`normalize_path`
    takes it unchanged, else the closest name it takes. Control characters become ``_``,
    backslashes separate folders; empty and dots-only segments (``..``, ``....``), the
    ``/workspace/`` root and a drive (``C:``) go; a leading ``~`` or ``@`` (which
    :func:`normalize_path` refuses or strips) gets a ``_`` before it; a name over
    ``MAX_SEGMENT_LENGTH`` characters is cut in its middle (extension kept), a path over
    ``MAX_PATH_LENGTH`` loses its leading folders. Raises :class:`WorkspaceError` when nothing
    of the name is left."""
    if not isinstance(name, str):
        raise WorkspaceError(f"Invalid name: expected a string, got {type(name).__name__}")
    with_root = name.startswith(WORKSPACE_ROOT + "/")
    text = _CONTROL.sub("_", name[len(WORKSPACE_ROOT) + 1 :] if with_root else name).replace("\\", "/")
    segments = [_shorten(s) for s in text.split("/") if s.strip() and not _DOTS.match(s.strip())]
    if segments and _DRIVE.match(segments[0]) and len(segments[0]) == 2:
        segments = segments[1:]  # "C:" of a Windows path
    if segments and (segments[0][0] in "~@" or _DRIVE.match(segments[0])):
        segments[0] = _shorten("_" + segments[0])
    while len("/".join(segments)) > MAX_PATH_LENGTH and len(segments) > 1:
        segments = segments[1:]
    if not segments:
        shown = repr(name) if len(name) <= 200 else repr(name[:200] + "...")
        raise WorkspaceError(f"{shown} was not added: no part of its name can be a file name")
    return normalize_path("/".join(segments))


def unique_path(path: str, taken: Callable[[str], bool]) -> str:
    """``path``, or the first of ``name (2).ext``, ``name (3).ext``... for which ``taken`` is false."""
    folder, _, base = path.rpartition("/")
    match = _EXTENSION.search(base)
    ext = match.group(1) if match and match.start() > 0 else ""
    stem = base[: len(base) - len(ext)]
    candidate, n = path, 2
    while taken(candidate):
        suffix = f" ({n}){ext}"
        shown = (
            stem if len(stem) + len(suffix) <= MAX_SEGMENT_LENGTH else _shorten(stem, MAX_SEGMENT_LENGTH - len(suffix))
        )
        candidate = f"{folder}/{shown}{suffix}" if folder else f"{shown}{suffix}"
        n += 1
    return candidate


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class WorkspaceFile:
    """One file: ``data`` is ``str`` for text, ``bytes`` for anything else; ``mtime`` in ms."""

    path: str
    data: str | bytes
    mtime: int

    @property
    def size(self) -> int:
        """Size in bytes (text counted as UTF-8)."""
        return len(self.data) if isinstance(self.data, bytes) else len(self.data.encode("utf-8", "surrogatepass"))

    def text(self) -> str | None:
        """The content as text, or ``None`` for binary data (not UTF-8, or with NUL bytes)."""
        if isinstance(self.data, str):
            return self.data
        if b"\x00" in self.data[:8192]:
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def to_bytes(self) -> bytes:
        return self.data if isinstance(self.data, bytes) else self.data.encode("utf-8", "surrogatepass")

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        """``{path, encoding: "utf8"|"base64", data, mtime}`` (the export/storage record)."""
        if isinstance(self.data, str):
            return {"path": self.path, "encoding": "utf8", "data": self.data, "mtime": self.mtime}
        return {
            "path": self.path,
            "encoding": "base64",
            "data": base64.b64encode(self.data).decode("ascii"),
            "mtime": self.mtime,
        }

    @staticmethod
    def from_json(record: Mapping[str, Any]) -> WorkspaceFile:
        path = normalize_path(record.get("path"))
        encoding = record.get("encoding", "utf8")
        raw = record.get("data")
        if not isinstance(raw, str):
            raise WorkspaceError(f"{path}: file data must be a string")
        if encoding == "utf8":
            data: str | bytes = raw
        elif encoding == "base64":
            try:
                data = base64.b64decode(raw, validate=True)
            except ValueError:
                raise WorkspaceError(f"{path}: invalid base64 data") from None
        else:
            raise WorkspaceError(f"{path}: unknown encoding {encoding!r}")
        mtime = record.get("mtime")
        return WorkspaceFile(path, data, int(mtime) if isinstance(mtime, int | float) else now_ms())


@runtime_checkable
class WorkspaceStore(Protocol):
    """Where one workspace's files are kept (one store instance per session)."""

    async def load_all(self) -> list[WorkspaceFile]:
        """Every stored file (unreadable records are skipped by the store)."""
        ...

    async def put(self, file: WorkspaceFile) -> None:
        """Create or replace ``file.path``; raise on failure (e.g. quota exceeded)."""
        ...

    async def delete(self, path: str) -> None: ...

    async def clear(self) -> None:
        """Remove every file of this workspace."""
        ...


@runtime_checkable
class FolderStore(WorkspaceStore, Protocol):
    """A store over a real folder the user picked (the page's File System Access API,
    :mod:`py_agent.browser.folder`): files can change there while the agent works, so
    :meth:`Workspace.refresh` asks it what changed since it last looked. Its ``clear`` never
    deletes the user's files (it forgets the session's copy of what was written)."""

    name: str
    """The folder's name, for the user."""

    async def changes(self) -> tuple[list[WorkspaceFile], list[str]]:
        """Files created or changed outside since the last look, and paths gone since."""
        ...


class MemoryWorkspaceStore:
    """A :class:`WorkspaceStore` in a dict (tests, CPython, sessions that are not saved)."""

    def __init__(self, files: Iterable[WorkspaceFile] = ()) -> None:
        self.files: dict[str, WorkspaceFile] = {f.path: f for f in files}

    async def load_all(self) -> list[WorkspaceFile]:
        return list(self.files.values())

    async def put(self, file: WorkspaceFile) -> None:
        self.files[file.path] = file

    async def delete(self, path: str) -> None:
        self.files.pop(path, None)

    async def clear(self) -> None:
        self.files.clear()


@dataclass(frozen=True)
class WorkspaceLimits:
    max_file_bytes: int = 25 * 1024 * 1024
    max_total_bytes: int = 200 * 1024 * 1024
    max_files: int = 10_000


@dataclass(frozen=True)
class WorkspaceChange:
    """What changed: ``write``/``delete`` name a path; ``reset`` means reload everything."""

    kind: Literal["write", "delete", "reset"]
    path: str | None = None
    source: str | None = None
    """Who made the change (a tool name, ``"import"``, ...), for UIs."""


OUTSIDE_SOURCE = "outside"
"""The ``source`` of changes found in a folder (made by an editor, not by this page)."""

WorkspaceListener = Callable[[WorkspaceChange], object]

AGENT_SOURCES = frozenset({"write", "edit", "javascript", "python"})
"""The tools whose changes the agent made knowingly: they update what the agent has seen."""


class StaleFileError(WorkspaceError):
    """The agent would change a file that changed since it last read it."""


class DeclinedError(WorkspaceError):
    """The user did not allow a tool to delete or overwrite their files (``paths``)."""

    def __init__(self, message: str, paths: Iterable[str]) -> None:
        super().__init__(message)
        self.paths = tuple(paths)


@dataclass
class Workspace:
    """A session's files in memory, written through to ``store``.

    Reads are synchronous (the files are in memory); writes are ``async`` because they wait for
    the store, so a write that returned is saved. Store operations run one at a time, in order.
    """

    store: WorkspaceStore = field(default_factory=MemoryWorkspaceStore)
    limits: WorkspaceLimits = field(default_factory=WorkspaceLimits)
    history: ChangeHistory = field(default_factory=ChangeHistory)
    """The agent's changes, kept for undo (with the session)."""
    consent: FolderConsent = field(default_factory=FolderConsent)
    """Asks the user before a tool deletes or overwrites their files in a folder."""
    _files: dict[str, WorkspaceFile] = field(default_factory=dict, init=False, repr=False)
    _seen: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _listeners: list[WorkspaceListener] = field(default_factory=list, init=False, repr=False)
    _lock: asyncio.Lock | None = field(default=None, init=False, repr=False)
    _looking: asyncio.Future[None] | None = field(default=None, init=False, repr=False)

    @classmethod
    async def open(
        cls,
        store: WorkspaceStore | None = None,
        limits: WorkspaceLimits | None = None,
        history: ChangeHistory | None = None,
    ) -> Workspace:
        """A workspace holding what ``store`` has."""
        workspace = cls(
            store if store is not None else MemoryWorkspaceStore(),
            limits or WorkspaceLimits(),
            history or ChangeHistory(),
        )
        await workspace.reload()
        return workspace

    async def reload(self) -> None:
        """Re-read every file from the store."""
        files = await self.store.load_all()
        self._files = {}
        for file in files:
            try:
                path = normalize_path(file.path)
            except WorkspaceError:
                continue  # a record that is not a valid path (written by something else): skip it
            self._files[path] = file if path == file.path else WorkspaceFile(path, file.data, file.mtime)
        self._notify(WorkspaceChange("reset"))

    async def use_store(self, store: WorkspaceStore) -> None:
        """Keep the files in ``store`` from now on (a folder opened or closed): the same
        object, so the tools built over it follow."""
        async with self._store_lock():
            self.store = store
        self.consent.reset()
        await self.reload()

    @property
    def folder(self) -> FolderStore | None:
        """The folder this workspace is, or ``None`` for the stored workspace."""
        return self.store if isinstance(self.store, FolderStore) else None

    async def refresh(self) -> None:
        """Take in what changed in the folder since the last look (an editor saved a file,
        one was created): a no-op for stored workspaces, whose files change only here."""
        folder = self.folder
        if folder is None:
            return
        if self._looking is not None:  # a batch of tool calls: the look under way serves them all
            await asyncio.shield(self._looking)
            return
        self._looking = asyncio.get_running_loop().create_future()
        try:
            async with self._store_lock():
                changed, gone = await folder.changes()
                for file in changed:
                    self._files[file.path] = file
                gone = [path for path in gone if self._files.pop(path, None) is not None]
        finally:
            self._looking.set_result(None)
            self._looking = None
        for file in changed:
            self._notify(WorkspaceChange("write", file.path, OUTSIDE_SOURCE))
        for path in gone:
            self._notify(WorkspaceChange("delete", path, OUTSIDE_SOURCE))

    # -- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.is_file(path)

    def get(self, path: str) -> WorkspaceFile | None:
        """The file at ``path`` or ``None`` (raises :class:`WorkspaceError` for an invalid path)."""
        return self._files.get(normalize_path(path))

    def files(self, under: str = "") -> list[WorkspaceFile]:
        """Files under the folder ``under`` (default: all), sorted by path."""
        prefix = normalize_path(under, allow_root=True)
        if prefix:
            if prefix in self._files:
                return [self._files[prefix]]
            prefix += "/"
        return [self._files[p] for p in sorted(self._files) if p.startswith(prefix)]

    def paths(self) -> list[str]:
        return sorted(self._files)

    def is_file(self, path: str) -> bool:
        return normalize_path(path, allow_root=True) in self._files

    def is_dir(self, path: str) -> bool:
        folder = normalize_path(path, allow_root=True)
        if not folder:
            return True
        prefix = folder + "/"
        return any(p.startswith(prefix) for p in self._files)

    def exists(self, path: str) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def list_dir(self, path: str = "") -> list[tuple[str, bool]]:
        """``(name, is_folder)`` for the direct children of a folder, in no particular order."""
        folder = normalize_path(path, allow_root=True)
        prefix = folder + "/" if folder else ""
        entries: dict[str, bool] = {}
        for p in self._files:
            if p.startswith(prefix):
                head, sep, _rest = p[len(prefix) :].partition("/")
                entries[head] = entries.get(head, False) or bool(sep)
        return list(entries.items())

    # -- what the agent has seen --------------------------------------------------------------

    def mark_seen(self, path: str) -> None:
        """The agent has read ``path`` as it is now (a later change elsewhere makes it stale)."""
        file = self.get(path)
        if file is not None:
            self._seen[file.path] = file.mtime

    def check_not_stale(self, path: str) -> None:
        """Raise :class:`StaleFileError` when ``path`` changed (its modification time) since the
        agent last read or wrote it. A file the agent never read passes (pi's ``edit`` needs no
        read first)."""
        file = self.get(path)
        seen = self._seen.get(file.path) if file is not None else None
        if file is not None and seen is not None and seen != file.mtime:
            raise StaleFileError(
                f"{file.path} was modified since you last read it (by the user or another program), so it was "
                "not changed. Read the file again with the read tool, then make your change on its current content."
            )

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self._files.values())

    # -- asking the user first ----------------------------------------------------------------

    async def confirm_changes(
        self, overwrite: Iterable[str] = (), delete: Iterable[str] = (), *, source: str | None
    ) -> None:
        """Ask the user before ``source`` (a tool) overwrites or deletes (a folder: what it holds)
        their files, in a folder: files that exist and the agent did not write itself in this
        session (docs/folders.md). Raises :class:`DeclinedError` when the user says no; the
        files allowed count as the agent's from then on. Stored workspaces never ask."""
        folder = self.folder
        if folder is None or source not in ASKING_SOURCES:
            return
        consent = self.consent
        replaced = [f for p in overwrite for f in self._existing(p, under=False)]
        deleted = [f for p in delete for f in self._existing(p, under=True)]
        asked = {f.path: f for f in replaced + deleted if consent.asks(f.path, f.mtime)}
        if not asked:
            return
        request = ConsentRequest(
            folder.name,
            source,
            tuple(dict.fromkeys(f.path for f in replaced if f.path in asked)),
            tuple(dict.fromkeys(f.path for f in deleted if f.path in asked)),
        )
        if not await consent.ask(request):
            raise DeclinedError(request.declined(), request.paths)
        for file in asked.values():
            consent.mine(file.path, file.mtime)

    def _existing(self, path: str, *, under: bool) -> list[WorkspaceFile]:
        """The file at ``path`` (``under``: or the files under that folder)."""
        try:
            file = self._files.get(normalize_path(path))
            return self.files(path) if under else [file] if file is not None else []
        except WorkspaceError:
            return []  # an invalid path: the write or delete itself refuses it, with its message

    # -- writing ----------------------------------------------------------------------------

    def _check_write(self, path: str, data: str | bytes) -> None:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in self._files:
                raise WorkspaceError(f"Cannot write {path}: {parent} is a file, not a folder")
        if path not in self._files and self.is_dir(path):
            raise WorkspaceError(f"Cannot write {path}: it is a folder")
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
        if size > self.limits.max_file_bytes:
            raise WorkspaceError(
                f"Cannot write {path}: {size} bytes is over the workspace's limit of "
                f"{self.limits.max_file_bytes} bytes per file"
            )
        old = self._files.get(path)
        total = self.total_bytes - (old.size if old else 0) + size
        if total > self.limits.max_total_bytes:
            raise WorkspaceError(
                f"Cannot write {path}: the workspace would hold {total} bytes, over its limit of "
                f"{self.limits.max_total_bytes} bytes; delete files first"
            )
        if old is None and len(self._files) >= self.limits.max_files:
            raise WorkspaceError(f"Cannot write {path}: the workspace already holds {self.limits.max_files} files")

    def _store_lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def write(
        self,
        path: str,
        data: str | bytes,
        *,
        mtime: int | None = None,
        source: str | None = None,
        change: str | None = None,
    ) -> WorkspaceFile:
        """Create or replace a file (parent folders are implicit). Returns the stored file.
        ``change``: the id of the tool call making it, kept in :attr:`history` for undo."""
        if not isinstance(data, str | bytes):
            raise WorkspaceError(f"Invalid content for {path}: expected text or bytes")
        normalized = normalize_path(path)
        self._check_write(normalized, data)
        await self.confirm_changes([normalized], source=source)
        file = WorkspaceFile(normalized, bytes(data) if isinstance(data, bytes) else data, mtime or now_ms())
        async with self._store_lock():
            old = self._files.get(normalized)
            try:
                await self.store.put(file)
            except Exception as error:
                raise WorkspaceError(f"Could not save {normalized}: {error}") from error
            self._files[normalized] = file
        if source in AGENT_SOURCES:
            self._seen[normalized] = file.mtime
        # The agent's own file from now on, unless an edit changed part of a user's file.
        if source in AGENT_SOURCES and (source != "edit" or old is None or self.consent.owns(old.path, old.mtime)):
            self.consent.mine(normalized, file.mtime)
        else:
            self.consent.forget(normalized)
        if change is not None:
            await self.history.record(change, normalized, old.data if old else None, file.data)
        self._notify(WorkspaceChange("write", normalized, source))
        return file

    async def delete(self, path: str, *, source: str | None = None, change: str | None = None) -> bool:
        """Delete a file, or a folder with everything under it; ``False`` if nothing was there.
        ``change``: the id of the tool call deleting it, kept in :attr:`history` for undo."""
        normalized = normalize_path(path)
        targets = [normalized] if normalized in self._files else [f.path for f in self.files(normalized)]
        if not targets:
            return False
        await self.confirm_changes(delete=targets, source=source)
        async with self._store_lock():
            for target in targets:
                try:
                    await self.store.delete(target)
                except Exception as error:
                    raise WorkspaceError(f"Could not delete {target}: {error}") from error
                old = self._files.pop(target, None)
                self._seen.pop(target, None)
                self.consent.forget(target)
                if change is not None and old is not None:
                    await self.history.record(change, target, old.data, None)
        for target in targets:
            self._notify(WorkspaceChange("delete", target, source))
        return True

    async def clear(self) -> None:
        async with self._store_lock():
            await self.store.clear()
            self._files = {}
        self._notify(WorkspaceChange("reset"))

    # -- listeners --------------------------------------------------------------------------

    def subscribe(self, listener: WorkspaceListener) -> Callable[[], None]:
        """Call ``listener(change)`` after every change; returns a function that removes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _notify(self, change: WorkspaceChange) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # a broken UI listener must not fail the tool that wrote the file
                continue

    # -- export / import --------------------------------------------------------------------

    def export_json(self) -> dict[str, Any]:
        """``{"version": 1, "files": [{path, encoding, data, mtime}, ...]}`` (JSON-ready)."""
        return {"version": WORKSPACE_EXPORT_VERSION, "files": [f.to_json() for f in self.files()]}

    async def import_json(self, data: Mapping[str, Any], *, replace: bool = True, source: str = "import") -> int:
        """Load an :meth:`export_json` document (checked whole first); returns the file count."""
        if not isinstance(data, Mapping) or not isinstance(data.get("files"), list):
            raise WorkspaceError("Not a workspace export: expected an object with a 'files' list")
        version = data.get("version", WORKSPACE_EXPORT_VERSION)
        if not isinstance(version, int) or version > WORKSPACE_EXPORT_VERSION:
            raise WorkspaceError(f"Unsupported workspace export version {version!r}")
        files = [WorkspaceFile.from_json(record) for record in data["files"]]
        # A dry run in memory first, so a bad document changes nothing.
        scratch = Workspace(MemoryWorkspaceStore([] if replace else self.files()), self.limits)
        await scratch.reload()
        for file in files:
            await scratch.write(file.path, file.data, mtime=file.mtime)
        if replace:
            await self.clear()
        for file in files:
            await self.write(file.path, file.data, mtime=file.mtime, source=source)
        return len(files)

    async def restore(self, files: Iterable[WorkspaceFile], *, source: str = "import") -> list[str]:
        """Replace every file with ``files``, writing as many as the limits allow; returns one
        problem (a sentence) per file that could not be written."""
        await self.clear()
        problems: list[str] = []
        for file in files:
            try:
                await self.write(file.path, file.data, mtime=file.mtime, source=source)
            except WorkspaceError as error:
                problems.append(f"{error}; it was skipped")
        return problems


# ---- the workspace in a session export ---------------------------------------------------------

_REDACTED = b"[redacted]"


def workspace_attachment(workspace: Workspace, secrets: Iterable[str] = ()) -> dict[str, Any] | None:
    """The ``data`` of the ``py-agent/workspace`` entry of a session export
    (:meth:`Workspace.export_json`), or ``None`` when the workspace is empty (no entry then).

    The export scrubs every secret from the text of each line; a secret inside a binary file
    would be hidden in its base64, so it is replaced in the file's bytes here."""
    if not len(workspace):
        return None
    wanted = sorted({secret.encode("utf-8") for secret in secrets if isinstance(secret, str) and secret}, key=len)
    records = []
    for file in workspace.files():
        if isinstance(file.data, bytes) and any(secret in file.data for secret in wanted):
            data = file.data
            for secret in reversed(wanted):
                data = data.replace(secret, _REDACTED)
            file = WorkspaceFile(file.path, data, file.mtime)
        records.append(file.to_json())
    return {"version": WORKSPACE_EXPORT_VERSION, "files": records}


def files_from_export(data: Any) -> tuple[list[WorkspaceFile], list[str]]:
    """The files of a :meth:`Workspace.export_json` document, read leniently (a session import
    keeps whatever can be kept): every valid file, and one problem (a sentence naming what is
    wrong) per thing that was skipped."""
    where = "The workspace saved in this file"
    if not isinstance(data, Mapping) or not isinstance(data.get("files"), list):
        got = type(data if not isinstance(data, Mapping) else data.get("files")).__name__
        problem = f"{where} is malformed (expected an object with a 'files' list, found {got})"
        return [], [f"{problem}; no files were restored"]
    version = data.get("version", WORKSPACE_EXPORT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version > WORKSPACE_EXPORT_VERSION:
        return [], [f"{where} has an unsupported version {version!r}; no files were restored"]
    files: list[WorkspaceFile] = []
    problems: list[str] = []
    for number, record in enumerate(data["files"], start=1):
        if not isinstance(record, Mapping):
            problems.append(f"{where} has a malformed file record #{number} (not an object); it was skipped")
            continue
        try:
            files.append(WorkspaceFile.from_json(record))
        except WorkspaceError as error:
            problems.append(f"{where} has a malformed file record #{number}: {error}; it was skipped")
    return files, problems
