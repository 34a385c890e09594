"""An in-memory ``HttpTransport`` for provider tests: scripted responses per method and URL, recorded
requests, no network (runs the same in CPython and in Pyodide).

    transport = FakeTransport()
    transport.add("GET", "http://localhost:11434/api/tags", json={"models": []})
    transport.add("POST", "http://localhost:11434/api/show", json=lambda req: {...})  # per request
    transport.add("GET", "http://x/v1/models", error=TransportError("Failed to fetch", cors_suspected=True))
    transport.add("GET", "http://x/stream", chunks=[b"data: 1\\n\\n", b"data: 2\\n\\n"])

Unscripted requests get ``404`` with a plain-text body (what most servers answer for unknown paths),
or ``default`` when given. ``transport.requests`` holds every ``HttpRequest`` sent, in order.
"""

from __future__ import annotations

import json as _json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_agent.ai.abort import AbortError, AbortSignal
from py_agent.ai.transport import HttpRequest

Body = bytes | str | Callable[[HttpRequest], "bytes | str"]


@dataclass
class FakeResponse:
    status: int = 200
    status_text: str = "OK"
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks: Sequence[bytes] = ()
    signal: AbortSignal | None = None
    closed: bool = False
    _next: int = 0

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        while self._next < len(self.chunks):
            if self.signal is not None and self.signal.aborted:
                raise AbortError()
            if self.closed:
                return
            chunk = self.chunks[self._next]
            self._next += 1
            yield chunk

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class _Route:
    method: str
    url: str
    status: int
    status_text: str
    headers: dict[str, str]
    body: Any  # bytes, str, JSON-able value, or a callable of the request giving one of those
    is_json: bool
    chunks: Sequence[bytes] | None
    error: BaseException | None
    times: int | None  # None: answer every time


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


class FakeTransport:
    def __init__(self, default: FakeResponse | None = None) -> None:
        self.routes: list[_Route] = []
        self.requests: list[HttpRequest] = []
        self.responses: list[FakeResponse] = []
        self.default = default

    def add(
        self,
        method: str,
        url: str,
        *,
        status: int = 200,
        json: Any = None,
        body: Body | None = None,
        chunks: Sequence[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        error: BaseException | None = None,
        times: int | None = None,
    ) -> FakeTransport:
        """Script the answer to ``method url`` (the URL must match exactly, query included)."""
        is_json = json is not None
        route_headers = {k.lower(): v for k, v in (headers or {}).items()}
        if is_json:
            route_headers.setdefault("content-type", "application/json")
        self.routes.append(
            _Route(
                method.upper(),
                url,
                status,
                _REASONS.get(status, ""),
                route_headers,
                json if is_json else body,
                is_json,
                chunks,
                error,
                times,
            )
        )
        return self

    def requests_to(self, url: str, method: str | None = None) -> list[HttpRequest]:
        return [r for r in self.requests if r.url == url and (method is None or r.method == method.upper())]

    @property
    def urls(self) -> list[str]:
        return [f"{r.method} {r.url}" for r in self.requests]

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> FakeResponse:
        self.requests.append(request)
        if signal is not None and signal.aborted:
            raise AbortError()
        route = self._match(request)
        if route is None:
            response = self.default or FakeResponse(404, "Not Found", {"content-type": "text/plain"},
                                                    [b"404 page not found"])
            response = FakeResponse(response.status, response.status_text, dict(response.headers),
                                    list(response.chunks), signal)
            self.responses.append(response)
            return response
        if route.error is not None:
            raise route.error
        if route.chunks is not None:
            chunks = list(route.chunks)
        else:
            body = route.body(request) if callable(route.body) else route.body
            if route.is_json:
                data = _json.dumps(body).encode()
            elif isinstance(body, str):
                data = body.encode()
            else:
                data = body or b""
            chunks = [data] if data else []
        response = FakeResponse(route.status, route.status_text, dict(route.headers), chunks, signal)
        self.responses.append(response)
        return response

    def _match(self, request: HttpRequest) -> _Route | None:
        for route in self.routes:
            if route.method == request.method.upper() and route.url == request.url:
                if route.times is not None:
                    if route.times <= 0:
                        continue
                    route.times -= 1
                return route
        return None


def request_json(request: HttpRequest) -> Any:
    """The JSON body of a recorded request."""
    assert request.body is not None, f"{request.method} {request.url} has no body"
    return _json.loads(request.body)
