"""The app's storage: sessions as pi's entries (one record per entry, append-only), session
metadata for a fast list, the streaming draft, settings, device keys and custom providers.

Pure: everything goes through a :class:`StorageBackend`. In the page that is IndexedDB
(:mod:`py_agent.browser.idb` over ``web/boot/idb.js``); in CPython tests :class:`MemoryBackend`.

Layout (the IndexedDB schema is versioned in ``web/boot/idb.js``):

- ``sessions``: one record per session ``{id, updated, header, meta}``: the header line as pi writes
  it and the :class:`~py_agent.session.SessionMetadata` JSON (title, model, counts, usage, preview,
  current leaf). Rewritten on every save, but its size is bounded (the preview stops at 2 KB).
- ``entries``: one record per entry ``{sessionId, seq, line}``; ``line`` is the entry exactly as
  pi's ``.jsonl`` holds it. Records are only ever *added* (never rewritten): adding a ``seq`` that
  exists fails, which is how a second writer (another tab) is detected.
- ``drafts``: at most one per session: the assistant message being streamed, so a reload can
  recover it as an interrupted message.
- ``settings``, ``keys`` (keys remembered on this device), ``providers`` (custom providers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..session import (
    Entry,
    Session,
    SessionMetadata,
    SessionWarning,
    entry_to_line,
    header_to_line,
    load_session,
)

__all__ = [
    "KV_STORES",
    "LoadedSession",
    "MemoryBackend",
    "SessionStore",
    "StorageBackend",
    "StorageError",
    "StoredSession",
    "describe_storage_error",
]

KV_STORES = ("settings", "keys", "providers")
"""The key/value stores (string keys, JSON values)."""


class StorageError(Exception):
    """A storage operation failed. ``kind``: ``quota``, ``conflict``, ``unavailable``, ``blocked``,
    ``corrupt`` or ``other``."""

    def __init__(self, message: str, kind: str = "other") -> None:
        super().__init__(message)
        self.kind = kind


def describe_storage_error(error: BaseException) -> str:
    """A sentence for the user about a failed save."""
    kind = getattr(error, "kind", "other")
    if kind == "quota":
        return (
            "The browser's storage for this site is full, so the latest changes are not saved yet. "
            "Delete or export old sessions to free space; saving resumes with the next message."
        )
    if kind == "conflict":
        return (
            "This session was changed in another tab, so this tab stopped saving it. "
            "Reload the page to see the latest version."
        )
    if kind == "unavailable":
        return "Storage is not available in this browser window (private mode?): nothing can be saved."
    if kind == "blocked":
        return "Another tab with an older version of the app is blocking the storage upgrade: close it."
    return f"Saving failed: {error}"


@dataclass
class LoadedSession:
    """What a backend returns for one session: its record, its entry lines in append order and
    the streaming draft (a JSON string), if any."""

    record: dict[str, Any]
    lines: list[str]
    draft: str | None = None
    next_seq: int | None = None
    """The first free entry ``seq`` (``None``: ``len(lines)``): damaged records are skipped when
    the session is read, but their ``seq`` stays taken."""


class StorageBackend(Protocol):
    """Storage primitives. Every method is one transaction; values are JSON-compatible."""

    async def append_entries(
        self, session_id: str, first_seq: int, lines: Sequence[str], record: dict[str, Any], clear_draft: bool
    ) -> None:
        """Add the entry records ``first_seq``, ``first_seq + 1``, ... (fails with kind ``conflict``
        if one exists), put the session record, and delete the draft when ``clear_draft``."""
        ...

    async def put_session_record(self, record: dict[str, Any]) -> None: ...

    async def load_session(self, session_id: str) -> LoadedSession | None: ...

    async def list_session_records(self) -> list[dict[str, Any]]:
        """Every session record's ``meta``, most recently updated first. Unreadable records are
        left out (a backend may include them as ``{"id": ..., "corrupt": "why"}``)."""
        ...

    async def delete_session(self, session_id: str) -> None: ...

    async def put_draft(self, session_id: str, draft: str) -> None: ...

    async def delete_draft(self, session_id: str) -> None: ...

    async def kv_get(self, store: str, key: str) -> Any: ...

    async def kv_put(self, store: str, key: str, value: Any) -> None: ...

    async def kv_delete(self, store: str, key: str) -> None: ...

    async def kv_all(self, store: str) -> dict[str, Any]: ...

    async def kv_clear(self, store: str) -> None: ...


# ---------------------------------------------------------------------------------------------


@dataclass
class StoredSession:
    """A session read back: the tree, where its record said the leaf was, and the draft."""

    session: Session
    draft: dict[str, Any] | None
    warnings: list[SessionWarning] = field(default_factory=list)
    next_seq: int = 0
    """Where the next entry is stored (at least ``len(session)``; more when damaged records were
    skipped, whose places stay taken)."""


def _record(session: Session) -> dict[str, Any]:
    meta = session.metadata.to_json()
    return {
        "id": session.id,
        "updated": meta.get("updated") or "",
        "header": header_to_line(session.header),
        "meta": meta,
    }


class SessionStore:
    """Sessions over a backend: append-only saves, loading with repair, the list, drafts."""

    def __init__(self, backend: StorageBackend) -> None:
        self.backend = backend
        self.skipped = 0
        """How many session records the last :meth:`list` had to leave out (unreadable)."""

    async def append(self, session: Session, first_seq: int, entries: Sequence[Entry], *, clear_draft: bool) -> None:
        """Persist ``entries`` (the session's entries ``first_seq``...) and its metadata, in one
        transaction. Cost: the new entries plus one bounded metadata record."""
        lines = [entry_to_line(entry) for entry in entries]
        await self.backend.append_entries(session.id, first_seq, lines, _record(session), clear_draft)

    async def save_record(self, session: Session) -> None:
        """Persist only the metadata (e.g. the leaf moved to another branch)."""
        await self.backend.put_session_record(_record(session))

    async def load(self, session_id: str) -> StoredSession | None:
        loaded = await self.backend.load_session(session_id)
        if loaded is None:
            return None
        record = loaded.record
        warnings: list[SessionWarning] = []
        header: Any = record.get("header")
        if not isinstance(header, str):
            warnings.append(SessionWarning(None, "the session header is missing; rebuilt"))
            header = {"type": "session", "version": 3, "id": session_id, "cwd": "/"}
        meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
        leaf = meta.get("leafId") if isinstance(meta, dict) else None
        session = load_session(header, loaded.lines)
        warnings.extend(session.warnings)
        if isinstance(leaf, str) and leaf in session and leaf != session.leaf_id:
            session.branch(leaf)
        draft: dict[str, Any] | None = None
        if loaded.draft:
            try:
                value = json.loads(loaded.draft)
            except ValueError:
                warnings.append(SessionWarning(None, "the interrupted reply could not be read; skipped"))
            else:
                if isinstance(value, dict):
                    draft = value
        next_seq = loaded.next_seq if loaded.next_seq is not None else len(loaded.lines)
        return StoredSession(session, draft, warnings, max(next_seq, len(loaded.lines), len(session)))

    async def list(self, query: str = "") -> list[SessionMetadata]:
        """The session list, most recent first; ``query`` filters by title and preview text
        (every word must occur, case-insensitive)."""
        words = [word for word in query.lower().split() if word]
        result: list[SessionMetadata] = []
        skipped = 0
        for raw in await self.backend.list_session_records():
            if not isinstance(raw, dict) or raw.get("corrupt"):
                skipped += 1
                continue
            try:
                meta = SessionMetadata.from_json(raw)
            except Exception:
                skipped += 1
                continue  # an unreadable record is skipped; the rest of the list still loads
            if words:
                haystack = f"{meta.title}\n{meta.name or ''}\n{meta.preview}".lower()
                if not all(word in haystack for word in words):
                    continue
            result.append(meta)
        self.skipped = skipped
        return result

    async def delete(self, session_id: str) -> None:
        await self.backend.delete_session(session_id)

    async def save_draft(self, session_id: str, message: dict[str, Any]) -> None:
        await self.backend.put_draft(session_id, json.dumps(message, ensure_ascii=False))

    async def delete_draft(self, session_id: str) -> None:
        await self.backend.delete_draft(session_id)


# ---------------------------------------------------------------------------------------------


class MemoryBackend:
    """An in-memory backend with IndexedDB's semantics (for CPython tests and benchmarks).

    ``fail_next`` makes the next write fail with a :class:`StorageError` of that kind.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}
        self.entries: dict[str, dict[int, str]] = {}
        self.drafts: dict[str, str] = {}
        self.kv: dict[str, dict[str, Any]] = {name: {} for name in KV_STORES}
        self.fail_next: str | None = None
        self.writes = 0

    def _check(self) -> None:
        self.writes += 1
        if self.fail_next is not None:
            kind, self.fail_next = self.fail_next, None
            raise StorageError(f"simulated {kind} failure", kind)

    @staticmethod
    def _copy(value: Any) -> Any:
        return json.loads(json.dumps(value))

    async def append_entries(
        self, session_id: str, first_seq: int, lines: Sequence[str], record: dict[str, Any], clear_draft: bool
    ) -> None:
        self._check()
        existing = self.entries.setdefault(session_id, {})
        for offset in range(len(lines)):
            if first_seq + offset in existing:
                raise StorageError(f"entry {first_seq + offset} of session {session_id} exists", "conflict")
        for offset, line in enumerate(lines):
            existing[first_seq + offset] = line
        self.sessions[session_id] = self._copy(record)
        if clear_draft:
            self.drafts.pop(session_id, None)

    async def put_session_record(self, record: dict[str, Any]) -> None:
        self._check()
        self.sessions[str(record["id"])] = self._copy(record)

    async def load_session(self, session_id: str) -> LoadedSession | None:
        record = self.sessions.get(session_id)
        if record is None:
            return None
        stored = self.entries.get(session_id, {})
        lines = [line for _, line in sorted(stored.items())]
        next_seq = max(stored) + 1 if stored else 0
        return LoadedSession(self._copy(record), lines, self.drafts.get(session_id), next_seq)

    async def list_session_records(self) -> list[dict[str, Any]]:
        records = sorted(self.sessions.values(), key=lambda r: str(r.get("updated", "")), reverse=True)
        return [self._copy(r.get("meta") or {"id": r.get("id"), "corrupt": "no metadata"}) for r in records]

    async def delete_session(self, session_id: str) -> None:
        self._check()
        self.sessions.pop(session_id, None)
        self.entries.pop(session_id, None)
        self.drafts.pop(session_id, None)

    async def put_draft(self, session_id: str, draft: str) -> None:
        self._check()
        self.drafts[session_id] = draft

    async def delete_draft(self, session_id: str) -> None:
        self.drafts.pop(session_id, None)

    async def kv_get(self, store: str, key: str) -> Any:
        value = self.kv[store].get(key)
        return None if value is None else self._copy(value)

    async def kv_put(self, store: str, key: str, value: Any) -> None:
        self._check()
        self.kv[store][key] = self._copy(value)

    async def kv_delete(self, store: str, key: str) -> None:
        self.kv[store].pop(key, None)

    async def kv_all(self, store: str) -> dict[str, Any]:
        copied: dict[str, Any] = self._copy(self.kv[store])
        return copied

    async def kv_clear(self, store: str) -> None:
        self.kv[store].clear()


def all_lines(backend: MemoryBackend, session_id: str) -> Iterable[str]:
    """The stored lines of a session (tests)."""
    return [line for _, line in sorted(backend.entries.get(session_id, {}).items())]
