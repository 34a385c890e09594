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
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from pydantic import BaseModel

from ._interop import get_field
from ._util import call_flex, error_text, json_stringify, maybe_await, utf16_len
from .abort import AbortSignal
from .event_stream import AssistantMessageEventStream
from .events import (
    AssistantMessageEvent,
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
    shallow_copier,
    staging_class,
)

_new = object.__new__
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
    """A text block for :func:`faux_assistant_message`."""
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    """A thinking block for :func:`faux_assistant_message`."""
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
    """A tool call block for :func:`faux_assistant_message` (a random id unless given)."""
    return ToolCall(id=id if id is not None else _random_id("tool"), name=name, arguments=dict(arguments))


def faux_assistant_message(
    content: str | FauxContent | Sequence[FauxContent | Mapping[str, Any]],
    stop_reason: str = "stop",
    error_message: str | None = None,
    timestamp: int | None = None,
    response_id: str | None = None,
) -> AssistantMessage:
    """A scripted assistant reply for the faux provider: ``content`` is a string or blocks made with
    :func:`faux_text`, :func:`faux_thinking` and :func:`faux_tool_call`.
    """
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
    """Chunks of 4 characters a token, sizes drawn at random, as pi's ``splitStringByTokenSize``.

    pi slices UTF-16 code units. Beyond the BMP, a cut that falls inside a surrogate pair is moved
    after the pair (the next chunk is one unit shorter, possibly empty), so no delta carries a lone
    surrogate while the chunk grid, and so the number of deltas, stays pi's.
    """
    chunks = []
    if text.isascii():
        if min_size == max_size:  # nothing to draw: the same slices, without 1 draw per chunk
            size = max(1, min_size * 4)
            return [text[i : i + size] for i in range(0, len(text), size)] or [""]
        index = 0
        while index < len(text):
            char_size = max(1, random.randint(min_size, max_size) * 4)
            chunks.append(text[index : index + char_size])
            index += char_size
        return chunks or [""]
    grid = 0  # pi's slice position, in UTF-16 units
    unit = 0  # units consumed so far
    position = 0  # code points consumed so far
    total = utf16_len(text)
    while grid < total:
        grid += max(1, random.randint(min_size, max_size) * 4)
        start = position
        while unit < grid and position < len(text):
            unit += 2 if ord(text[position]) > 0xFFFF else 1
            position += 1
        chunks.append(text[start:position])
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


class _Pace:
    """Yielded by :func:`_replay` before a chunk when replies are paced: wait for ``chunk``'s tokens."""

    __slots__ = ("chunk",)

    def __init__(self, chunk: str) -> None:
        self.chunk = chunk


def _deltas(
    message: AssistantMessage,
    min_size: int,
    max_size: int,
    tokens_per_second: float | None,
    signal: AbortSignal | None,
) -> Iterator[AssistantMessageEvent] | AsyncIterator[AssistantMessageEvent]:
    """Replay ``message`` as protocol events; mirrors pi's ``streamWithDeltas``.

    Runs in the consumer's task (see ``EventStream.set_source``): without ``tokens_per_second``
    chunks follow each other without yielding to the event loop, as pi's microtask pacing does
    (a plain generator, which the stream pulls without an ``await``); with it each chunk waits
    ``tokens / tokens_per_second`` seconds.
    """
    if tokens_per_second and tokens_per_second > 0:
        return _paced(_replay(message, min_size, max_size, True, signal), tokens_per_second)
    return cast(Iterator[AssistantMessageEvent], _replay(message, min_size, max_size, False, signal))


async def _paced(
    replay: Iterator[AssistantMessageEvent | _Pace], tokens_per_second: float
) -> AsyncIterator[AssistantMessageEvent]:
    for event in replay:
        if type(event) is _Pace:
            await asyncio.sleep(_estimate_tokens(event.chunk) / tokens_per_second)
        else:
            yield cast(AssistantMessageEvent, event)


