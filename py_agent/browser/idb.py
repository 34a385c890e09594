"""The storage backend of the page: IndexedDB, through the small shim in ``web/boot/idb.js``.

Every call moves strings only (JSON, or entry lines joined by newlines), so one call costs one
conversion however many records it touches. JavaScript errors become
:class:`~py_agent.app.storage.StorageError` with a kind the app can explain.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..app.storage import LoadedSession, StorageError

__all__ = ["IndexedDBBackend", "storage_error"]

_KINDS = {
    "QuotaExceededError": "quota",
    "ConstraintError": "conflict",
    "InvalidStateError": "unavailable",
    "SecurityError": "unavailable",
    "BlockedError": "blocked",
    "DataError": "corrupt",
    "DataCloneError": "corrupt",
}


def _null(value: Any) -> bool:
    """JavaScript ``null``/``undefined`` (Pyodide hands ``null`` over as ``jsnull``)."""
    return value is None or type(value).__name__ in ("JsNull", "JsUndefined")


def storage_error(error: BaseException) -> StorageError:
    text = str(error)
    name = getattr(error, "name", "") or text.split(":", 1)[0].strip()
    kind = _KINDS.get(name) or next((k for n, k in _KINDS.items() if n in text), "other")
    return StorageError(text, kind)


class IndexedDBBackend:
    """:class:`~py_agent.app.storage.StorageBackend` over ``web/boot/idb.js``'s ``Storage`` object."""

    def __init__(self, db: Any) -> None:
        self._db = db

    async def _call(self, method: str, *args: Any) -> Any:
        try:
            return await getattr(self._db, method)(*args)
        except Exception as error:
            if isinstance(error, StorageError):
                raise
            raise storage_error(error) from None

    async def append_entries(
        self, session_id: str, first_seq: int, lines: Sequence[str], record: dict[str, Any], clear_draft: bool
    ) -> None:
        await self._call(
            "appendEntries", session_id, first_seq, json.dumps(list(lines)), json.dumps(record), clear_draft
        )

    async def put_session_record(self, record: dict[str, Any]) -> None:
        await self._call("putSessionRecord", json.dumps(record))

    async def load_session(self, session_id: str) -> LoadedSession | None:
        result = await self._call("loadSession", session_id)
        if _null(result):
            return None
        try:
            record = json.loads(str(result.record))
            lines_text = str(result.lines)
            count = int(result.count)
            draft = result.draft
            next_seq = result.nextSeq
        finally:
            if hasattr(result, "destroy"):
                result.destroy()
        lines = lines_text.split("\n") if count else []
        if not isinstance(record, dict):
            raise StorageError("the session record is unreadable", "corrupt")
        return LoadedSession(
            record, lines, None if _null(draft) else str(draft), None if _null(next_seq) else int(next_seq)
        )

    async def list_session_records(self) -> list[dict[str, Any]]:
        value = json.loads(str(await self._call("listSessions")))
        return [item for item in value if isinstance(item, dict)]

    async def delete_session(self, session_id: str) -> None:
        await self._call("deleteSession", session_id)

    async def put_draft(self, session_id: str, draft: str) -> None:
        await self._call("putDraft", session_id, draft)

    async def delete_draft(self, session_id: str) -> None:
        await self._call("deleteDraft", session_id)

    async def kv_get(self, store: str, key: str) -> Any:
        text = await self._call("kvGet", store, key)
        return None if _null(text) else json.loads(str(text))

    async def kv_put(self, store: str, key: str, value: Any) -> None:
        await self._call("kvPut", store, key, json.dumps(value))

    async def kv_delete(self, store: str, key: str) -> None:
        await self._call("kvDelete", store, key)

    async def kv_all(self, store: str) -> dict[str, Any]:
        value = json.loads(str(await self._call("kvAll", store)))
        return value if isinstance(value, dict) else {}

    async def kv_clear(self, store: str) -> None:
        await self._call("kvClear", store)
