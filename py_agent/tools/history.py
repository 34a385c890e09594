"""What the agent changed in a session's workspace, kept so the user can undo it from the tool card.

Every file a tool call (``write``, ``edit``, the code tools) changes gets a :class:`Change`: the
file's previous content (exact bytes, or ``None`` when it did not exist) and a digest of what the
call left. :meth:`ChangeHistory.undo` puts the previous content back; when the file changed after
the call (the user, another tool), it answers with a question for the user instead, and goes ahead
only when asked again with ``force``. Changes are kept in a :class:`ChangeStore` (IndexedDB in the
page, with the session: deleting the session deletes them). Pure.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["UNDO_SOURCE", "Change", "ChangeHistory", "ChangeStore", "MemoryChangeStore", "UndoOutcome", "digest"]

UNDO_SOURCE = "undo"
"""The ``source`` of the workspace changes an undo makes."""


def digest(data: str | bytes | None) -> str | None:
    """sha256 of a file's bytes (text as UTF-8), ``None`` for no file."""
    if data is None:
        return None
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Change:
    """One file changed by one tool call."""

    call_id: str
    path: str
    before: str | bytes | None
    """The content before the call (``None``: the file did not exist)."""
    after: str | None
    """:func:`digest` of what the call left (``None``: it deleted the file)."""
    undone: bool = False

    def to_json(self) -> dict[str, Any]:
        kind = "none" if self.before is None else "text" if isinstance(self.before, str) else "base64"
        data = self.before if isinstance(self.before, str) else ""
        if isinstance(self.before, bytes):
            data = base64.b64encode(self.before).decode("ascii")
        return {
            "call": self.call_id,
            "path": self.path,
            "kind": kind,
            "data": data,
            "after": self.after,
            "undone": self.undone,
        }

    @staticmethod
    def from_json(record: Mapping[str, Any]) -> Change:
        kind, data = record.get("kind"), record.get("data")
        before: str | bytes | None = None
        if kind == "text" and isinstance(data, str):
            before = data
        elif kind == "base64" and isinstance(data, str):
            before = base64.b64decode(data)
        elif kind != "none":
            raise ValueError(f"unknown change record kind {kind!r}")
        after = record.get("after")
        return Change(
            str(record["call"]),
            str(record["path"]),
            before,
            after if isinstance(after, str) else None,
            bool(record.get("undone")),
        )


class ChangeStore(Protocol):
    """Where one session's changes are kept (records are :meth:`Change.to_json`)."""

    async def load_all(self) -> list[dict[str, Any]]: ...

    async def put(self, record: dict[str, Any]) -> None: ...

    async def clear(self) -> None: ...


class MemoryChangeStore:
    """A :class:`ChangeStore` in a dict (tests, CPython)."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], dict[str, Any]] = {}

    async def load_all(self) -> list[dict[str, Any]]:
        return list(self.records.values())

    async def put(self, record: dict[str, Any]) -> None:
        self.records[(record["call"], record["path"])] = record

    async def clear(self) -> None:
        self.records.clear()


@dataclass(frozen=True)
class UndoOutcome:
    """What an undo did: ``done``; ``confirm`` (nothing done: ``message`` asks the user);
    ``none`` (nothing to undo, ``message`` says why)."""

    status: Literal["done", "confirm", "none"]
    message: str
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "paths": list(self.paths)}


@dataclass
class ChangeHistory:
    """One session's changes, in memory and in ``store``."""

    store: ChangeStore = field(default_factory=MemoryChangeStore)
    _changes: dict[str, dict[str, Change]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    async def open(cls, store: ChangeStore | None = None) -> ChangeHistory:
        history = cls(store if store is not None else MemoryChangeStore())
        for record in await history.store.load_all():
            try:
                change = Change.from_json(record)
            except (KeyError, ValueError):
                continue  # a record this version cannot read: no undo for it
            history._changes.setdefault(change.call_id, {})[change.path] = change
        return history

    def changes(self, call_id: str) -> list[Change]:
        return list(self._changes.get(call_id, {}).values())

    def state(self, call_id: str) -> Literal["none", "available", "undone"]:
        """Whether the call's changes can be undone (``"none"``: it changed nothing kept here)."""
        changes = self.changes(call_id)
        if not changes:
            return "none"
        return "undone" if all(change.undone for change in changes) else "available"

    async def record(self, call_id: str, path: str, before: str | bytes | None, after: str | bytes | None) -> None:
        """Keep a call's change of ``path``; a second change of the same path by the same call keeps
        the first ``before``. A store that fails (storage full) leaves this change without undo."""
        known = self._changes.get(call_id, {}).get(path)
        change = Change(call_id, path, known.before if known else before, digest(after))
        try:
            await self.store.put(change.to_json())
        except Exception:
            return
        self._changes.setdefault(call_id, {})[path] = change

    async def undo(self, workspace: Workspace, call_id: str, *, force: bool = False) -> UndoOutcome:
        """Put back the content each file had before the call. Without ``force``, files changed
        since the call make it ask first (``confirm``) and change nothing."""
        pending = [change for change in self.changes(call_id) if not change.undone]
        if not pending:
            done = self.state(call_id) == "undone"
            return UndoOutcome("none", "This change was already undone." if done else "There is nothing to undo.")
        await workspace.refresh()  # a folder: take in the editor's changes first
        if not force:
            changed = [c for c in pending if digest(_data(workspace, c.path)) != c.after]
            if changed:
                return UndoOutcome("confirm", _confirm_text(changed), tuple(c.path for c in changed))
        for change in pending:
            if change.before is None:
                await workspace.delete(change.path, source=UNDO_SOURCE)
            else:
                await workspace.write(change.path, change.before, source=UNDO_SOURCE)
            undone = replace(change, undone=True)
            await self.store.put(undone.to_json())
            self._changes[call_id][change.path] = undone
        paths = tuple(c.path for c in pending)
        return UndoOutcome("done", f"Undone: {', '.join(paths)} restored.", paths)

    async def clear(self) -> None:
        self._changes.clear()
        await self.store.clear()


def _confirm_text(changed: list[Change]) -> str:
    names = ", ".join(c.path for c in changed)
    one = len(changed) == 1
    if all(c.before is None for c in changed):
        what = f"{'It' if one else 'They'} did not exist before, so undo deletes {'it' if one else 'them'}"
        what += ", with the later changes"
    else:
        what = "Undo puts back the content from before the agent's change; the later changes are lost"
    return f"{names} changed after the agent's change (edited by you or another tool). {what}. Undo anyway?"


def _data(workspace: Workspace, path: str) -> str | bytes | None:
    file = workspace.get(path)
    return None if file is None else file.data
