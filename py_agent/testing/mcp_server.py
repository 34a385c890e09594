"""An MCP server for tests and examples: the official MCP Python SDK (``mcp`` from PyPI, the test
extra) on loopback, in a thread, behind a CORS middleware.

Its tools: ``add`` (text), ``pixel`` (an image), ``weather`` (structured content), ``slow`` (long,
with progress; records its cancellation), ``sleepy`` (long, silent), ``grow`` (adds a tool and
announces the change); one resource, ``res://greeting``. ``tools/list`` is paged (``page_size``).

Switches reproduce the servers the client must name: ``cors=False`` (no CORS headers),
``expose_session=False`` (CORS without ``Access-Control-Expose-Headers: Mcp-Session-Id``),
``legacy_only=True`` (refuses 2026-07-28, as a 2025 server), ``old_sse=True`` (only the old
HTTP+SSE transport), ``oauth=True`` (behind the SDK's authorization server, an in-memory
provider). ``seen`` lists the JSON-RPC methods the server received, ``events`` what its tools saw
(``"slow cancelled"``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import struct
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypedDict

# Tool signatures are read by the SDK at run time: what they name must be module globals.
import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_types import ListToolsResult

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]


def png_pixel(rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"\x00" + bytes(rgb)
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class WeatherReport(TypedDict):
    city: str
    temperature_c: float
    conditions: str


class InMemoryOAuthProvider:
    """The SDK's authorization-server interface, in memory: registers any client, approves every
    authorization at once (the redirect carries the code), issues short-lived tokens; ``expire()``
    makes every access token invalid, so the next request gets a 401 and the client must refresh."""

    def __init__(self, lifetime: int = 3600) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.lifetime = lifetime
        self.counter = 0
        self.refreshed = 0

    def _next(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}-{secrets.token_hex(8)}"

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = AuthorizationCode(
            code=self._next("code"),
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = self._next("access"), self._next("refresh")
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=self.lifetime, scope=" ".join(scopes), refresh_token=refresh)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(str(client.client_id), code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.refreshed += 1
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)

    def expire(self) -> None:
        self.access.clear()


def _build_server(state: McpTestServer) -> Any:
    class PagedServer(MCPServer):
        async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
            tools = await self.list_tools()
            start = int(params.cursor) if params is not None and params.cursor else 0
            end = start + state.page_size
            state.pages_served += 1
            return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    auth: dict[str, Any] = {}
    if state.oauth is not None:
        base = f"http://127.0.0.1:{state.port}"
        auth = {
            "auth_server_provider": state.oauth,
            "auth": AuthSettings(
                issuer_url=base,
                resource_server_url=f"{base}/mcp",
                client_registration_options=ClientRegistrationOptions(enabled=True),
                validate_token_resource=True,
            ),
        }
    server = PagedServer("test-tools", instructions="Tools for the py_agent MCP tests.", **auth)

    @server.tool(description="Add two integers and return the sum")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="A 1x1 red pixel, as an image")
    def pixel() -> Image:
        return Image(data=png_pixel(), format="png")

    @server.tool(description="The weather in a city, as structured content")
    def weather(city: str) -> WeatherReport:
        return {"city": city, "temperature_c": 21.5, "conditions": "sunny"}

    @server.tool(description="Work for a while, reporting progress")
    async def slow(seconds: float, ctx: Context) -> str:
        state.events.append("slow started")
        try:
            steps = max(1, int(seconds / 0.1))
            for step in range(steps):
                await ctx.report_progress(step + 1, steps, f"step {step + 1} of {steps}")
                await anyio.sleep(seconds / steps)
        except anyio.get_cancelled_exc_class():
            state.events.append("slow cancelled")
            raise
        state.events.append("slow finished")
        return "done"

    @server.tool(description="Sleep without a word")
    async def sleepy(seconds: float) -> str:
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            state.events.append("sleepy cancelled")
            raise
        return "awake"

    @server.tool(description="Add the tool 'extra' and announce the change")
    async def grow(ctx: Context) -> str:
        if "extra" not in {tool.name for tool in await server.list_tools()}:
            server.add_tool(lambda: "extra!", name="extra", description="Added by grow")
        await ctx.notify_tools_changed()  # 2026-07-28: subscriptions/listen streams
        if ctx.protocol_version != "2026-07-28":
            await ctx.session.send_tool_list_changed()  # 2025: the session's stream
        return "grown"

    @server.resource("res://greeting", description="A greeting")
    def greeting() -> str:
        return "Hello from the resource"

    return server


class McpTestServer:
    """Start with ``with McpTestServer() as server:``; ``server.url`` is the MCP endpoint."""

    def __init__(
        self,
        *,
        cors: bool = True,
        expose_session: bool = True,
        legacy_only: bool = False,
        old_sse: bool = False,
        json_response: bool = False,
        page_size: int = 2,
        allow_origin: str = "*",
        oauth: bool = False,
    ) -> None:
        self.cors = cors
        self.expose_session = expose_session
        self.legacy_only = legacy_only
        self.old_sse = old_sse
        self.json_response = json_response
        self.page_size = page_size
        self.allow_origin = allow_origin
        self.seen: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self.events: list[str] = []
        self.pages_served = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._uvicorn: Any = None
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        self.oauth = InMemoryOAuthProvider() if oauth else None
        """``oauth=True``: the server is behind the SDK's authorization server with this provider."""
        self.mcp = _build_server(self)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{'sse' if self.old_sse else 'mcp'}"

    def _app(self) -> ASGIApp:
        from starlette.middleware.cors import CORSMiddleware

        inner = self.mcp.sse_app() if self.old_sse else self.mcp.streamable_http_app(json_response=self.json_response)
        app: ASGIApp = self._recording(inner)
        if self.cors:
            expose = ["Mcp-Session-Id", "WWW-Authenticate"] if self.expose_session else []
            app = CORSMiddleware(
                app,
                allow_origins=[self.allow_origin],
                allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                allow_headers=["*"],
                expose_headers=expose,
            )
        return app

    def _recording(self, app: ASGIApp) -> ASGIApp:
        """Record each POSTed JSON-RPC method (and refuse 2026-07-28 when ``legacy_only``)."""

        async def recorded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            self.headers_seen.append(headers)
            if scope["method"] != "POST":
                await app(scope, receive, send)
                return
            chunks = []
            more = True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            body = b"".join(chunks)
            try:
                parsed = json.loads(body)
                for item in parsed if isinstance(parsed, list) else [parsed]:
                    if isinstance(item, dict) and "method" in item:
                        self.seen.append(str(item["method"]))
            except ValueError:
                pass
            if self.legacy_only and headers.get("mcp-protocol-version") == "2026-07-28":
                body = json.dumps(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Unsupported protocol version"}}
                ).encode()
                await send(
                    {"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json")]}
                )
                await send({"type": "http.response.body", "body": body})
                return
            replayed = False

            async def replay() -> Any:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await app(scope, replay, send)

        return recorded

    def start(self) -> McpTestServer:
        import uvicorn

        if self._thread is not None:
            return self

        config = uvicorn.Config(self._app(), log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
        self._uvicorn = uvicorn.Server(config)
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            loop.run_until_complete(self._uvicorn.serve(sockets=[self._socket]))

        self._thread = threading.Thread(target=run, name="mcp-test-server", daemon=True)
        self._thread.start()
        started.wait(10)
        for _ in range(200):
            if self._uvicorn.started:
                break
            threading.Event().wait(0.02)
        return self

    def end_sessions(self) -> int:
        """End every session as a restarted server would (their ids then answer 404)."""
        manager = self.mcp.session_manager
        assert self._loop is not None

        async def end() -> int:
            ended = 0
            for session_id, transport in list(manager._server_instances.items()):
                await manager._discard_session(session_id, transport)
                ended += 1
            return ended

        return int(asyncio.run_coroutine_threadsafe(end(), self._loop).result(10))

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._socket.close()

    def __enter__(self) -> McpTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
