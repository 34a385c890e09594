"""One incremental Server-Sent Events decoder for every wire API (the WHATWG algorithm).

Bytes may be split anywhere: inside a UTF-8 sequence, between the ``\\r`` and ``\\n`` of a CRLF,
inside a field name. Nothing is buffered beyond the current incomplete line and the pending event,
so a response is never held whole. An event that is not terminated by a blank line before the end
of the body is discarded (the API layer then reports the truncation).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent", "aiter_sse"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(slots=True)
class SSEEvent:
    """One dispatched event: ``event`` is the ``event:`` field (``None`` when absent)."""

    data: str
    event: str | None = None
    id: str | None = None


class SSEDecoder:
    """Feed bytes with :meth:`feed`; call :meth:`flush` at the end of the body."""

    __slots__ = ("_bom_checked", "_data", "_decoder", "_event", "_has_data", "_id", "_line_parts", "_pending_cr")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line_parts: list[str] = []
        self._pending_cr = False
        self._bom_checked = False
        self._event: str | None = None
        self._id: str | None = None
        self._data: list[str] = []
        self._has_data = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events completed by it (possibly none)."""
        return self._feed_text(self._decoder.decode(chunk))

    def flush(self) -> list[SSEEvent]:
        """End of body: decode what is left; an unterminated line or event is discarded."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        self._line_parts.clear()
        self._reset_event()
        self._pending_cr = False
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if self._pending_cr:
            # The previous chunk ended with "\r": a "\n" here belongs to that line end.
            self._pending_cr = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if not self._bom_checked:
            self._bom_checked = True
            if text[0] == "\ufeff":
                text = text[1:]
                if not text:
                    return []
        events: list[SSEEvent] = []
        pos = 0
        parts = self._line_parts
        for match in _LINE_END.finditer(text):
            line = text[pos : match.start()]
            pos = match.end()
            if parts:
                parts.append(line)
                line = "".join(parts)
                parts.clear()
            event = self._process_line(line)
            if event is not None:
                events.append(event)
        if pos < len(text):
            parts.append(text[pos:])
        elif text[-1] == "\r":
            self._pending_cr = True
        return events

    def _reset_event(self) -> None:
        self._event = None
        self._data = []
        self._has_data = False

    def _process_line(self, line: str) -> SSEEvent | None:
        if not line:
            if not self._has_data:
                self._reset_event()
                return None
            event = SSEEvent(data="\n".join(self._data), event=self._event, id=self._id)
            self._reset_event()
            return event
        if line[0] == ":":
            return None
        colon = line.find(":")
        if colon == -1:
            field, value = line, ""
        else:
            field, value = line[:colon], line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        # "retry" and unknown fields are ignored.
        return None


async def aiter_sse(chunks: AsyncIterator[bytes]) -> AsyncIterator[SSEEvent]:
    """Decode an async iterator of byte chunks into events, incrementally."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.flush():
        yield event
