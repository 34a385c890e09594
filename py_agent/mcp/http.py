"""MCP's streamable HTTP transport over py_agent's ``HttpTransport`` (httpx in CPython, ``fetch`` in
the page): one POST per JSON-RPC message, answered with JSON or an SSE stream; the session id and
protocol-version headers; the server-to-client GET stream; the HTTP statuses as named errors.

Two eras of the transport share this code: the 2025 revisions (``initialize`` handshake, then
``Mcp-Session-Id`` and ``MCP-Protocol-Version`` on every request) and 2026-07-28 (no session; every
request names its method in ``Mcp-Method`` and its tool or resource in ``Mcp-Name``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ..ai.abort import AbortError, AbortSignal
from ..ai.sse import aiter_sse
from ..ai.transport import HttpRequest, HttpResponse, HttpTransport, TransportError
from .errors import (
    McpAuthRequiredError,
    McpConnectError,
    McpCorsError,
    McpException,
    McpHttpError,
    McpSessionExpiredError,
)

Message = dict[str, Any]
"""A JSON-RPC message as sent on the wire (the specification's shapes, checked where read)."""

MAX_ERROR_BODY = 8 * 1024
ERROR_SNIPPET = 500
NAME_BEARING_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""2026-07-28 requests repeat this parameter in the ``Mcp-Name`` header."""
_HEADER_SAFE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")

TokenSource = Callable[[], Awaitable[str | None]]


def encode_header_value(value: str) -> str:
    """A header value as 2026-07-28 carries it: printable ASCII as is, anything else base64-wrapped."""
    if _HEADER_SAFE.fullmatch(value) and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


def is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and "id" in message


class StreamableHttp:
    """The connection state of one server: URL, headers, session id and protocol version."""

    def __init__(
        self,
        url: str,
        transport: HttpTransport,
        headers: Mapping[str, str] | None = None,
        token: TokenSource | None = None,
        origin: str | None = None,
    ) -> None:
        self.url = url
        self.transport = transport
        self.headers = dict(headers or {})
        self.token = token
        self.origin = origin
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.modern = False
        """2026-07-28: every request carries its own envelope; there is no session."""

    async def _headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        headers = dict(self.headers)
        headers.update(extra)
        if self.session_id and not self.modern:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.token is not None and (token := await self.token()):
            headers["Authorization"] = f"Bearer {token}"
        return headers

    async def send(
        self, method: str, extra: Mapping[str, str], body: bytes | None, signal: AbortSignal | None
    ) -> HttpResponse:
        """One request; a rejected fetch becomes a named error (CORS in the page)."""
        request = HttpRequest(method, self.url, await self._headers(extra), body)
        try:
            return await self.transport.send(request, signal)
        except TransportError as error:
            if error.cors_suspected:
                raise McpCorsError(self.url, self.origin) from None
            raise McpConnectError(
                f"Cannot reach the MCP server at {self.url}: {error}.", "Check the URL and that the server runs."
            ) from None

    async def post(self, message: Message, signal: AbortSignal | None = None) -> AsyncIterator[Message]:
        """POST ``message``; the messages of the reply (none for a notification or a response)."""
        extra = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.modern and "method" in message:
            extra["Mcp-Method"] = message["method"]
            key = NAME_BEARING_METHODS.get(message["method"])
            value = (message.get("params") or {}).get(key) if key else None
            if isinstance(value, str):
                extra["Mcp-Name"] = encode_header_value(value)
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        response = await self.send("POST", extra, body, signal)
        try:
            await check_status(response, self.session_id is not None and not self.modern)
            if (session := response.headers.get("mcp-session-id")) and not self.modern:
                self.session_id = session
            if not is_request(message) or response.status in (202, 204):
                await response.aclose()
                if is_request(message):
                    raise McpHttpError(response.status, f"MCP server accepted {message['method']} without a reply")
                return
            async for reply in read_messages(response):
                yield reply
        finally:
            await response.aclose()

    async def open_stream(self, signal: AbortSignal) -> HttpResponse | None:
        """The server-to-client GET stream of a 2025 session; ``None`` when the server offers none (405)."""
        response = await self.send("GET", {"Accept": "text/event-stream"}, None, signal)
        if response.status == 405:
            await response.aclose()
            return None
        await check_status(response, self.session_id is not None)
        return response

    async def delete_session(self, signal: AbortSignal) -> None:
        """End the session on the server (best effort)."""
        if self.session_id is None or self.modern:
            return
        response = await self.send("DELETE", {}, None, signal)
        await response.aclose()


def content_type(response: HttpResponse) -> str:
    return (response.headers.get("content-type") or "").split(";", 1)[0].strip().lower()


async def read_text(response: HttpResponse, limit: int = MAX_ERROR_BODY) -> str:
    """The start of a body (at most ``limit`` bytes); the rest is not read."""
    data = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except (TransportError, AbortError):
        pass
    finally:
        await response.aclose()
    return bytes(data[:limit]).decode("utf-8", errors="replace")


async def check_status(response: HttpResponse, in_session: bool) -> None:
    """Raise the named error of a failed response (its body read only as far as the message needs)."""
    status = response.status
    if 200 <= status < 300:
        return
    challenge = response.headers.get("www-authenticate")
    if status == 401 or (status == 403 and challenge and "insufficient_scope" in challenge):
        raise McpAuthRequiredError(status, challenge, await read_text(response))
    body = await read_text(response)
    if status == 404 and in_session:
        raise McpSessionExpiredError(body)
    text = body.strip()
    snippet = text if len(text) <= ERROR_SNIPPET else text[: ERROR_SNIPPET - 3] + "..."
    raise McpHttpError(
        status, f"MCP HTTP request failed with status {status}" + (f": {snippet}" if snippet else ""), body
    )


async def read_messages(response: HttpResponse) -> AsyncIterator[Message]:
    """The JSON-RPC messages of a reply: a JSON body (one message or a batch) or an SSE stream."""
    kind = content_type(response)
    if kind == "application/json":
        text = (await response.aread()).decode("utf-8", errors="replace")
        try:
            body = json.loads(text)
        except ValueError:
            raise McpException(f"MCP server sent invalid JSON: {text[:200]!r}") from None
        for item in body if isinstance(body, list) else [body]:
            if isinstance(item, dict):
                yield item
        return
    if kind == "text/event-stream":
        async for event in aiter_sse(response.aiter_bytes()):
            # Events without data prime resumption; other event types are not JSON-RPC.
            if not event.data.strip() or event.event not in (None, "message"):
                continue
            try:
                item = json.loads(event.data)
            except ValueError:
                continue
            if isinstance(item, dict):
                yield item
        return
    raise McpHttpError(response.status, f"Unsupported MCP response content type: {kind or 'missing'}")
