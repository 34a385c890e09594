"""An MCP client (JSON-RPC over :mod:`.http`), as pi's ``@earendil-works/pi-mcp`` ``McpClient``.

Connecting negotiates the era: a ``server/discover`` probe at 2026-07-28 (the official Python SDK 2.x
answers it: no handshake, no session, cancellation by closing the response stream), and on any sign
that the server does not speak it, the 2025 ``initialize`` handshake (``Mcp-Session-Id``,
``notifications/cancelled``, the GET stream for server notifications), as the SDK's own client does.

Requests time out after ``timeout`` seconds (60 by default, as pi); a progress notification for the
request starts the wait again. A session the server ended (404) is opened again and the request sent
once more, since the server did not run it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from .. import __version__
from ..ai.abort import AbortController, AbortError, AbortSignal
from ..ai.sse import aiter_sse
from ..ai.transport import HttpTransport, TransportError, get_default_transport
from .errors import (
    McpAuthRequiredError,
    McpClosedError,
    McpConnectError,
    McpError,
    McpException,
    McpHttpError,
    McpLegacySseError,
    McpMixedContentError,
    McpNotFoundError,
    McpSessionExpiredError,
    McpSessionHeaderHiddenError,
    McpTimeoutError,
)
from .http import Message, StreamableHttp, TokenSource, content_type, is_request, is_response, read_messages

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Revisions reached with ``initialize`` (newest first: the one offered)."""
MODERN_VERSION = "2026-07-28"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
DEFAULT_TIMEOUT = 60.0
MAX_LIST_PAGES = 1000
CANCEL_SEND_TIMEOUT = 5.0
DIAGNOSE_TIMEOUT = 5.0
STREAM_RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0)

Protocol = Literal["auto", "handshake", "modern"]
NotificationListener = Callable[[Any], object]
ProgressListener = Callable[[Mapping[str, Any]], object]


def _check_url(url: str, origin: str | None) -> None:
    # Browsers let a secure page call http://localhost (a potentially trustworthy origin), nothing else over http.
    local = urlsplit(url).hostname in ("localhost", "127.0.0.1", "::1")
    if origin and origin.startswith("https:") and url.startswith("http:") and not local:
        raise McpMixedContentError(url)


