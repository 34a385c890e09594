"""Session metadata for a fast session list, kept up to date one entry at a time.

:func:`update_metadata` folds one appended entry into a :class:`SessionMetadata` in constant time
(the preview stops growing at :data:`PREVIEW_MAX_CHARS`), so saving the 1,000th message costs what
saving the 10th does; :func:`compute_metadata` is the same fold over a whole session.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..ai.types import Usage
from ._ids import parse_iso_ms
from .entries import (
    BranchSummaryEntry,
    CompactionEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from .messages import message_text, typed_text

__all__ = [
    "FIRST_MESSAGE_MAX_CHARS",
    "METADATA_FORMAT",
    "PREVIEW_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "ModelRef",
    "SessionMetadata",
    "compute_metadata",
    "derive_title",
    "new_metadata",
    "update_metadata",
]

METADATA_FORMAT = 1
"""Version of the metadata record's shape (``format``), for the store's migrations."""
TITLE_MAX_CHARS = 50
PREVIEW_MAX_CHARS = 2048
FIRST_MESSAGE_MAX_CHARS = 500


class ModelRef(BaseModel):
    """A model named by provider and id: ``{"provider", "modelId"}``."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        frozen=True,
        defer_build=True,  # built on first use, not at import
    )
    provider: str
    model_id: str


class SessionMetadata(BaseModel):
    """What the session list shows, without loading entries. JSON (``to_json``) is camelCase.

    - ``title``: the ``session_info`` name, else :func:`derive_title` of the first user message;
    - ``name``: the latest ``session_info`` name (``None`` when unset or cleared);
    - ``first_message``: the first user message's text, whitespace collapsed, capped;
    - ``created``: the header's timestamp; ``updated``: the latest entry timestamp (ISO strings);
    - ``model`` / ``thinking_level``: the latest model (``model_change`` or assistant message)
      and thinking level appended;
    - ``message_count``: ``message`` entries (all roles, all branches, as pi's session list);
    - ``entry_count``: all entries; ``usage``: the sum of every usage pi 1.6.0 counts in a
      session's totals (``getUsageCostBreakdown``): assistant messages, ``usage`` entries, tool
      results, compactions and branch summaries that carry one;
    - ``preview``: user and assistant text (tool traffic left out), up to 2,048 characters;
    - ``leaf_id``: the current leaf (kept by :class:`~py_agent.session.Session`).
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        defer_build=True,  # built on first use, not at import
    )

    format: int = METADATA_FORMAT
    id: str
    title: str = ""
    name: str | None = None
    first_message: str = ""
    created: str = ""
    updated: str = ""
    model: ModelRef | None = None
    thinking_level: str = "off"
    message_count: int = 0
    entry_count: int = 0
    usage: Usage = Field(default_factory=Usage)
    preview: str = ""
    leaf_id: str | None = None
    parent_session: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record for the store (camelCase; ``usage`` in pi's shape)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionMetadata:
        return cls.model_validate(dict(data))


_SPACES = re.compile(r"\s+")
# A sentence ends at ".", "!" or "?" before a space or the end: not inside "app.py" or "report.pdf".
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def derive_title(text: str) -> str:
    """A title from a first message, as pi's web UI makes it: whitespace collapsed; cut after the
    first ``.``, ``!`` or ``?`` that ends a sentence (before a space or the end) if it is within the
    first 50 characters (not the very first); otherwise the whole text if it fits in 50
    characters, else its first 47 and ``...``."""
    text = _SPACES.sub(" ", text).strip()
    match = _SENTENCE_END.search(text)
    if match and 0 < match.start() < TITLE_MAX_CHARS:
        return text[: match.start() + 1]
    if len(text) <= TITLE_MAX_CHARS:
        return text
    return text[: TITLE_MAX_CHARS - 3] + "..."


def new_metadata(header: SessionHeader) -> SessionMetadata:
    """Metadata of a session with no entries yet."""
    created = header.timestamp or ""
    return SessionMetadata(id=header.id, created=created, updated=created, parent_session=header.parent_session)


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_TOKEN_FIELDS = (
    ("input", "input"),
    ("output", "output"),
    ("cacheRead", "cache_read"),
    ("cacheWrite", "cache_write"),
    ("totalTokens", "total_tokens"),
)
_COST_FIELDS = (
    ("input", "input"),
    ("output", "output"),
    ("cacheRead", "cache_read"),
    ("cacheWrite", "cache_write"),
    ("total", "total"),
)


def _add_usage(total: Usage, usage: Any) -> None:
    if not isinstance(usage, Mapping):
        return
    for key, attr in _TOKEN_FIELDS:
        value = _number(usage.get(key))
        if value is not None:
            setattr(total, attr, getattr(total, attr) + int(value))
    cost = usage.get("cost")
    if isinstance(cost, Mapping):
        for key, attr in _COST_FIELDS:
            value = _number(cost.get(key))
            if value is not None:
                setattr(total.cost, attr, getattr(total.cost, attr) + float(value))


def _retitle(meta: SessionMetadata) -> None:
    meta.title = meta.name if meta.name else derive_title(meta.first_message)


def update_metadata(meta: SessionMetadata, entry: Entry) -> SessionMetadata:
    """Fold one appended entry into ``meta`` (in place; returns it). Constant time."""
    meta.entry_count += 1
    meta.leaf_id = entry.id
    stamp = parse_iso_ms(entry.timestamp)
    if stamp is not None:
        current = parse_iso_ms(meta.updated)
        if current is None or stamp >= current:
            meta.updated = entry.timestamp
    if isinstance(entry, MessageEntry):
        meta.message_count += 1
        message = entry.message
        role = message.get("role")
        if role == "user" or role == "assistant":
            # A user's attachments are text blocks too: the title and preview show what was typed.
            text = _SPACES.sub(" ", typed_text(message) if role == "user" else message_text(message)).strip()
            if text:
                if role == "user" and not meta.first_message:
                    meta.first_message = text[:FIRST_MESSAGE_MAX_CHARS]
                    _retitle(meta)
                if len(meta.preview) < PREVIEW_MAX_CHARS:
                    joined = f"{meta.preview}\n{text}" if meta.preview else text
                    meta.preview = joined[:PREVIEW_MAX_CHARS]
        if role == "assistant" or role == "toolResult":
            _add_usage(meta.usage, message.get("usage"))
        if role == "assistant":
            provider, model = message.get("provider"), message.get("model")
            if isinstance(provider, str) and isinstance(model, str):
                meta.model = ModelRef(provider=provider, model_id=model)
    elif isinstance(entry, UsageEntry | CompactionEntry | BranchSummaryEntry):
        _add_usage(meta.usage, entry.usage)
    elif isinstance(entry, ModelChangeEntry):
        meta.model = ModelRef(provider=entry.provider, model_id=entry.model_id)
    elif isinstance(entry, ThinkingLevelChangeEntry):
        meta.thinking_level = entry.thinking_level
    elif isinstance(entry, SessionInfoEntry):
        meta.name = (entry.name or "").strip() or None
        _retitle(meta)
    return meta


def compute_metadata(header: SessionHeader, entries: Iterable[Entry]) -> SessionMetadata:
    """The metadata of a whole session: :func:`update_metadata` over its entries in order (the
    leaf is then the last entry; a session that moved its leaf sets ``leaf_id`` itself)."""
    meta = new_metadata(header)
    for entry in entries:
        update_metadata(meta, entry)
    return meta
