"""The assistant message event protocol (pi-ai's ``AssistantMessageEvent``).

Every event but ``done``/``error`` carries ``partial``, the message assembled so far;
``content_index`` is the index of the affected block in ``partial.content``. A stream ends with
exactly one terminal event: ``done`` (final ``message``) or ``error`` (final ``error`` message
with ``stop_reason`` ``"error"`` or ``"aborted"`` and ``error_message`` set).

Events are plain slotted classes, not pydantic models: a streamed reply builds two of them per
delta (the provider's and the agent loop's ``message_update``), and a pydantic model costs several
times more to build. They keep the models' surface that callers use: keyword construction,
``model_construct``, ``model_dump(by_alias=True)`` / ``model_dump_json()`` giving pi's JSON
(camelCase, ``None`` fields left out) and equality by value. What they carry (messages, content
blocks, usage) stays pydantic.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from .types import AssistantMessage, ToolCall

_E = TypeVar("_E", bound="PlainEvent")


def _dump(value: Any, mode: str, by_alias: bool) -> Any:
    """``value`` as pydantic dumps a field typed ``Any``: models and events by their own dump."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode=mode, by_alias=by_alias)
    if isinstance(value, PlainEvent):
        return value.model_dump(mode=mode, by_alias=by_alias)
    if isinstance(value, list):
        return [_dump(item, mode, by_alias) for item in value]
    if isinstance(value, tuple):
        items = [_dump(item, mode, by_alias) for item in value]
        return items if mode == "json" else tuple(items)
    if isinstance(value, dict):
        return {key: _dump(item, mode, by_alias) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _dump(getattr(value, f.name), mode, by_alias) for f in dataclasses.fields(value)}
    return value


class PlainEvent:
    """Base of the stream events here and of the agent events (``py_agent.core.types``).

    A subclass lists its fields in ``__slots__`` (in pi's order), sets ``type`` as a class
    attribute and takes the fields as keyword (or positional) arguments.
    """

    __slots__ = ()
    type: str
    _fields: ClassVar[tuple[str, ...]] = ()
    _aliases: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(cls.__dict__.get("__slots__", ()))
        cls._aliases = tuple(to_camel(name) for name in cls._fields)

    @classmethod
    def model_construct(cls: builtins.type[_E], _fields_set: set[str] | None = None, **values: Any) -> _E:
        """As pydantic's: the event from its fields (``type`` may be given; it is the class's)."""
        values.pop("type", None)
        return cls(**values)

    def model_dump(self, *, mode: str = "python", by_alias: bool | None = None, **_: Any) -> dict[str, Any]:
        """pi's JSON object for the event (by alias unless ``by_alias=False``; ``None`` left out)."""
        alias = by_alias is not False
        data: dict[str, Any] = {"type": self.type}
        for name, key in zip(self._fields, self._aliases, strict=True):
            value = getattr(self, name)
            if value is not None:
                data[key if alias else name] = _dump(value, mode, alias)
        return data

    def model_dump_json(self, *, by_alias: bool | None = None, **_: Any) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=by_alias), separators=(",", ":"), ensure_ascii=False)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as pydantic models)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"


class StartEvent(PlainEvent):
    """The reply starts; ``partial`` is the empty assistant message."""

    __slots__ = ("partial",)
    type: Literal["start"] = "start"
    partial: AssistantMessage

    def __init__(self, partial: AssistantMessage) -> None:
        self.partial = partial


class TextStartEvent(PlainEvent):
    """A text block starts at ``content_index``."""

    __slots__ = ("content_index", "partial")
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage

    def __init__(self, content_index: int, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.partial = partial


class TextDeltaEvent(PlainEvent):
    """More text (``delta``) for the text block at ``content_index``."""

    __slots__ = ("content_index", "delta", "partial")
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage

    def __init__(self, content_index: int, delta: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.delta = delta
        self.partial = partial


class TextEndEvent(PlainEvent):
    """A text block is complete (``content``)."""

    __slots__ = ("content", "content_index", "partial")
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage

    def __init__(self, content_index: int, content: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.content = content
        self.partial = partial


class ThinkingStartEvent(PlainEvent):
    """A thinking block starts at ``content_index``."""

    __slots__ = ("content_index", "partial")
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage

    def __init__(self, content_index: int, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.partial = partial


class ThinkingDeltaEvent(PlainEvent):
    """More thinking (``delta``) for the block at ``content_index``."""

    __slots__ = ("content_index", "delta", "partial")
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage

    def __init__(self, content_index: int, delta: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.delta = delta
        self.partial = partial


class ThinkingEndEvent(PlainEvent):
    """A thinking block is complete (``content``)."""

    __slots__ = ("content", "content_index", "partial")
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage

    def __init__(self, content_index: int, content: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.content = content
        self.partial = partial


class ToolCallStartEvent(PlainEvent):
    """A tool call starts at ``content_index``."""

    __slots__ = ("content_index", "partial")
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage

    def __init__(self, content_index: int, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.partial = partial


class ToolCallDeltaEvent(PlainEvent):
    """More of a tool call's JSON arguments (``delta``); the partial message has them parsed so far."""

    __slots__ = ("content_index", "delta", "partial")
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    partial: AssistantMessage

    def __init__(self, content_index: int, delta: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.delta = delta
        self.partial = partial


class ToolCallEndEvent(PlainEvent):
    """A tool call is complete (``tool_call``, arguments parsed)."""

    __slots__ = ("content_index", "partial", "tool_call")
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage

    def __init__(self, content_index: int, tool_call: ToolCall, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.tool_call = tool_call
        self.partial = partial


class DoneEvent(PlainEvent):
    """The stream ended normally: ``message`` is the complete reply (``reason``: its stop reason)."""

    __slots__ = ("message", "reason")
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage

    def __init__(self, reason: Literal["stop", "length", "toolUse"], message: AssistantMessage) -> None:
        self.reason = reason
        self.message = message


class ErrorEvent(PlainEvent):
    """The stream ended with an error or an abort: ``error`` is the reply so far, with ``error_message``."""

    __slots__ = ("error", "reason")
    type: Literal["error"] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage

    def __init__(self, reason: Literal["error", "aborted"], error: AssistantMessage) -> None:
        self.reason = reason
        self.error = error


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