class McpClient:
    """One connection to one streamable HTTP server.

    ``headers`` go with every request (an ``Authorization`` header, say); ``token`` is asked for a
    bearer token before each request (OAuth) and ``on_unauthorized`` refreshes it after a 401;
    ``origin`` is the page's origin, for the errors that name it. ``protocol`` forces one era
    (tests; a server known to misbehave).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        transport: HttpTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        token: TokenSource | None = None,
        origin: str | None = None,
        protocol: Protocol = "auto",
        client_name: str = "py-agent",
        on_unauthorized: Callable[[McpAuthRequiredError], Awaitable[bool]] | None = None,
    ) -> None:
        self.http = StreamableHttp(url, transport or get_default_transport(), headers, token, origin)
        self.timeout = timeout
        self.on_unauthorized = on_unauthorized
        """After a 401: refresh the credentials (``True``: send the request once more)."""
        self.protocol: Protocol = protocol
        self.client_info = {"name": client_name, "version": __version__}
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._ids = itertools.count(1)
        self._listeners: dict[str, list[NotificationListener]] = {}
        self._progress: dict[int, Callable[[Mapping[str, Any]], None]] = {}
        self._shutdown = AbortController()
        self._stream_task: asyncio.Task[None] | None = None
        self._connected = False
        self._connecting: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        return self.http.url

    @property
    def protocol_version(self) -> str | None:
        return self.http.protocol_version

    @property
    def session_id(self) -> str | None:
        return self.http.session_id

    @property
    def connected(self) -> bool:
        return self._connected

    # -- connecting ----------------------------------------------------------------------------

    async def connect(self, signal: AbortSignal | None = None) -> None:
        """Negotiate the era and open the session; raises a named error when the server cannot be used."""
        if self._shutdown.signal.aborted:
            raise McpClosedError("MCP client is closed")
        for refreshed in (False, True):
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(self._connect(signal))
            try:
                await asyncio.shield(self._connecting)
                return
            except McpAuthRequiredError as error:
                if refreshed or self.on_unauthorized is None or not await self.on_unauthorized(error):
                    raise
            finally:
                if self._connecting is not None and self._connecting.done():
                    self._connecting = None

    async def _connect(self, signal: AbortSignal | None) -> None:
        _check_url(self.url, self.http.origin)
        self._connected = False
        self.http.session_id = None
        self.http.protocol_version = None
        self.http.modern = False
        if self.protocol != "handshake" and await self._discover(signal):
            return
        await self._initialize(signal)

    async def _discover(self, signal: AbortSignal | None) -> bool:
        """Probe 2026-07-28; ``False`` when the server does not speak it (then the handshake follows)."""
        self.http.modern = True
        self.http.protocol_version = MODERN_VERSION
        try:
            result = await self._request_once("server/discover", {}, signal, None, None)
        except McpError:
            if self.protocol == "modern":
                raise
        except McpHttpError as error:
            if self.protocol == "modern" or isinstance(error, McpAuthRequiredError) or error.status >= 500:
                raise
        else:
            versions = result.get("supportedVersions") if isinstance(result, dict) else None
            if isinstance(versions, list) and MODERN_VERSION in versions:
                self.capabilities = _dict(result.get("capabilities"))
                meta = _dict(result.get("_meta"))
                self.server_info = _dict(result.get("serverInfo") or meta.get(SERVER_INFO_META))
                self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
                self._connected = True
                self._start_stream()
                return True
        self.http.modern = False
        self.http.protocol_version = None
        return False

    async def _initialize(self, signal: AbortSignal | None) -> None:
        params = {"protocolVersion": HANDSHAKE_VERSIONS[0], "capabilities": {}, "clientInfo": self.client_info}
        try:
            result = await self._request_once("initialize", params, signal, None, None)
        except McpHttpError as error:
            if isinstance(error, McpAuthRequiredError) or error.status not in (400, 404, 405, 406):
                raise
            raise await self._diagnose(f"HTTP {error.status}") from None
        except McpException as error:
            if isinstance(error, McpConnectError | McpTimeoutError | McpError):
                raise
            raise await self._diagnose(str(error)) from None
        if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
            raise McpNotFoundError(self.url, "its initialize reply is not MCP's")
        version = result["protocolVersion"]
        if version not in HANDSHAKE_VERSIONS:
            raise McpException(f"MCP server selected unsupported protocol version {version}")
        self.http.protocol_version = version
        self.capabilities = _dict(result.get("capabilities"))
        self.server_info = _dict(result.get("serverInfo"))
        self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        try:
            await self.notify("notifications/initialized")
        except McpHttpError as error:
            if self.http.session_id is None and error.status == 400:
                # The server keeps sessions, but the page never saw the id it sent (CORS hides it).
                raise McpSessionHeaderHiddenError(self.url) from None
            raise
        self._connected = True
        self._start_stream()

    async def _diagnose(self, detail: str) -> McpConnectError:
        """Why a URL that refused ``initialize`` is not a streamable HTTP server: the old SSE transport
        (its GET stream starts with an ``endpoint`` event), or no MCP at all."""
        probe = AbortController()

        async def first_event() -> str | None:
            response = await self.http.send("GET", {"Accept": "text/event-stream"}, None, probe.signal)
            try:
                if response.status != 200 or content_type(response) != "text/event-stream":
                    return None
                async for event in aiter_sse(response.aiter_bytes()):
                    return event.event
                return None
            finally:
                await response.aclose()

        try:
            if await asyncio.wait_for(first_event(), DIAGNOSE_TIMEOUT) == "endpoint":
                return McpLegacySseError(self.url)
        except (McpException, TimeoutError, AbortError, TransportError):
            pass
        finally:
            probe.abort()
        return McpNotFoundError(self.url, detail)

    # -- requests ------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        on_progress: ProgressListener | None = None,
    ) -> Any:
        """Send a request and return its result; a JSON-RPC error raises :class:`McpError`."""
        expired = refreshed = False
        while True:
            if not self._connected:
                await self.connect(signal)
            try:
                return await self._request_once(method, dict(params or {}), signal, timeout, on_progress)
            except McpSessionExpiredError:
                if expired:
                    raise
                expired = True
                self._connected = False  # the server did not run it: a new session, and once more
            except McpAuthRequiredError as error:
                if refreshed or self.on_unauthorized is None or not await self.on_unauthorized(error):
                    raise
                refreshed = True  # a refreshed token, and once more

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        async for _ in self.http.post(message):
            pass

    def _envelope(self, params: dict[str, Any], progress_token: int | None) -> dict[str, Any]:
        meta = dict(params.get("_meta") or {})
        if progress_token is not None:
            meta["progressToken"] = progress_token
        if self.http.modern:
            meta[PROTOCOL_VERSION_META] = MODERN_VERSION
            meta[CLIENT_CAPABILITIES_META] = {}
            meta[CLIENT_INFO_META] = self.client_info
        if meta:
            params = {**params, "_meta": meta}
        return params

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        timeout: float | None,
        on_progress: ProgressListener | None,
    ) -> Any:
        if signal is not None and signal.aborted:
            raise AbortError()
        request_id = next(self._ids)
        limit = self.timeout if timeout is None else timeout
        inner = AbortController()
        loop = asyncio.get_running_loop()
        timed_out = False

        def expire() -> None:
            nonlocal timed_out
            timed_out = True
            inner.abort()

        timer = [loop.call_later(limit, expire) if limit > 0 else None]

        def progress(params: Mapping[str, Any]) -> None:
            if timer[0] is not None:
                timer[0].cancel()
                timer[0] = loop.call_later(limit, expire)
            if on_progress is not None:
                on_progress(params)

        remove = signal.add_listener(inner.abort) if signal is not None else None
        self._progress[request_id] = progress
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        message["params"] = self._envelope(params, request_id if on_progress is not None else None)
        try:
            async for reply in self.http.post(message, inner.signal):
                if is_response(reply) and reply.get("id") == request_id:
                    error = reply.get("error")
                    if isinstance(error, dict):
                        raise McpError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
                    return reply.get("result")
                await self._incoming(reply)
            raise McpException(f"MCP response stream for {method} ended without a response")
        except AbortError:
            if not inner.signal.aborted:
                raise
            await self._cancel(request_id, method, "Request timed out" if timed_out else "Aborted")
            if timed_out:
                raise McpTimeoutError(limit, method) from None
            raise
        finally:
            if timer[0] is not None:
                timer[0].cancel()
            if remove is not None:
                remove()
            self._progress.pop(request_id, None)
            inner.abort()

    async def _cancel(self, request_id: int, method: str, reason: str) -> None:
        """Tell a 2025 server to stop (2026-07-28: the closed stream said it); ``initialize`` is never cancelled."""
        if self.http.modern or method == "initialize" or not self._connected:
            return
        with contextlib.suppress(McpException, TimeoutError, AbortError):
            notice = self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
            await asyncio.wait_for(notice, CANCEL_SEND_TIMEOUT)

    async def _incoming(self, message: Message) -> None:
        """A notification or a server request that came with a reply or on the GET stream."""
        if is_request(message):
            self._spawn(self._answer(message))
            return
        method = message.get("method")
        params = message.get("params")
        if method == "notifications/progress" and isinstance(params, dict):
            on_progress = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            if on_progress is not None:
                on_progress(params)
        for listener in list(self._listeners.get(str(method), ())):
            listener(params)

    async def _answer(self, message: Message) -> None:
        """Answer the server's requests: ``ping``; this client offers no sampling, roots or elicitation."""
        if message.get("method") == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            error = {"code": -32601, "message": f"Method not found: {message.get('method')}"}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        if not self.http.modern:
            with contextlib.suppress(McpException):
                async for _ in self.http.post(reply):
                    pass

    def on_notification(self, method: str, listener: NotificationListener) -> Callable[[], None]:
        """Call ``listener(params)`` for every ``method`` notification. Returns a remover."""
        listeners = self._listeners.setdefault(method, [])
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    # -- the server-to-client stream -----------------------------------------------------------

    def _start_stream(self) -> None:
        """List changes reach the client on the GET stream (2025) or a ``subscriptions/listen`` stream (2026)."""
        if self._stream_task is not None and not self._stream_task.done():
            return
        if self.http.modern and not _dict(self.capabilities.get("tools")).get("listChanged"):
            return  # a 2025 session's GET stream is opened anyway (as pi): servers send more than list changes
        self._stream_task = self._spawn(self._run_stream())

    async def _run_stream(self) -> None:
        signal = self._shutdown.signal
        attempt = 0
        while not signal.aborted and attempt <= len(STREAM_RETRY_DELAYS):
            received = False
            try:
                async for message in self._open_stream(signal):
                    received = True
                    await self._incoming(message)
            except McpSessionExpiredError:
                self._connected = False
                return
            except (McpException, AbortError):
                if signal.aborted:
                    return
            except Exception:
                return
            if received:
                attempt = 0
            if attempt == len(STREAM_RETRY_DELAYS) or signal.aborted:
                return
            await asyncio.sleep(STREAM_RETRY_DELAYS[attempt])
            attempt += 1

    async def _open_stream(self, signal: AbortSignal) -> Any:
        if self.http.modern:
            params = self._envelope({"notifications": {"toolsListChanged": True}}, None)
            message: Message = {
                "jsonrpc": "2.0",
                "id": next(self._ids),
                "method": "subscriptions/listen",
                "params": params,
            }
            async for reply in self.http.post(message, signal):
                yield reply
            return
        response = await self.http.open_stream(signal)
        if response is None:
            await asyncio.Future()  # no GET stream offered: wait for the shutdown
            return
        try:
            async for reply in read_messages(response):
                yield reply
        finally:
            await response.aclose()

    # -- lists and calls -----------------------------------------------------------------------

    async def list_tools(self, signal: AbortSignal | None = None) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor`` through all pages."""
        tools: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self.request("tools/list", {"cursor": cursor} if cursor else {}, signal=signal)
            items = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(items, list):
                raise McpException("Invalid MCP tools/list result")
            tools.extend(tool for tool in items if isinstance(tool, dict) and isinstance(tool.get("name"), str))
            cursor = result.get("nextCursor") or None
            if cursor is None:
                return tools
            if not isinstance(cursor, str) or cursor in seen:
                raise McpException(f"MCP tools/list returned an invalid or repeated cursor: {cursor!r}")
            seen.add(cursor)
        raise McpException(f"MCP tools/list exceeded {MAX_LIST_PAGES} pages")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        on_progress: ProgressListener | None = None,
    ) -> dict[str, Any]:
        params = {"name": name, "arguments": dict(arguments or {})}
        result = await self.request("tools/call", params, signal=signal, timeout=timeout, on_progress=on_progress)
        if not isinstance(result, dict) or not isinstance(result.get("content", []), list):
            raise McpException("Invalid MCP tools/call result")
        return {"content": [], **result}

    async def read_resource(self, uri: str, signal: AbortSignal | None = None) -> dict[str, Any]:
        result = await self.request("resources/read", {"uri": uri}, signal=signal)
        if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
            raise McpException("Invalid MCP resources/read result")
        return result

    # -- lifetime ------------------------------------------------------------------------------

    def _spawn(self, awaitable: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(awaitable)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        """Stop the streams and end the session (DELETE, best effort)."""
        if self._shutdown.signal.aborted:
            return
        self._shutdown.abort()
        for task in list(self._tasks):
            task.cancel()
        if self._connected:
            ending = AbortController()
            with contextlib.suppress(McpException, TimeoutError, AbortError):
                await asyncio.wait_for(self.http.delete_session(ending.signal), 1)
            ending.abort()
        self._connected = False

    async def __aenter__(self) -> McpClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
