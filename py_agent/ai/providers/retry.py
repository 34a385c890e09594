"""Sending a request with retries.

One policy for every wire API: connection errors and HTTP 408/409/429/5xx before any body byte
are retried, ``x-should-retry`` is honoured, ``insufficient_quota`` is never retried; delays come
from ``retry-after-ms``, ``retry-after`` or body hints, else jittered exponential backoff. A server
delay above ``max_retry_delay_ms`` fails at once; the backoff sleep is abortable; each retry is
announced to ``on_retry`` first (a py-agent addition, so an app can show the wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import random
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._util import error_text, maybe_await
from ..abort import AbortError, AbortSignal
from ..eager import start_eagerly
from ..transport import HttpRequest, HttpResponse, HttpTransport, TransportError, get_default_transport
from ..types import Model, RetryInfo, SimpleStreamOptions
from .errors import MAX_ERROR_BODY_BYTES, ProviderError, error_body_text, summary_error_message, try_json

if TYPE_CHECKING:
    from .driver import StreamCall  # the driver imports this module

DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RETRY_DELAY_MS = 60_000


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
    # Sent now, as without a timeout (Python 3.11's wait_for would start it one turn later).
    sending = start_eagerly(transport.send(request, signal))
    try:
        return await asyncio.wait_for(sending, timeout_s)
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
