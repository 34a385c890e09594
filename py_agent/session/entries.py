"""The lines of pi's session file, version 3: a header, then entries linked by ``id``/``parentId``.

Each model's attributes are snake_case; :meth:`to_json` (also ``model_dump()``) gives pi's
camelCase object with the keys in the order pi writes them. Optional fields follow
``JSON.stringify``'s ``undefined`` rule: a field that was never set is left out, a field set to
``None`` is written as ``null``. Keys pi does not know (or a newer pi added) are kept, after the
known ones, and entry types this module does not know become :class:`UnknownEntry`, kept as they
are. Entries are immutable (``frozen``).

:func:`entry_from_json` reads one entry (``by_alias`` only, strict types: a JSON value is never
coerced); :func:`header_from_json` reads a header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_serializer
from pydantic.alias_generators import to_camel

__all__ = [
    "CURRENT_SESSION_VERSION",
    "KNOWN_ENTRY_TYPES",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "Entry",
    "EntryError",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UsageEntry",
    "entry_from_json",
    "header_from_json",
]

CURRENT_SESSION_VERSION = 3


class EntryError(ValueError):
    """A JSON object that is not a usable session entry or header."""


_LAYOUTS: dict[type, tuple[tuple[str, str, bool], ...]] = {}


class _Line(BaseModel):
    """A line of the session file: camelCase JSON in pi's key order, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        frozen=True,
        strict=True,
        defer_build=True,  # validators built on first use, not at import (the page's boot waits for imports)
    )

    # Fields written only when set (JSON.stringify leaves out `undefined`).
    _optional: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def _get_layout(cls) -> tuple[tuple[str, str, bool], ...]:
        layout = _LAYOUTS.get(cls)
        if layout is None:
            layout = tuple((name, info.alias or name, name in cls._optional) for name, info in cls.model_fields.items())
            _LAYOUTS[cls] = layout
        return layout

    def to_json(self) -> dict[str, Any]:
        """pi's JSON object for this line (values shared, not copied)."""
        data: dict[str, Any] = {}
        fields_set = self.__pydantic_fields_set__
        values = self.__dict__
        for name, alias, optional in self._get_layout():
            if optional and name not in fields_set:
                continue
            data[alias] = values[name]
        extra = self.__pydantic_extra__
        if extra:
            for key, value in extra.items():
                if key not in data:
                    data[key] = value
        return data

    @model_serializer(mode="plain")
    def _serialize(self) -> dict[str, Any]:
        return self.to_json()


class SessionHeader(_Line):
    """The first line: ``{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}``."""

    _optional = frozenset({"version", "timestamp", "cwd", "parent_session"})
    type: Literal["session"] = "session"
    version: int | float | None = None
    id: str
    timestamp: str | None = None
    cwd: str | None = None
    parent_session: str | None = None


class MessageEntry(_Line):
    """An agent message (``message`` in pi's JSON: user, assistant, toolResult or a custom role)."""

    type: Literal["message"] = "message"
    id: str
    parent_id: str | None
    timestamp: str
    message: dict[str, Any]


class ThinkingLevelChangeEntry(_Line):
    """The session switched thinking level (``thinking_level``)."""

    type: Literal["thinking_level_change"] = "thinking_level_change"
    id: str
    parent_id: str | None
    timestamp: str
    thinking_level: str


class ModelChangeEntry(_Line):
    """The session switched model: ``provider`` and ``model_id`` (JSON ``modelId``)."""

    type: Literal["model_change"] = "model_change"
    id: str
    parent_id: str | None
    timestamp: str
    provider: str
    model_id: str


class CompactionEntry(_Line):
    """Everything on the path before ``first_kept_entry_id`` is replaced by ``summary`` in the context.

    pi 1.x adds ``usage`` (the summary request's usage, counted in the session's totals) and
    ``system_message`` (the prompt and tools at the cut, a ``system``-role message)."""

    _optional = frozenset({"details", "usage", "from_hook", "system_message"})
    type: Literal["compaction"] = "compaction"
    id: str
    parent_id: str | None
    timestamp: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int | float
    details: Any = None
    usage: Any = None
    from_hook: bool | None = None
    system_message: Any = None


class BranchSummaryEntry(_Line):
    """A summary of the branch the conversation came back from (``from_id``: the branch point, or ``"root"``;
    ``usage``, pi 1.x: the summary request's usage)."""

    _optional = frozenset({"details", "usage", "from_hook"})
    type: Literal["branch_summary"] = "branch_summary"
    id: str
    parent_id: str | None
    timestamp: str
    from_id: str
    summary: str
    details: Any = None
    usage: Any = None
    from_hook: bool | None = None


class UsageEntry(_Line):
    """pi 1.x: usage a model was paid for outside the conversation (``kind``, e.g. ``"cache_warm"``);
    counted in the session's tokens and cost, never part of the model's context."""

    _optional = frozenset({"note"})
    type: Literal["usage"] = "usage"
    id: str
    parent_id: str | None
    timestamp: str
    kind: str
    provider: str
    model: str
    usage: dict[str, Any]
    note: str | None = None


