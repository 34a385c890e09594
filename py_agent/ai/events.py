"""The assistant message event protocol (pi-ai's ``AssistantMessageEvent``).

Every event but ``done``/``error`` carries ``partial``, the message assembled so far;
``content_index`` is the index of the affected block in ``partial.content``. A stream ends with
exactly one terminal event: ``done`` (final ``message``) or ``error`` (final ``error`` message
with ``stop_reason`` ``"error"`` or ``"aborted"`` and ``error_message`` set).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from .types import AssistantMessage, PiModel, ToolCall


class StartEvent(PiModel):
    """The reply starts; ``partial`` is the empty assistant message."""

    type: Literal["start"] = "start"
    partial: AssistantMessage


class TextStartEvent(PiModel):
    """A text block starts at ``content_index``."""

    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(PiModel):
    """More text (``delta``) for the text block at ``content_index``."""

    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(PiModel):
    """A text block is complete (``content``)."""

    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(PiModel):
    """A thinking block starts at ``content_index``."""

    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(PiModel):
    """More thinking (``delta``) for the block at ``content_index``."""

    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(PiModel):
    """A thinking block is complete (``content``)."""

    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(PiModel):
    """A tool call starts at ``content_index``."""

    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolCallDeltaEvent(PiModel):
    """More of a tool call's JSON arguments (``delta``); the partial message has them parsed so far."""

    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ToolCallEndEvent(PiModel):
    """A tool call is complete (``tool_call``, arguments parsed)."""

    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(PiModel):
    """The stream ended normally: ``message`` is the complete reply (``reason``: its stop reason)."""

    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


class ErrorEvent(PiModel):
    """The stream ended with an error or an abort: ``error`` is the reply so far, with ``error_message``."""

    type: Literal["error"] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage


AssistantMessageEvent: TypeAlias = Annotated[
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
    | ErrorEvent,
    Field(discriminator="type"),
]
