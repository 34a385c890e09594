"""A transport that sends every request through the user's CORS proxy: ``<proxy>/?url=<URL>``.

Used only for the providers the user marked (see :mod:`py_agent.app.network`): the proxy sees the
requests, keys included.
"""

from __future__ import annotations

from urllib.parse import quote

from ..ai.abort import AbortSignal
from ..ai.transport import HttpRequest, HttpResponse, HttpTransport, get_default_transport

__all__ = ["ProxyTransport"]


class ProxyTransport:
    """Sends every request to ``<proxy>/?url=<encoded URL>`` through another transport."""

    def __init__(self, proxy_url: str, inner: HttpTransport | None = None) -> None:
        self.proxy_url = proxy_url.strip().rstrip("/")
        self._inner = inner

    def target(self, url: str) -> str:
        return f"{self.proxy_url}/?url={quote(url, safe='')}"

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpResponse:
        inner = self._inner or get_default_transport()
        proxied = HttpRequest(request.method, self.target(request.url), dict(request.headers), request.body)
        return await inner.send(proxied, signal)
