"""The faux provider: pi-ai's scripted provider for tests and offline demos.

Scripted assistant messages (or callables producing them) are replayed through the real event
protocol: text, thinking and tool-call arguments are cut into token-sized chunks (3 to 5
"tokens" of 4 characters by default, chosen at random as in pi), each chunk a delta. Usage is
estimated from the serialized context (4 characters a token), with prompt caching per
``session_id``. Abort is honoured between chunks with ``"Request was aborted"``; an empty queue
ends the call with the error ``"No more faux responses queued"``.
"""

from __future__ import annotations

import asyncio
import copy
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from pydantic import BaseModel

from ._util import call_flex, error_text, json_stringify, maybe_await, utf16_len
from .abort import AbortSignal
from .event_stream import AssistantMessageEventStream
from .events import (
    DoneEvent,
    ErrorEvent,
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
from .registry import ApiProvider, register_api_provider, unregister_api_providers
from .types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    ProviderResponse,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UsageCost,
    now_ms,
    role_of,
)

DEFAULT_API = "faux"
DEFAULT_PROVIDER = "faux"
DEFAULT_MODEL_ID = "faux-1"
DEFAULT_MODEL_NAME = "Faux Model"
DEFAULT_BASE_URL = "http://localhost:0"
DEFAULT_MIN_TOKEN_SIZE = 3
DEFAULT_MAX_TOKEN_SIZE = 5

FauxContent: TypeAlias = TextContent | ThinkingContent | ToolCall


@dataclass
class FauxState:
    """Shared with response callables; ``call_count`` counts stream calls."""

    call_count: int = 0


FauxStep: TypeAlias = (
    AssistantMessage
    | Mapping[str, Any]
    | Callable[[Context, SimpleStreamOptions, FauxState, Model], "AssistantMessage | Awaitable[AssistantMessage]"]
)


# ---------------------------------------------------------------------------------------------
# Helpers to script responses


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    return ThinkingContent(thinking=thinking)


def _random_id(prefix: str) -> str:
    return f"{prefix}:{now_ms()}:{_base36(random.getrandbits(52))}"


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def faux_tool_call(name: str, arguments: Mapping[str, Any], id: str | None = None) -> ToolCall:
    return ToolCall(id=id if id is not None else _random_id("tool"), name=name, arguments=dict(arguments))


def faux_assistant_message(
    content: str | FauxContent | Sequence[FauxContent | Mapping[str, Any]],
    stop_reason: str = "stop",
    error_message: str | None = None,
    timestamp: int | None = None,
    response_id: str | None = None,
) -> AssistantMessage:
    if isinstance(content, str):
        blocks: list[Any] = [faux_text(content)]
    elif isinstance(content, BaseModel | Mapping):
        blocks = [content]
    else:
        blocks = list(content)
    return AssistantMessage.model_validate(
        {
            "role": "assistant",
            "content": blocks,
            "api": DEFAULT_API,
            "provider": DEFAULT_PROVIDER,
            "model": DEFAULT_MODEL_ID,
            "usage": Usage(),
            "stop_reason": stop_reason,
            "error_message": error_message,
            "response_id": response_id,
            "timestamp": timestamp if timestamp is not None else now_ms(),
        }
    )


# ---------------------------------------------------------------------------------------------
# Usage estimate (4 characters a token, as pi)


def _estimate_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


