"""Machinery shared by the wire APIs: requests, retries, errors, abort, idle timeout, assembly.

Each API module is mostly a mapping: it builds ``(url, headers, payload)`` from a ``Context``
(:class:`ApiAdapter.build_request`), formats HTTP errors its provider's way, and turns decoded SSE
events into assembler calls. :func:`start_stream` does the rest, identically for every API:

* the key check (``No API key for provider: <provider>`` unless the model is keyless), the
  ``on_payload`` hook (a non-``None`` result replaces the body), compact JSON with lone surrogates
  removed;
* one retry policy (spec §2.4): connection errors and HTTP 408/409/429/5xx before any body byte,
  ``x-should-retry`` honoured, ``insufficient_quota`` never retried, delays from ``retry-after-ms``,
  ``retry-after``, body hints, else jittered exponential backoff; a server delay above
  ``max_retry_delay_ms`` fails at once; the backoff sleep is abortable; each retry is announced to
  ``on_retry`` first (a py-agent addition, so an app can show the wait);
* ``on_response(ProviderResponse(status, headers), model)`` once per successful response,
  before ``start``;
* abort: the body stream is cancelled (the connection closes), partial content is kept, the
  message ends with stop reason ``aborted`` and ``Request was aborted``;
* an optional idle timeout (``idle_timeout_ms``): no bytes for that long ends the stream with
  ``Stream stalled: no data for <n>s``;
* completion markers (§2.6): a body that ends before its API's terminal marker is an error;
* the contract: once called, a stream function never raises; every failure is one ``error`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import math
import random
import re
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from .._util import MAX_JSON_DEPTH, error_text, json_stringify, json_too_deep, maybe_await
from ..abort import AbortError, AbortSignal
from ..event_stream import AssistantMessageEventStream
from ..events import (
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
from ..models import calculate_cost, clamp_thinking_level, model_requires_api_key
from ..partial_json import parse_streaming_json
from ..sse import SSEDecoder, SSEEvent
from ..transport import HttpRequest, HttpResponse, HttpTransport, TransportError, get_default_transport
from ..types import (
    AssistantMessage,
    Context,
    Model,
    ProviderResponse,
    RetryInfo,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    append_text,
    now_ms,
    to_stream_options,
    tool_json_schema,
)

ABORTED_MESSAGE = "Request was aborted"
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
MAX_ERROR_BODY_CHARS = 4000
MAX_ERROR_BODY_BYTES = 1_000_000
_REPARSE_ALWAYS = 8192


@dataclass(kw_only=True)
class ProviderStreamOptions(SimpleStreamOptions):
    """``SimpleStreamOptions`` plus the provider-specific extras pi's stream functions accept."""

    tool_choice: Any = None
    """Chat: ``"auto"|"none"|"required"|{...}``; Anthropic: ``"auto"|"any"|"none"|{...}``; Gemini: mode name."""
    reasoning_summary: str | None = None
    """Responses: ``"auto"|"detailed"|"concise"``."""
    service_tier: str | None = None
    """Responses: ``"flex"|"priority"|...``; also scales the cost."""
    interleaved_thinking: bool = True
    """Anthropic: send the interleaved-thinking beta (budget models)."""


def option(options: SimpleStreamOptions, name: str, default: Any = None) -> Any:
    """A provider-specific option, present only on :class:`ProviderStreamOptions` (or subclasses)."""
    value = getattr(options, name, None)
    return default if value is None else value


class ProviderError(Exception):
    """A failure that ends the stream with this message (stop reason ``error`` unless aborted)."""


# ---------------------------------------------------------------------------------------------
# Small helpers


_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Remove lone UTF-16 surrogates (they cannot be encoded as UTF-8)."""
    if text.isascii():
        return text
    return _SURROGATES.sub("", text)


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def short_hash(text: str) -> str:
    """pi's ``shortHash``: a deterministic 53-bit hash over UTF-16 code units, in base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def join_url(base_url: str, path: str) -> str:
    """``base + path`` by string concatenation (keeps query-string proxy base URLs working)."""
    return base_url.rstrip("/") + path


