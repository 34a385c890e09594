"""The stream driver: runs one provider call, identically for every wire API.

Each API module is mostly a mapping: it builds ``(url, headers, payload)`` from a ``Context``
(:class:`ApiAdapter.build_request`), formats HTTP errors its provider's way, and turns decoded SSE
events into :class:`~.assembler.Assembler` calls. :func:`start_stream` does the rest, identically for every API:

* the key check (``No API key for provider: <provider>`` unless the model is keyless), the
  ``on_payload`` hook (a non-``None`` result replaces the body), compact JSON with lone surrogates
  removed;
* one retry policy (:mod:`.retry`);
* ``on_response(ProviderResponse(status, headers), model)`` once per successful response,
  before ``start``;
* abort: the body stream is cancelled (the connection closes), partial content is kept, the
  message ends with stop reason ``aborted`` and ``Request was aborted``;
* an optional idle timeout (``idle_timeout_ms``): no bytes for that long ends the stream with
  ``Stream stalled: no data for <n>s``;
* completion markers: a body that ends before its API's terminal marker is an error;
* the contract: once called, a stream function never raises; every failure is one ``error`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from .._util import error_text, json_stringify, maybe_await
from ..abort import AbortError, AbortSignal
from ..event_stream import AssistantMessageEventStream
from ..events import (
    DoneEvent,
    ErrorEvent,
)
from ..models import model_requires_api_key
from ..sse import SSEDecoder, SSEEvent
from ..transport import HttpRequest, HttpResponse
from ..types import (
    AssistantMessage,
    Context,
    Model,
    ProviderResponse,
    SimpleStreamOptions,
    Usage,
    now_ms,
    to_stream_options,
)
from .assembler import Assembler
from .errors import ABORTED_MESSAGE, MID_REPLY_MARKER, ProviderError, format_delay
from .payload_cache import payload_json
from .retry import send_with_retries


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
                        raise ProviderError(f"Connection error: {MID_REPLY_MARKER} {error_text(error)}") from None
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
                        raise ProviderError(f"Connection error: {MID_REPLY_MARKER} {error_text(error)}") from None
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
            text = json_stringify(payload)
        else:
            text = payload_json(payload)  # the conversation's JSON kept from its last request
        body = text.encode("utf-8", errors="replace")
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


class ProviderStream(Protocol):
    """A wire API's stream function (also its ``stream_simple``: the unified options are mapped)."""

    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions | None = None
    ) -> AssistantMessageEventStream: ...


def stream_function(adapter: ApiAdapter, name: str, doc: str) -> ProviderStream:
    """The public stream function of ``adapter``'s API, named ``name`` (what each provider module exports)."""

    def stream(
        model: Model, context: Context, options: SimpleStreamOptions | None = None
    ) -> AssistantMessageEventStream:
        return start_stream(adapter, model, context, options)

    stream.__name__ = stream.__qualname__ = name
    stream.__doc__ = doc
    return stream
