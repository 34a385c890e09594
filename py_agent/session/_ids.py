"""Ids and timestamps as pi generates them.

- Entry ids: the first 8 hex characters of a random UUID (``randomUUID().slice(0, 8)``), retried
  up to 100 times on a collision within the session, then a full UUID.
- Session ids: UUID version 7 (time-ordered), as pi's ``uuidv7()``.
- Entry and header timestamps: ``new Date().toISOString()``, e.g. ``2026-11-30T01:02:03.456Z``.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Container
from datetime import UTC, datetime, timedelta

__all__ = [
    "iso_from_ms",
    "new_entry_id",
    "now_iso",
    "now_ms",
    "parse_iso_ms",
    "uuidv7",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def now_ms() -> int:
    """Milliseconds since the Unix epoch (``Date.now()``)."""
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    """``new Date(ms).toISOString()`` for years 0001-9999: ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def now_iso() -> str:
    """The current time as pi writes it in sessions: ISO 8601 in UTC with milliseconds (``...Z``)."""
    return iso_from_ms(now_ms())


def parse_iso_ms(text: object) -> int | None:
    """``new Date(text).getTime()`` for ISO 8601 strings; ``None`` where JavaScript gives ``NaN``.

    A date-time without an offset is read as UTC (JavaScript would use the local time zone).
    """
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return (moment - _EPOCH) // _MS
    except OverflowError:
        return None


def _random_short_id() -> str:
    return secrets.token_hex(4)


def new_entry_id(taken: Container[str], generate: Callable[[], str] | None = None) -> str:
    """A short id not in ``taken``: 8 hex characters, or a full UUID after 100 collisions (pi's rule)."""
    make = generate or _random_short_id
    for _ in range(100):
        candidate = make()
        if candidate not in taken:
            return candidate
    while True:
        candidate = str(uuid.uuid4())
        if candidate not in taken:
            return candidate


_last_ms = -1
_sequence = 0


def uuidv7(ms: int | None = None) -> str:
    """A UUID version 7: 48-bit Unix milliseconds, then a counter seeded randomly each millisecond
    (monotonic within the process, as pi's), then random bits."""
    global _last_ms, _sequence
    random = secrets.token_bytes(16)
    stamp = now_ms() if ms is None else ms
    if stamp > _last_ms:
        _sequence = int.from_bytes(random[6:10], "big")
        _last_ms = stamp
    else:
        _sequence = (_sequence + 1) & 0xFFFFFFFF
        if _sequence == 0:
            _last_ms += 1
    stamp = _last_ms
    seq = _sequence
    data = bytearray(16)
    data[0:6] = (stamp & 0xFFFFFFFFFFFF).to_bytes(6, "big")
    data[6] = 0x70 | ((seq >> 28) & 0x0F)
    data[7] = (seq >> 20) & 0xFF
    data[8] = 0x80 | ((seq >> 14) & 0x3F)
    data[9] = (seq >> 6) & 0xFF
    data[10] = ((seq & 0x3F) << 2) | (random[10] & 0x03)
    data[11:16] = random[11:16]
    return str(uuid.UUID(bytes=bytes(data)))
