"""The Pyodide transport: the page's ``fetch`` with the body read through its stream reader.

Each ``await reader.read()`` hands over the bytes that arrived, so text reaches the agent as it
streams (no helper that buffers whole bodies). Aborting the ``AbortSignal`` aborts a JS
``AbortController`` wired to the request; ``aclose()`` cancels the reader and aborts too, so the
server sees the connection close. A rejected ``fetch`` is reported as a ``TransportError`` with
``cors_suspected=True``: browsers report CORS refusals, DNS failures and being offline alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from ..ai.abort import AbortError, AbortSignal
from ..ai.transport import HttpRequest, TransportError

__all__ = ["FetchResponse", "FetchTransport", "cors_error_message"]

# When a server streams fast, reads resolve at once (the data is already there) and Python goes on
# in promise callbacks: microtasks, which the browser runs to the end before it renders or handles
# input. Handling a fast stream would then be one long main-thread task. So chunks are passed on in
# slices, and whenever the consumer has kept the thread for TIME_SLICE_S, the browser gets it back
# (asyncio.sleep(0) is a new task in Pyodide's event loop, not a microtask).
SLICE_BYTES = 4096
TIME_SLICE_S = 0.008


def cors_error_message(url: str, detail: str) -> str:
    origin = url.split("/", 3)
    host = "/".join(origin[:3]) if len(origin) >= 3 else url
    return (
        f"{detail or 'Failed to fetch'} ({host}). The browser refused or could not complete the request: "
        "this is how it reports a server that does not allow calls from this page (CORS), an unreachable "
        "host and being offline alike."
    )  # what to do depends on the provider: py_agent/app/network.py unreachable_advice


def _js_error_text(error: BaseException) -> str:
    text = str(error)
    for prefix in ("TypeError: ", "Error: "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def _is_abort_error(error: BaseException) -> bool:
    return "AbortError" in str(error) or "aborted" in str(error).lower()


class FetchResponse:
    def __init__(
        self, response: Any, controller: Any, signal: AbortSignal | None, remove: Callable[[], None] | None
    ) -> None:
        self._response = response
        self._controller = controller
        self._signal = signal
        self._remove = remove
        self._reader: Any = None
        self._closed = False
        self.status: int = int(response.status)
        self.status_text: str = str(response.statusText or "")
        headers: dict[str, str] = {}
        for pair in response.headers.entries():
            headers[str(pair[0]).lower()] = str(pair[1])
        self.headers: Mapping[str, str] = headers

    def _aborted(self) -> bool:
        return self._signal is not None and self._signal.aborted

    async def _iterate(self) -> AsyncIterator[bytes]:
        body = self._response.body
        if body is None:
            return
        self._reader = body.getReader()
        reader = self._reader
        resumed = time.perf_counter()
        while True:
            try:
                result = await reader.read()
            except Exception as error:
                if self._aborted() or self._closed:
                    raise AbortError() from None
                raise TransportError(_js_error_text(error)) from None
            if result.done:
                return
            if self._aborted():
                raise AbortError()
            value = result.value
            if value is not None:
                chunk = value.to_bytes()
                for start in range(0, len(chunk), SLICE_BYTES):
                    if time.perf_counter() - resumed > TIME_SLICE_S:
                        await asyncio.sleep(0)
                        if self._aborted() or self._closed:
                            raise AbortError()
                        resumed = time.perf_counter()
                    yield chunk[start : start + SLICE_BYTES]

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._iterate()

    async def aread(self) -> bytes:
        try:
            buffer = await self._response.arrayBuffer()
        except Exception as error:
            if self._aborted():
                raise AbortError() from None
            raise TransportError(_js_error_text(error)) from None
        return bytes(buffer.to_bytes())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._remove is not None:
            self._remove()
            self._remove = None
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader.cancel()
        with contextlib.suppress(Exception):
            self._controller.abort()


class FetchTransport:
    """``HttpTransport`` over the browser's ``fetch`` (Pyodide only)."""

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> FetchResponse:
        import js  # type: ignore[import-not-found]
        from pyodide.ffi import to_js  # type: ignore[import-not-found]

        if signal is not None and signal.aborted:
            raise AbortError()
        controller = js.AbortController.new()
        remove = signal.add_listener(lambda: controller.abort()) if signal is not None else None
        init: dict[str, Any] = {
            "method": request.method,
            "headers": to_js(dict(request.headers), dict_converter=js.Object.fromEntries),
            "signal": controller.signal,
        }
        if request.body is not None:
            init["body"] = request.body.decode("utf-8", errors="replace")
        try:
            response = await js.fetch(request.url, to_js(init, dict_converter=js.Object.fromEntries))
        except asyncio.CancelledError:
            # Cancelled (e.g. the wait for headers timed out): the browser must drop the request
            # too, or every timed-out request keeps one of the host's few connections busy.
            if remove is not None:
                remove()
            controller.abort()
            raise
        except Exception as error:
            if remove is not None:
                remove()
            if (signal is not None and signal.aborted) or _is_abort_error(error):
                raise AbortError() from None
            raise TransportError(cors_error_message(request.url, _js_error_text(error)), cors_suspected=True) from None
        return FetchResponse(response, controller, signal, remove)