def _field(obj: Any, name: str, alias: str | None = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(alias or name, obj.get(name))
    return getattr(obj, name, None)


def _content_to_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if _field(block, "type") == "text":
            parts.append(_field(block, "text"))
        else:
            data = _field(block, "data") or ""
            parts.append(f"[image:{_field(block, 'mime_type', 'mimeType')}:{utf16_len(data)}]")
    return "\n".join(parts)


def _assistant_content_to_text(content: Sequence[Any]) -> str:
    parts = []
    for block in content:
        kind = _field(block, "type")
        if kind == "text":
            parts.append(_field(block, "text"))
        elif kind == "thinking":
            parts.append(_field(block, "thinking"))
        else:
            parts.append(f"{_field(block, 'name')}:{json_stringify(_field(block, 'arguments'))}")
    return "\n".join(parts)


def _message_to_text(message: Any) -> str:
    role = role_of(message)
    content = _field(message, "content")
    if role == "user":
        return _content_to_text(content)
    if role == "assistant":
        return _assistant_content_to_text(content)
    lines = [_field(message, "tool_name", "toolName")]
    lines.extend(_content_to_text([block]) for block in content or [])
    return "\n".join(str(line) for line in lines)


def _tool_json(tool: Any) -> dict[str, Any]:
    """What ``JSON.stringify`` keeps of a tool object: its data fields, not its functions."""
    if isinstance(tool, Mapping):
        return {key: value for key, value in tool.items() if not callable(value)}
    out: dict[str, Any] = {}
    for name in ("name", "label", "description", "parameters"):
        value = getattr(tool, name, None)
        if name == "parameters" and isinstance(value, type) and issubclass(value, BaseModel):
            value = value.model_json_schema()
        if value is not None:
            out[name] = value
    mode = getattr(tool, "execution_mode", None)
    if mode is not None:
        out["executionMode"] = mode
    return out


def _serialize_context(context: Context) -> str:
    parts = []
    if context.system_prompt:
        parts.append(f"system:{context.system_prompt}")
    for message in context.messages:
        parts.append(f"{role_of(message)}:{_message_to_text(message)}")
    if context.tools:
        parts.append(f"tools:{json_stringify([_tool_json(tool) for tool in context.tools])}")
    return "\n\n".join(parts)


def _common_prefix_length(a: str, b: str) -> int:
    length = min(len(a), len(b))
    index = 0
    while index < length and a[index] == b[index]:
        index += 1
    return index


def _with_usage_estimate(
    message: AssistantMessage, context: Context, options: SimpleStreamOptions | None, cache: dict[str, str]
) -> AssistantMessage:
    prompt_text = _serialize_context(context)
    prompt_tokens = _estimate_tokens(prompt_text)
    output_tokens = _estimate_tokens(_assistant_content_to_text(message.content))
    input_tokens = prompt_tokens
    cache_read = 0
    cache_write = 0
    session_id = options.session_id if options else None
    if session_id and (options is None or options.cache_retention != "none"):
        previous = cache.get(session_id)
        if previous:
            cached_chars = _common_prefix_length(previous, prompt_text)
            cache_read = _estimate_tokens(previous[:cached_chars])
            cache_write = _estimate_tokens(prompt_text[cached_chars:])
            input_tokens = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        cache[session_id] = prompt_text
    usage = Usage(
        input=input_tokens,
        output=output_tokens,
        cache_read=cache_read,
        cache_write=cache_write,
        total_tokens=input_tokens + output_tokens + cache_read + cache_write,
        cost=UsageCost(),
    )
    return message.model_copy(update={"usage": usage})


# ---------------------------------------------------------------------------------------------
# Streaming


def _split_by_token_size(text: str, min_size: int, max_size: int) -> list[str]:
    chunks = []
    index = 0
    while index < len(text):
        char_size = max(1, random.randint(min_size, max_size) * 4)
        chunks.append(text[index : index + char_size])
        index += char_size
    return chunks or [""]


def _error_message(error: BaseException | str, api: str, provider: str, model_id: str) -> AssistantMessage:
    return AssistantMessage(
        content=[],
        api=api,
        provider=provider,
        model=model_id,
        usage=Usage(),
        stop_reason="error",
        error_message=error_text(error) if isinstance(error, BaseException) else error,
        timestamp=now_ms(),
    )


def _aborted(partial: AssistantMessage) -> AssistantMessage:
    return partial.model_copy(
        update={"stop_reason": "aborted", "error_message": "Request was aborted", "timestamp": now_ms()}
    )


class _Aborted(Exception):
    pass


class _DeltaStreamer:
    """Replays one message as events; mirrors pi's ``streamWithDeltas``."""

    def __init__(
        self,
        stream: AssistantMessageEventStream,
        message: AssistantMessage,
        min_size: int,
        max_size: int,
        tokens_per_second: float | None,
        signal: AbortSignal | None,
    ) -> None:
        self.stream = stream
        self.message = message
        self.min_size = min_size
        self.max_size = max_size
        self.tokens_per_second = tokens_per_second
        self.signal = signal
        self.partial = message.model_copy(update={"content": []})

    def _check_abort(self) -> None:
        if self.signal is not None and self.signal.aborted:
            aborted = _aborted(self.partial)
            self.stream.push(ErrorEvent(reason="aborted", error=aborted))
            self.stream.end(aborted)
            raise _Aborted

    def _snapshot(self) -> AssistantMessage:
        return copy.copy(self.partial)

    async def _pace(self, chunk: str) -> None:
        tps = self.tokens_per_second
        if not tps or tps <= 0:
            await asyncio.sleep(0)
        else:
            await asyncio.sleep(_estimate_tokens(chunk) / tps)

    async def run(self) -> None:
        try:
            await self._run()
        except _Aborted:
            pass

    async def _run(self) -> None:
        stream, message = self.stream, self.message
        self._check_abort()
        stream.push(StartEvent.model_construct(type="start", partial=self._snapshot()))
        for index, block in enumerate(message.content):
            self._check_abort()
            if isinstance(block, ThinkingContent):
                await self._stream_text_block(index, ThinkingContent(thinking=""), block.thinking, "thinking")
            elif isinstance(block, TextContent):
                await self._stream_text_block(index, TextContent(text=""), block.text, "text")
            else:
                await self._stream_tool_call(index, block)
        if message.stop_reason in ("error", "aborted"):
            stream.push(ErrorEvent.model_construct(type="error", reason=message.stop_reason, error=message))
        else:
            stream.push(DoneEvent.model_construct(type="done", reason=message.stop_reason, message=message))
        stream.end(message)

    async def _stream_text_block(
        self, index: int, live: TextContent | ThinkingContent, text: str, kind: str
    ) -> None:
        partial = self.partial
        partial.content = [*partial.content, live]
        thinking = kind == "thinking"
        start, delta_cls, end = (
            (ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent)
            if thinking
            else (TextStartEvent, TextDeltaEvent, TextEndEvent)
        )
        self.stream.push(start.model_construct(type=f"{kind}_start", content_index=index, partial=self._snapshot()))
        for chunk in _split_by_token_size(text, self.min_size, self.max_size):
            await self._pace(chunk)
            self._check_abort()
            if thinking:
                live.thinking += chunk  # type: ignore[union-attr]
            else:
                live.text += chunk  # type: ignore[union-attr]
            self.stream.push(
                delta_cls.model_construct(
                    type=f"{kind}_delta", content_index=index, delta=chunk, partial=self._snapshot()
                )
            )
        self.stream.push(
            end.model_construct(type=f"{kind}_end", content_index=index, content=text, partial=self._snapshot())
        )

    async def _stream_tool_call(self, index: int, block: ToolCall) -> None:
        partial = self.partial
        live = ToolCall(id=block.id, name=block.name, arguments={})
        partial.content = [*partial.content, live]
        self.stream.push(
            ToolCallStartEvent.model_construct(type="toolcall_start", content_index=index, partial=self._snapshot())
        )
        for chunk in _split_by_token_size(json_stringify(block.arguments), self.min_size, self.max_size):
            await self._pace(chunk)
            self._check_abort()
            self.stream.push(
                ToolCallDeltaEvent.model_construct(
                    type="toolcall_delta", content_index=index, delta=chunk, partial=self._snapshot()
                )
            )
        live.arguments = block.arguments
        self.stream.push(
            ToolCallEndEvent.model_construct(
                type="toolcall_end", content_index=index, tool_call=block, partial=self._snapshot()
            )
        )


# ---------------------------------------------------------------------------------------------
# Registration


def _model_from_definition(definition: Mapping[str, Any], api: str, provider: str) -> Model:
    def get(snake: str, camel: str, default: Any) -> Any:
        value = definition.get(snake, definition.get(camel))
        return default if value is None else value

    return Model(
        id=definition["id"],
        name=get("name", "name", definition["id"]),
        api=api,
        provider=provider,
        base_url=DEFAULT_BASE_URL,
        reasoning=get("reasoning", "reasoning", False),
        input=get("input", "input", ["text", "image"]),
        cost=ModelCost.model_validate(get("cost", "cost", {})),
        context_window=get("context_window", "contextWindow", 128000),
        max_tokens=get("max_tokens", "maxTokens", 16384),
    )


class FauxProviderRegistration:
    """Handle returned by :func:`register_faux_provider`."""

    def __init__(
        self,
        api: str,
        provider: str,
        models: list[Model],
        min_token_size: int,
        max_token_size: int,
        tokens_per_second: float | None,
    ) -> None:
        self.api = api
        self.provider = provider
        self.models = models
        self.state = FauxState()
        self._source_id = _random_id("faux-provider")
        self._pending: list[FauxStep] = []
        self._min = min_token_size
        self._max = max_token_size
        self._tokens_per_second = tokens_per_second
        self._prompt_cache: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        register_api_provider(ApiProvider(api, self.stream, self.stream), self._source_id)

    def get_model(self, id: str | None = None) -> Model | None:
        if not id:
            return self.models[0]
        return next((model for model in self.models if model.id == id), None)

    def set_responses(self, steps: Sequence[FauxStep]) -> None:
        self._pending = list(steps)

    def append_responses(self, steps: Sequence[FauxStep]) -> None:
        self._pending.extend(steps)

    def pending_response_count(self) -> int:
        return len(self._pending)

    get_pending_response_count = pending_response_count

    def unregister(self) -> None:
        unregister_api_providers(self._source_id)

    def stream(
        self, model: Model, context: Context, options: SimpleStreamOptions | None = None
    ) -> AssistantMessageEventStream:
        outer = AssistantMessageEventStream()
        step = self._pending.pop(0) if self._pending else None
        self.state.call_count += 1
        task = asyncio.get_running_loop().create_task(self._produce(outer, step, model, context, options))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return outer

    async def _produce(
        self,
        outer: AssistantMessageEventStream,
        step: FauxStep | None,
        model: Model,
        context: Context,
        options: SimpleStreamOptions | None,
    ) -> None:
        try:
            if options is not None and options.on_response is not None:
                await maybe_await(options.on_response(ProviderResponse(status=200, headers={}), model))
            if step is None:
                message = _error_message("No more faux responses queued", self.api, self.provider, model.id)
                message = _with_usage_estimate(message, context, options, self._prompt_cache)
                outer.push(ErrorEvent(reason="error", error=message))
                outer.end(message)
                return
            resolved = step
            if callable(step):
                resolved = await maybe_await(call_flex(step, context, options or SimpleStreamOptions(), self.state, model))
            message = self._clone(resolved, model)
            message = _with_usage_estimate(message, context, options, self._prompt_cache)
            await _DeltaStreamer(
                outer, message, self._min, self._max, self._tokens_per_second, options.signal if options else None
            ).run()
        except Exception as error:
            message = _error_message(error, self.api, self.provider, model.id)
            outer.push(ErrorEvent(reason="error", error=message))
            outer.end(message)

    def _clone(self, resolved: Any, model: Model) -> AssistantMessage:
        if isinstance(resolved, AssistantMessage):
            cloned = resolved.model_copy(deep=True)
        else:
            cloned = AssistantMessage.model_validate(
                {"api": self.api, "provider": self.provider, "model": model.id, **dict(resolved)}
            )
        cloned.api = self.api
        cloned.provider = self.provider
        cloned.model = model.id
        return cloned


def register_faux_provider(
    api: str | None = None,
    provider: str = DEFAULT_PROVIDER,
    models: Sequence[Mapping[str, Any]] | None = None,
    tokens_per_second: float | None = None,
    token_size: Mapping[str, int] | None = None,
) -> FauxProviderRegistration:
    """Register a scripted provider in the API registry (under a fresh random API id by default)."""
    token_size = token_size or {}
    min_size = max(
        1, min(token_size.get("min", DEFAULT_MIN_TOKEN_SIZE), token_size.get("max", DEFAULT_MAX_TOKEN_SIZE))
    )
    max_size = max(min_size, token_size.get("max", DEFAULT_MAX_TOKEN_SIZE))
    api_id = api if api is not None else _random_id(DEFAULT_API)
    definitions: Sequence[Mapping[str, Any]] = models or [
        {
            "id": DEFAULT_MODEL_ID,
            "name": DEFAULT_MODEL_NAME,
            "reasoning": False,
            "input": ["text", "image"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000,
            "maxTokens": 16384,
        }
    ]
    return FauxProviderRegistration(
        api_id,
        provider,
        [_model_from_definition(definition, api_id, provider) for definition in definitions],
        min_size,
        max_size,
        tokens_per_second,
    )


__all__ = [
    "FauxProviderRegistration",
    "FauxState",
    "FauxStep",
    "faux_assistant_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "register_faux_provider",
]