def merge_headers(*sources: Mapping[str, str | None] | None) -> dict[str, str]:
    """Merge header dicts, later ones winning case-insensitively; a ``None`` value removes a header."""
    merged: dict[str, tuple[str, str]] = {}
    for source in sources:
        if not source:
            continue
        for name, value in source.items():
            key = name.lower()
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = (name, str(value))
    return dict(merged.values())


def openai_headers(model: Model, options: SimpleStreamOptions, api_key: str | None) -> dict[str, str]:
    """The headers of both OpenAI APIs (Chat Completions and Responses): a bearer key, then the
    model's and the call's headers over them."""
    defaults: dict[str, str | None] = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        defaults["Authorization"] = f"Bearer {api_key}"
    return merge_headers(defaults, model.headers, options.headers)


def tool_spec(tool: Any) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, JSON schema)`` of a tool given as a ``Tool``, an ``AgentTool`` or a dict."""
    if isinstance(tool, Mapping):
        name, description, parameters = tool.get("name"), tool.get("description"), tool.get("parameters")
    else:
        name = getattr(tool, "name", None)
        description = getattr(tool, "description", None)
        parameters = getattr(tool, "parameters", None)
    schema = tool_json_schema(parameters) if parameters is not None else {"type": "object", "properties": {}}
    return str(name or ""), str(description or ""), schema


def reasoning_level(model: Model, options: SimpleStreamOptions) -> str | None:
    """The requested reasoning level clamped to what the model supports; ``None`` when off."""
    level = options.reasoning
    if not level or not model.reasoning:
        return None
    clamped = clamp_thinking_level(model, level)
    return None if clamped == "off" else clamped


def mapped_level(model: Model, level: str) -> Any:
    """``model.thinking_level_map[level]`` if present, else ``level`` (pi's ``map?.[x] ?? x``)."""
    mapping = model.thinking_level_map or {}
    value = mapping.get(level)
    return level if value is None else value


def compat_value(model: Model, name: str, default: Any = None) -> Any:
    compat = model.compat or {}
    value = compat.get(name)
    return default if value is None else value


def content_blocks(content: Any) -> list[Any]:
    """User/tool-result content as a list of blocks (a string becomes one text block)."""
    if isinstance(content, str):
        return [TextContent(text=content)]
    return list(content or [])


def parse_json_data(data: str) -> Any:
    """The JSON of an SSE ``data`` field; ``None`` for blank data (D13)."""
    if not data or data.isspace():
        return None
    if json_too_deep(data):
        raise ProviderError(f"Invalid JSON in SSE data: nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise ProviderError(f"Invalid JSON in SSE data: {data[:200]}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def format_delay(seconds: float) -> str:
    return f"{seconds:g}s"


# ---------------------------------------------------------------------------------------------
# HTTP errors


def error_body_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def truncate_body(text: str) -> str:
    if len(text) > MAX_ERROR_BODY_CHARS:
        return f"{text[:MAX_ERROR_BODY_CHARS]}... [truncated {len(text) - MAX_ERROR_BODY_CHARS} chars]"
    return text


def try_json(text: str) -> Any:
    if not text.strip() or json_too_deep(text):
        return None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def extract_error_message(text: str) -> str | None:
    """The human message of an error body: ``error.message``, ``error`` (string), ``message`` or
    ``detail``; ``None`` when the body has none."""
    body = try_json(text)
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        if message is not None:
            return json_stringify(message)
    if isinstance(error, str) and error:
        return error
    for key in ("message", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
        if value:
            return json_stringify(value)
    return None


def openai_style_error(status: int, text: str) -> str:
    """``"<status> <message>"`` (OpenAI SDK wording, with D16's richer extraction)."""
    if not text.strip():
        return f"{status} status code (no body)"
    message = extract_error_message(text)
    if message is None:
        return f"{status} {truncate_body(text)}"
    body = try_json(text)
    error = body.get("error") if isinstance(body, dict) else None
    raw = (
        error.get("metadata", {}).get("raw")
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict)
        else None
    )
    if raw:
        message = f"{message}\n{raw if isinstance(raw, str) else json_stringify(raw)}"
    return f"{status} {message}"


def summary_error_message(text: str) -> str:
    """The shortest readable form of an error body (for the retry-delay message)."""
    message = extract_error_message(text)
    if message is not None:
        return message
    return truncate_body(text.strip()) or "status code (no body)"


# ---------------------------------------------------------------------------------------------
# Retry policy (spec §2.4)


_RETRY_STATUSES = frozenset({408, 409, 429})
_BODY_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')
_BODY_RETRY_IN = re.compile(r"retry in (\d+(?:\.\d+)?)\s*(ms|s)\b", re.IGNORECASE)
_BODY_RESET_AFTER = re.compile(r"reset after ((?:\d+(?:\.\d+)?[hms])+)", re.IGNORECASE)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)([hms])")


def is_retryable(status: int, headers: Mapping[str, str], body_text: str) -> bool:
    should = headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    if status == 429:
        body = try_json(body_text)
        error = body.get("error") if isinstance(body, dict) else None
        return not (isinstance(error, dict) and "insufficient_quota" in (error.get("code"), error.get("type")))
    return status in _RETRY_STATUSES or status >= 500


def server_retry_delay(headers: Mapping[str, str], body_text: str) -> float | None:
    """The delay (seconds) the server asked for, from headers or body hints; ``None`` if none."""
    value = headers.get("retry-after-ms")
    if value:
        with contextlib.suppress(ValueError):
            delay = float(value) / 1000
            if delay >= 0 and math.isfinite(delay):
                return delay
    value = headers.get("retry-after")
    if value:
        try:
            delay = float(value)
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if value.strip() else None
            delay = parsed.timestamp() - time.time() if parsed is not None else -1.0
        if delay >= 0 and math.isfinite(delay):
            return delay
        if delay < 0 and value.strip():
            return 0.0
    match = _BODY_RETRY_DELAY.search(body_text)
    if match:
        return float(match.group(1))
    match = _BODY_RETRY_IN.search(body_text)
    if match:
        amount = float(match.group(1))
        return amount / 1000 if match.group(2).lower() == "ms" else amount
    match = _BODY_RESET_AFTER.search(body_text)
    if match:
        total = 0.0
        for amount, unit in _DURATION_PART.findall(match.group(1)):
            total += float(amount) * {"h": 3600, "m": 60, "s": 1}[unit.lower()]
        return total
    return None


def backoff_delay(retries_done: int) -> float:
    """The SDKs' jittered exponential backoff, in seconds."""
    return float(min(0.5 * 2.0**retries_done, 8.0) * (1 - random.random() * 0.25))


async def abortable_sleep(seconds: float, signal: AbortSignal | None) -> None:
    if signal is None:
        await asyncio.sleep(seconds)
        return
    if signal.aborted:
        raise AbortError()
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({waiter}, timeout=seconds)
    finally:
        if not waiter.done():
            waiter.cancel()
    if signal.aborted:
        raise AbortError()


# ---------------------------------------------------------------------------------------------
# The adapter interface


@dataclass
class BuiltRequest:
    url: str
    headers: dict[str, str]
    payload: Any


class ApiAdapter(Protocol):
    api: ClassVar[str]
    completion_marker: ClassVar[str]
    """Named in ``Stream ended unexpectedly: no <marker> received``."""

    def build_request(
        self, model: Model, context: Context, options: SimpleStreamOptions, api_key: str | None
    ) -> BuiltRequest: ...

    def format_http_error(self, status: int, status_text: str, headers: Mapping[str, str], text: str) -> str: ...

    async def process(self, call: StreamCall) -> None:
        """Consume ``call.events()`` into ``call.out``; set ``call.completed`` at the terminal marker
        and return early after it if the API's body may stay open."""
        ...


# ---------------------------------------------------------------------------------------------
# The assembler


class Assembler:
    """Mutates one partial ``AssistantMessage`` and pushes the protocol events.

    Exactly one block is open at a time (blocks never interleave); opening a new one closes the
    current one. Raw tool-argument JSON is kept here, never on the block (D5).
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


# ---------------------------------------------------------------------------------------------
# One provider call


class StreamCall:
    """State of one provider call: the live message, the assembler and the decoded event stream."""

    def __init__(
        self,
        adapter: ApiAdapter,
        model: Model,
        context: Context,
        options: SimpleStreamOptions,
        stream: AssistantMessageEventStream,
    ) -> None:
        self.adapter = adapter
        self.model = model
        self.context = context
        self.options = options
        self.stream = stream
        self.signal: AbortSignal | None = options.signal
        self.out = AssistantMessage.model_construct(
            role="assistant",
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            response_model=None,
            response_id=None,
            diagnostics=None,
            usage=Usage(),
            stop_reason="stop",
            error_message=None,
            timestamp=now_ms(),
        )
        self.asm = Assembler(stream, self.out, model)
        self.completed = False
        """Set by the API when its terminal marker arrived."""
        self.error_stop: str | None = None
        """Set by the API for an error-class stop reason: the stream completes, then fails with it."""
        self.response: HttpResponse | None = None

    # -- events ---------------------------------------------------------------------------------

    def set_stop_reason(self, reason: str, error_message: str | None = None) -> None:
        self.out.stop_reason = reason  # type: ignore[assignment]
        if reason == "error":
            self.error_stop = error_message or "Provider returned an error stop reason"
        else:
            self.error_stop = None

    async def events(self) -> AsyncIterator[SSEEvent]:
        """The response body as SSE events, with abort and idle-timeout handling."""
        decoder = SSEDecoder()
        async for chunk in self._chunks():
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.flush():
            yield event

    async def _chunks(self) -> AsyncIterator[bytes]:
        response = self.response
        assert response is not None
        iterator = response.aiter_bytes().__aiter__()
        idle = self.options.idle_timeout_ms
        timeout = idle / 1000 if idle and idle > 0 else None
        signal = self.signal
        abort_waiter: asyncio.Future[None] | None = None
        if signal is not None:
            abort_waiter = asyncio.ensure_future(signal.wait())
        try:
            while True:
                if signal is not None and signal.aborted:
                    raise AbortError()
                if abort_waiter is None and timeout is None:
                    try:
                        chunk = await iterator.__anext__()
                    except StopAsyncIteration:
                        return
                    except (AbortError, ProviderError):
                        raise
                    except Exception as error:
                        raise ProviderError(f"Connection error: {error_text(error)}") from None
                else:
                    next_task = asyncio.ensure_future(iterator.__anext__())
                    waiters: set[asyncio.Future[Any]] = {next_task}
                    if abort_waiter is not None:
                        waiters.add(abort_waiter)
                    done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                    if next_task not in done:
                        next_task.cancel()
                        with contextlib.suppress(BaseException):
                            await next_task
                        if signal is not None and signal.aborted:
                            raise AbortError()
                        raise ProviderError(f"Stream stalled: no data for {format_delay(timeout or 0)}")
                    try:
                        chunk = next_task.result()
                    except StopAsyncIteration:
                        return
                    except (AbortError, ProviderError):
                        raise
                    except Exception as error:
                        if signal is not None and signal.aborted:
                            raise AbortError() from None
                        raise ProviderError(f"Connection error: {error_text(error)}") from None
                if chunk:
                    yield chunk
        finally:
            if abort_waiter is not None and not abort_waiter.done():
                abort_waiter.cancel()

    async def close_response(self) -> None:
        response = self.response
        if response is not None:
            with contextlib.suppress(BaseException):
                await response.aclose()


# ---------------------------------------------------------------------------------------------
# Sending with retries


def _transport(options: SimpleStreamOptions) -> HttpTransport:
    transport = options.http_transport
    return transport if transport is not None else get_default_transport()


def _connection_error(error: BaseException, model: Model) -> str:
    message = f"Connection error: {error_text(error)}"
    if isinstance(error, TransportError) and error.cors_suspected:
        hint = _local_server_hint(model)
        if hint:
            message = f"{message} {hint}"
    return message


def _local_server_hint(model: Model) -> str:
    base = model.base_url.lower()
    provider = model.provider.lower()
    if provider == "ollama" or ":11434" in base:
        return "For Ollama, allow this page's origin with the OLLAMA_ORIGINS environment variable."
    if provider in ("lmstudio", "lm-studio") or ":1234" in base:
        return 'For LM Studio, turn on "Enable CORS" in its server settings.'
    return ""


async def _send_once(
    transport: HttpTransport, request: HttpRequest, signal: AbortSignal | None, timeout_s: float | None
) -> HttpResponse:
    if timeout_s is None:
        return await transport.send(request, signal)
    try:
        return await asyncio.wait_for(transport.send(request, signal), timeout_s)
    except TimeoutError:
        raise TransportError("Request timed out.") from None


async def _report_retry(
    call: StreamCall, attempt: int, max_retries: int, delay: float, status: int | None, server_delay: bool, error: str
) -> None:
    hook = call.options.on_retry
    if hook is None:
        return
    info = RetryInfo(
        attempt=attempt,
        max_retries=max_retries,
        delay_ms=round(delay * 1000),
        status=status,
        server_delay=server_delay,
        error=error,
    )
    with contextlib.suppress(Exception):
        await maybe_await(hook(info, call.model))


async def send_with_retries(call: StreamCall, request: HttpRequest) -> HttpResponse:
    options = call.options
    transport = _transport(options)
    max_retries = DEFAULT_MAX_RETRIES if options.max_retries is None else max(0, options.max_retries)
    max_delay_ms = DEFAULT_MAX_RETRY_DELAY_MS if options.max_retry_delay_ms is None else options.max_retry_delay_ms
    timeout_ms = options.timeout_ms or options.idle_timeout_ms
    timeout_s = timeout_ms / 1000 if timeout_ms and timeout_ms > 0 else None
    signal = call.signal
    retries = 0
    while True:
        if signal is not None and signal.aborted:
            raise AbortError()
        try:
            response = await _send_once(transport, request, signal, timeout_s)
        except AbortError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if signal is not None and signal.aborted:
                raise AbortError() from None
            if retries < max_retries:
                delay = backoff_delay(retries)
                reason = _connection_error(error, call.model)
                await _report_retry(call, retries + 1, max_retries, delay, None, False, reason)
                await abortable_sleep(delay, signal)
                retries += 1
                continue
            raise ProviderError(_connection_error(error, call.model)) from None
        status = response.status
        if 200 <= status < 300:
            return response
        try:
            raw = await response.aread()
        except AbortError:
            raise
        except Exception:
            raw = b""
        finally:
            with contextlib.suppress(BaseException):
                await response.aclose()
        text = error_body_text(raw[:MAX_ERROR_BODY_BYTES])
        headers = response.headers
        message = call.adapter.format_http_error(status, response.status_text or "", headers, text)
        if retries < max_retries and is_retryable(status, headers, text):
            requested = server_retry_delay(headers, text)
            if requested is not None and max_delay_ms and max_delay_ms > 0 and requested * 1000 > max_delay_ms:
                raise ProviderError(
                    f"Server requested {math.ceil(requested)}s retry delay "
                    f"(max: {math.ceil(max_delay_ms / 1000)}s). {summary_error_message(text)}"
                )
            delay = requested if requested is not None else backoff_delay(retries)
            await _report_retry(call, retries + 1, max_retries, delay, status, requested is not None, message)
            await abortable_sleep(delay, signal)
            retries += 1
            continue
        raise ProviderError(message)


# ---------------------------------------------------------------------------------------------
# Running a call


_tasks: set[asyncio.Task[None]] = set()


def start_stream(adapter: ApiAdapter, model: Any, context: Any, options: Any) -> AssistantMessageEventStream:
    """Run one provider call in a task; the returned stream always ends with ``done`` or ``error``.

    ``model``, ``context`` and ``options`` may also be given as mappings (pi-JSON or snake_case).
    """
    stream = AssistantMessageEventStream()
    try:
        model = model if isinstance(model, Model) else Model.model_validate(model)
        context = context if isinstance(context, Context) else Context.model_validate(context or {})
        options = to_stream_options(options)
    except Exception as error:
        message = AssistantMessage(
            api=str(getattr(model, "api", None) or adapter.api),
            provider=str(getattr(model, "provider", None) or ""),
            model=str(getattr(model, "id", None) or ""),
            stop_reason="error",
            error_message=f"Invalid stream arguments: {error_text(error)}",
        )
        stream.push(ErrorEvent.model_construct(type="error", reason="error", error=message))
        stream.end(message)
        return stream
    call = StreamCall(adapter, model, context, options, stream)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _fail(call, RuntimeError("stream functions need a running asyncio event loop"))
        return stream
    task = loop.create_task(_run(call))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return stream


def _fail(call: StreamCall, error: BaseException | str) -> None:
    out = call.out
    aborted = isinstance(error, AbortError) or (call.signal is not None and call.signal.aborted)
    out.stop_reason = "aborted" if aborted else "error"
    out.error_message = ABORTED_MESSAGE if aborted else (error if isinstance(error, str) else error_text(error))
    call.stream.push(ErrorEvent.model_construct(type="error", reason=out.stop_reason, error=out))
    call.stream.end(out)


async def _run(call: StreamCall) -> None:
    model, options = call.model, call.options
    try:
        if call.signal is not None and call.signal.aborted:
            raise AbortError()
        api_key = options.api_key or None
        if api_key is None and model_requires_api_key(model):
            raise ProviderError(f"No API key for provider: {model.provider}")
        built = call.adapter.build_request(model, call.context, options, api_key)
        payload = built.payload
        if options.on_payload is not None:
            replaced = await maybe_await(options.on_payload(payload, model))
            if replaced is not None:
                payload = replaced
        body = json_stringify(payload).encode("utf-8", errors="replace")
        request = HttpRequest(method="POST", url=built.url, headers=built.headers, body=body)
        call.response = await send_with_retries(call, request)
        if options.on_response is not None:
            response = call.response
            await maybe_await(
                options.on_response(ProviderResponse(status=response.status, headers=dict(response.headers)), model)
            )
        call.asm.start()
        await call.adapter.process(call)
        if call.signal is not None and call.signal.aborted:
            raise AbortError()
        if not call.completed:
            raise ProviderError(f"Stream ended unexpectedly: no {call.adapter.completion_marker} received")
        call.asm.close()
        if call.error_stop is not None:
            raise ProviderError(call.error_stop)
        reason = cast(Any, call.out.stop_reason)
        call.stream.push(DoneEvent.model_construct(type="done", reason=reason, message=call.out))
        call.stream.end(call.out)
    except asyncio.CancelledError:
        _fail(call, ABORTED_MESSAGE if call.signal is not None and call.signal.aborted else "Request was cancelled")
        raise
    except ProviderError as error:
        _fail(call, str(error))
    except AbortError as error:
        _fail(call, error)
    except Exception as error:
        _fail(call, error)
    finally:
        await call.close_response()


__all__ = [
    "ABORTED_MESSAGE",
    "ApiAdapter",
    "Assembler",
    "BuiltRequest",
    "ProviderError",
    "ProviderStreamOptions",
    "StreamCall",
    "compat_value",
    "content_blocks",
    "extract_error_message",
    "join_url",
    "mapped_level",
    "merge_headers",
    "openai_headers",
    "openai_style_error",
    "option",
    "parse_json_data",
    "reasoning_level",
    "sanitize_surrogates",
    "short_hash",
    "start_stream",
    "tool_spec",
]
