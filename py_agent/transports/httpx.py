"""The CPython transport: ``httpx`` streaming (``py_agent.ai.transport.HttpTransport``).

Each request gets its own ``AsyncClient`` (as pi builds an SDK client per call), so nothing is
bound to an event loop between calls. The body is read chunk by chunk as it arrives; aborting the
signal, or ``aclose()``, closes the response and its connection, so the server sees the client go.
No ``User-Agent`` is sent (the providers do not need one; docs/port-decisions.md #18).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Callable, Mapping

import httpx

from ..ai.abort import AbortError, AbortSignal
from ..ai.transport import HttpRequest, TransportError

__all__ = ["HttpxResponse", "HttpxTransport"]


def _message(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class HttpxResponse:
    """An open streaming response (status and headers known, body not read yet)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        response: httpx.Response,
        signal: AbortSignal | None,
        owns_client: bool,
    ) -> None:
        self.status = response.status_code
        self.status_text = response.reason_phrase or ""
        headers: dict[str, str] = {}
        for name, value in response.headers.multi_items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        self.headers: Mapping[str, str] = headers
        self._client = client
        self._response = response
        self._signal = signal
        self._owns_client = owns_client
        self._closed = False
        self._remove_listener: Callable[[], None] | None = None
        if signal is not None:
            self._remove_listener = signal.add_listener(self._on_abort)

    def _on_abort(self) -> None:
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().create_task(self.aclose())

    async def _iterate(self) -> AsyncIterator[bytes]:
        signal = self._signal
        try:
            async for chunk in self._response.aiter_bytes():
                if signal is not None and signal.aborted:
                    raise AbortError()
                if chunk:
                    yield chunk
        except (httpx.StreamClosed, httpx.ReadError, httpx.RemoteProtocolError) as error:
            if signal is not None and signal.aborted:
                raise AbortError() from None
            if self._closed and isinstance(error, httpx.StreamClosed):
                return
            raise TransportError(_message(error)) from None
        except httpx.HTTPError as error:
            if signal is not None and signal.aborted:
                raise AbortError() from None
            raise TransportError(_message(error)) from None

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._iterate()

    async def aread(self) -> bytes:
        try:
            return await self._response.aread()
        except httpx.HTTPError as error:
            raise TransportError(_message(error)) from None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None
        with contextlib.suppress(Exception):
            await self._response.aclose()
        if self._owns_client:
            with contextlib.suppress(Exception):
                await self._client.aclose()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every request's client: making one (loading the CA bundle) costs far more
    than the client itself (0.2-0.4 s against 0.2 ms, measured), and a context is bound to no event loop."""
    return httpx.create_ssl_context()


class HttpxTransport:
    """``HttpTransport`` over ``httpx``. ``connect_timeout`` bounds connecting only; reading has
    no timeout here (the provider layer has ``timeout_ms`` and ``idle_timeout_ms``)."""

    def __init__(self, client: httpx.AsyncClient | None = None, connect_timeout: float = 30.0) -> None:
        self._client = client
        self._connect_timeout = connect_timeout

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpxResponse:
        if signal is not None and signal.aborted:
            raise AbortError()
        owns = self._client is None
        client = self._client or httpx.AsyncClient(
            timeout=httpx.Timeout(None, connect=self._connect_timeout), follow_redirects=False, verify=_ssl_context()
        )
        try:
            built = client.build_request(request.method, request.url, headers=request.headers, content=request.body)
            given = {name.lower() for name in request.headers}
            for default in ("user-agent", "accept"):  # httpx's own defaults: send only what was asked
                if default not in given:
                    built.headers.pop(default, None)
            sending = asyncio.ensure_future(client.send(built, stream=True))
            if signal is None:
                response = await sending
            else:
                aborted = asyncio.ensure_future(signal.wait())
                try:
                    await asyncio.wait({sending, aborted}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not aborted.done():
                        aborted.cancel()
                if not sending.done():
                    sending.cancel()
                    with contextlib.suppress(BaseException):
                        await sending
                    raise AbortError()
                response = sending.result()
        except AbortError:
            if owns:
                await client.aclose()
            raise
        except asyncio.CancelledError:
            if owns:
                await client.aclose()
            raise
        except (httpx.HTTPError, OSError) as error:
            if owns:
                await client.aclose()
            if signal is not None and signal.aborted:
                raise AbortError() from None
            raise TransportError(_message(error)) from None
        return HttpxResponse(client, response, signal, owns)