def _replay(
    message: AssistantMessage, min_size: int, max_size: int, paced: bool, signal: AbortSignal | None
) -> Iterator[AssistantMessageEvent | _Pace]:
    """The events of :func:`_deltas`; with ``paced``, a :class:`_Pace` before each chunk."""
    partial = message.model_copy(update={"content": []})
    snapshot = shallow_copier(partial)  # `{...partial}`; its slots are never replaced here
    message_class = type(partial)
    staging: Any = staging_class(message_class)
    partial_values = partial.__dict__
    partial_fields_set = partial.__pydantic_fields_set__
    extra = partial.__pydantic_extra__
    private = partial.__pydantic_private__
    # The per-delta abort check reads the flag behind `AbortSignal.aborted` (a property costs a call).
    flag_signal = signal if type(signal) is AbortSignal else None

    def aborted() -> bool:
        return signal is not None and signal.aborted

    def aborted_event() -> AssistantMessageEvent:
        return ErrorEvent(reason="aborted", error=_aborted(partial))

    # pi checks the signal at the top of each block synchronously after the previous events,
    # so it sees an abort only as of its last suspension (the call, or a chunk's pacing):
    # `seen_abort` keeps that state, while the events in between already reached listeners.
    seen_abort = aborted()
    if seen_abort:
        yield aborted_event()
        return
    yield StartEvent(snapshot())
    for index, block in enumerate(message.content):
        if seen_abort:
            yield aborted_event()
            return
        if isinstance(block, ThinkingContent | TextContent):
            thinking = isinstance(block, ThinkingContent)
            text = block.thinking if isinstance(block, ThinkingContent) else block.text
            live: TextContent | ThinkingContent = ThinkingContent(thinking="") if thinking else TextContent(text="")
            start, delta, end = (
                (ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent)
                if thinking
                else (TextStartEvent, TextDeltaEvent, TextEndEvent)
            )
            field = "thinking" if thinking else "text"
            partial.content = [*partial.content, live]
            yield start(index, snapshot())
            # The per-delta path: `aborted()` and `append_text` inlined, no `cast` calls (each
            # a function call); the block's `__dict__` looked up once (pydantic never replaces it).
            values = live.__dict__
            for chunk in _split_by_token_size(text, min_size, max_size):
                if paced:
                    yield _Pace(chunk)
                seen_abort = flag_signal._aborted if flag_signal is not None else aborted()
                if seen_abort:
                    yield aborted_event()
                    return
                # append_text(live, field, chunk), inlined (see there why the text is popped).
                grown = values.pop(field)
                grown += chunk
                values[field] = grown
                del grown  # leave the block the text's only holder while suspended, as append_text does
                # delta(index, chunk, snapshot()), without the call of the class (its __init__).
                event: Any = _new(delta)
                event.content_index = index
                event.delta = chunk
                if staging is None:
                    event.partial = snapshot()
                else:  # snapshot(), inlined (types.shallow_copier's staged copy)
                    copied = staging()
                    copied.__dict__ = partial_values.copy()
                    copied.__pydantic_fields_set__ = partial_fields_set.copy()
                    copied.__pydantic_extra__ = None if extra is None else extra.copy() if extra else {}
                    copied.__pydantic_private__ = None if private is None else private.copy()
                    copied.__class__ = message_class
                    event.partial = copied
                yield event
            yield end(index, text, snapshot())
            continue
        call = ToolCall(id=block.id, name=block.name, arguments={})
        partial.content = [*partial.content, call]
        yield ToolCallStartEvent(index, snapshot())
        for chunk in _split_by_token_size(json_stringify(block.arguments), min_size, max_size):
            if paced:
                yield _Pace(chunk)
            seen_abort = aborted()
            if seen_abort:
                yield aborted_event()
                return
            yield ToolCallDeltaEvent(index, chunk, snapshot())
        call.arguments = block.arguments
        yield ToolCallEndEvent(index, block, snapshot())
    if message.stop_reason == "error" or message.stop_reason == "aborted":
        yield ErrorEvent(message.stop_reason, message)
    else:
        yield DoneEvent(message.stop_reason, message)


# ---------------------------------------------------------------------------------------------
# Registration


def _model_from_definition(definition: Mapping[str, Any], api: str, provider: str) -> Model:
    def get(name: str, default: Any) -> Any:
        value = get_field(definition, name)
        return default if value is None else value

    return Model(
        id=definition["id"],
        name=get("name", definition["id"]),
        api=api,
        provider=provider,
        base_url=DEFAULT_BASE_URL,
        reasoning=get("reasoning", False),
        input=get("input", ["text", "image"]),
        cost=ModelCost.model_validate(get("cost", {})),
        context_window=get("context_window", 128000),
        max_tokens=get("max_tokens", 16384),
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
        outer.set_source(self._produce(outer, step, model, context, options))
        return outer

    async def _produce(
        self,
        outer: AssistantMessageEventStream,
        step: FauxStep | None,
        model: Model,
        context: Context,
        options: SimpleStreamOptions | None,
    ) -> AsyncIterator[AssistantMessageEvent]:
        try:
            if options is not None and options.on_response is not None:
                await maybe_await(options.on_response(ProviderResponse(status=200, headers={}), model))
            if step is None:
                message = _error_message("No more faux responses queued", self.api, self.provider, model.id)
                yield ErrorEvent(
                    reason="error", error=_with_usage_estimate(message, context, options, self._prompt_cache)
                )
                return
            resolved = step
            if callable(step):
                resolved = await maybe_await(
                    call_flex(step, context, options or SimpleStreamOptions(), self.state, model)
                )
            message = _with_usage_estimate(self._clone(resolved, model), context, options, self._prompt_cache)
            signal = options.signal if options else None
            # Hand the stream over to the replay (saves a generator layer per event).
            outer.set_source(_deltas(message, self._min, self._max, self._tokens_per_second, signal))
        except Exception as error:
            yield ErrorEvent(reason="error", error=_error_message(error, self.api, self.provider, model.id))

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
    min_size = max(1, min(token_size.get("min", DEFAULT_MIN_TOKEN_SIZE), token_size.get("max", DEFAULT_MAX_TOKEN_SIZE)))
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