class ContextEditEntry(_Line):
    """pi 1.x: an edit of what the model sees of an earlier entry (``target_id``) from here on:
    ``replacement`` ``None`` leaves it out, ``{"content": ...}`` replaces its content. The target
    itself is unchanged (the transcript and exports keep it)."""

    type: Literal["context_edit"] = "context_edit"
    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    replacement: dict[str, Any] | None


class CustomEntry(_Line):
    """State an extension (or this app) persists; never part of the model's context."""

    _optional = frozenset({"data"})
    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class CustomMessageEntry(_Line):
    """A message an extension adds to the model's context (as a ``custom``-role message)."""

    _optional = frozenset({"display", "details"})
    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[Any]
    display: bool | None = None
    details: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class LabelEntry(_Line):
    """A bookmark on another entry; a missing or empty ``label`` removes it."""

    _optional = frozenset({"label"})
    type: Literal["label"] = "label"
    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    label: str | None = None


class SessionInfoEntry(_Line):
    """The user's title for the session (``name``; an empty name clears it)."""

    _optional = frozenset({"name"})
    type: Literal["session_info"] = "session_info"
    id: str
    parent_id: str | None
    timestamp: str
    name: str | None = None


class UnknownEntry(_Line):
    """An entry of a type this module does not know (or whose fields do not validate), kept as is."""

    type: str
    id: str
    parent_id: str | None
    timestamp: str


_L = TypeVar("_L", bound=_Line)

Entry: TypeAlias = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | UsageEntry
    | ContextEditEntry
    | UnknownEntry
)

_ENTRY_CLASSES: dict[str, type[_Line]] = {
    "message": MessageEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "model_change": ModelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "usage": UsageEntry,
    "context_edit": ContextEditEntry,
}
KNOWN_ENTRY_TYPES: frozenset[str] = frozenset(_ENTRY_CLASSES)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False)[:3]:
        where = ".".join(str(part) for part in item.get("loc", ())) or "entry"
        parts.append(f"{where}: {item.get('msg')}")
    return "; ".join(parts)


def _check_base(data: Mapping[str, Any]) -> None:
    kind = data.get("type")
    if not isinstance(kind, str):
        raise EntryError("entry has no string 'type'")
    entry_id = data.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        raise EntryError("entry has no id")
    parent = data.get("parentId", ...)
    if parent is not None and not isinstance(parent, str):
        raise EntryError("entry has no valid parentId")
    if not isinstance(data.get("timestamp"), str):
        raise EntryError("entry has no timestamp")


_SURROGATES = re.compile("[\ud800-\udfff]")


def _validate(cls: type[_L], data: Mapping[str, Any]) -> _L:
    """``cls.model_validate`` by alias. Keys holding lone surrogates (valid in JavaScript strings,
    refused by pydantic-core for extra keys) are set aside and put back as extra fields."""
    odd = {key: value for key, value in data.items() if isinstance(key, str) and _SURROGATES.search(key)}
    if not odd:
        return cls.model_validate(data, by_alias=True, by_name=False)
    model = cls.model_validate({k: v for k, v in data.items() if k not in odd}, by_alias=True, by_name=False)
    extra = model.__pydantic_extra__
    if extra is not None:
        extra.update(odd)
    return model


def entry_from_json(data: Mapping[str, Any], *, lenient: bool = True) -> tuple[Entry, str | None]:
    """Read one entry from pi's JSON.

    Needs ``type`` (a string), ``id`` (a non-empty string), ``parentId`` (a string or null) and
    ``timestamp`` (a string); raises :class:`EntryError` otherwise. A known type whose own fields
    do not validate becomes an :class:`UnknownEntry` when ``lenient`` (the second item then says
    why), and raises :class:`EntryError` when not. Returns ``(entry, problem)``.
    """
    if not isinstance(data, Mapping):
        raise EntryError("entry is not a JSON object")
    _check_base(data)
    cls = _ENTRY_CLASSES.get(data["type"])
    if cls is not None:
        try:
            entry: Any = _validate(cls, data)
        except ValidationError as error:
            problem = f"{data['type']} entry is invalid ({_describe(error)}); kept unchanged"
            if not lenient:
                raise EntryError(problem) from None
        else:
            return entry, None
    else:
        problem = None
    try:
        unknown = _validate(UnknownEntry, data)
    except ValidationError as error:  # pragma: no cover - _check_base covers the base fields
        raise EntryError(_describe(error)) from None
    return unknown, problem


def header_from_json(data: Mapping[str, Any]) -> SessionHeader:
    """Read a header (``type`` ``"session"``, a non-empty string ``id``); raises :class:`EntryError`."""
    if not isinstance(data, Mapping) or data.get("type") != "session":
        raise EntryError("not a session header")
    if not isinstance(data.get("id"), str) or not data.get("id"):
        raise EntryError("session header has no id")
    try:
        return _validate(SessionHeader, data)
    except ValidationError as error:
        raise EntryError(f"session header is invalid ({_describe(error)})") from None
