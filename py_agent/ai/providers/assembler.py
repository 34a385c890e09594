"""The assembler: builds one ``AssistantMessage`` from a provider's deltas and pushes the
stream protocol's events."""

from __future__ import annotations

from typing import Any, cast

from ..event_stream import AssistantMessageEventStream
from ..events import (
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..models import calculate_cost
from ..partial_json import parse_streaming_json
from ..types import (
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    append_text,
)

_REPARSE_ALWAYS = 8192


class Assembler:
    """Mutates one partial ``AssistantMessage`` and pushes the protocol events.

    Exactly one block is open at a time (blocks never interleave); opening a new one closes the
    current one. Raw tool-argument JSON is kept here, never on the block (the saved message holds
    only the parsed arguments).
    """

    __slots__ = ("_current", "_parsed", "_raw", "model", "output", "stream")

    def __init__(self, stream: AssistantMessageEventStream, output: AssistantMessage, model: Model) -> None:
        self.stream = stream
        self.output = output
        self.model = model
        self._current: int | None = None
        self._raw: dict[int, str] = {}
        self._parsed: dict[int, int] = {}

    # -- state ---------------------------------------------------------------------------------

    @property
    def current_index(self) -> int | None:
        return self._current

    @property
    def current(self) -> TextContent | ThinkingContent | ToolCall | None:
        return None if self._current is None else self.output.content[self._current]

    def block(self, index: int) -> Any:
        return self.output.content[index]

    def tool_block(self, index: int) -> ToolCall:
        return cast(ToolCall, self.output.content[index])

    def has_tool_calls(self) -> bool:
        return any(isinstance(block, ToolCall) for block in self.output.content)

    def start(self) -> None:
        self.stream.push(StartEvent.model_construct(type="start", partial=self.output))

    # -- opening -------------------------------------------------------------------------------

    def _append(self, block: Any) -> int:
        self.close()
        content = self.output.content
        content.append(block)
        index = len(content) - 1
        self._current = index
        return index

    def open_text(self, text_signature: str | None = None) -> int:
        index = self._append(TextContent.model_construct(type="text", text="", text_signature=text_signature))
        self.stream.push(TextStartEvent.model_construct(type="text_start", content_index=index, partial=self.output))
        return index

    def open_thinking(
        self, thinking_signature: str | None = None, thinking: str = "", redacted: bool | None = None
    ) -> int:
        block = ThinkingContent.model_construct(
            type="thinking", thinking=thinking, thinking_signature=thinking_signature, redacted=redacted
        )
        index = self._append(block)
        self.stream.push(
            ThinkingStartEvent.model_construct(type="thinking_start", content_index=index, partial=self.output)
        )
        return index

    def open_tool_call(
        self,
        id: str,
        name: str,
        arguments: dict[str, Any] | None = None,
        raw: str = "",
        thought_signature: str | None = None,
    ) -> int:
        block = ToolCall.model_construct(
            type="toolCall",
            id=id,
            name=name,
            arguments=dict(arguments) if arguments else {},
            thought_signature=thought_signature,
        )
        index = self._append(block)
        self._raw[index] = raw
        self.stream.push(
            ToolCallStartEvent.model_construct(type="toolcall_start", content_index=index, partial=self.output)
        )
        return index

    # -- deltas --------------------------------------------------------------------------------

    def text_delta(self, delta: str, index: int | None = None) -> None:
        """Append to text block ``index`` (default: the open text block, opened if needed)."""
        if index is None:
            current = self.current
            if isinstance(current, TextContent) and self._current is not None:
                index = self._current
            else:
                index = self.open_text()
        block = cast(TextContent, self.output.content[index])
        append_text(block, "text", delta)
        if index == self._current:
            self.stream.push(
                TextDeltaEvent.model_construct(type="text_delta", content_index=index, delta=delta, partial=self.output)
            )

    def thinking_delta(self, delta: str, index: int | None = None, signature: str | None = None) -> None:
        if index is None:
            current = self.current
            if isinstance(current, ThinkingContent) and self._current is not None:
                index = self._current
            else:
                index = self.open_thinking(signature)
        block = cast(ThinkingContent, self.output.content[index])
        append_text(block, "thinking", delta)
        if index == self._current:
            self.stream.push(
                ThinkingDeltaEvent.model_construct(
                    type="thinking_delta", content_index=index, delta=delta, partial=self.output
                )
            )

    def tool_delta(self, index: int, fragment: str) -> None:
        """Append raw argument JSON to tool call ``index`` and re-parse it (the fragment may be ``""``)."""
        block = self.tool_block(index)
        if fragment:
            raw = self._raw.pop(index, "")
            raw += fragment  # a single reference: grows in place
            self._raw[index] = raw
            # Re-parsing the whole buffer on every fragment is quadratic: past 8 KB the partial
            # arguments are refreshed once the buffer grew by 10% (close() always parses it all).
            size = len(raw)
            if size <= _REPARSE_ALWAYS or size >= self._parsed.get(index, 0) * 1.1:
                self._parsed[index] = size
                block.arguments = parse_streaming_json(raw)
        if index == self._current:
            self.stream.push(
                ToolCallDeltaEvent.model_construct(
                    type="toolcall_delta", content_index=index, delta=fragment, partial=self.output
                )
            )

    def set_tool_raw(self, index: int, raw: str) -> None:
        self._raw[index] = raw
        self.tool_block(index).arguments = parse_streaming_json(raw)

    def tool_raw(self, index: int) -> str:
        return self._raw.get(index, "")

    # -- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the open block (``*_end``); a tool call's arguments are re-parsed from its raw JSON."""
        index = self._current
        if index is None:
            return
        self._current = None
        block = self.output.content[index]
        if isinstance(block, TextContent):
            self.stream.push(
                TextEndEvent.model_construct(
                    type="text_end", content_index=index, content=block.text, partial=self.output
                )
            )
        elif isinstance(block, ThinkingContent):
            self.stream.push(
                ThinkingEndEvent.model_construct(
                    type="thinking_end", content_index=index, content=block.thinking, partial=self.output
                )
            )
        else:
            raw = self._raw.pop(index, "")
            if raw and isinstance(block, ToolCall):
                block.arguments = parse_streaming_json(raw)
            self.stream.push(
                ToolCallEndEvent.model_construct(
                    type="toolcall_end", content_index=index, tool_call=block, partial=self.output
                )
            )

    def update_usage(self, usage: Usage) -> None:
        calculate_cost(self.model, usage)
        self.output.usage = usage
