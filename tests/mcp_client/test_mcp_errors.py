"""Each setup problem gets its named error with the fix, as the page will show it. The browser's CORS
rules are applied to httpx responses by ``BrowserLikeTransport`` (the page test does it for real)."""

from __future__ import annotations

import socket
from collections.abc import Mapping

import pytest

from py_agent.ai.abort import AbortSignal
from py_agent.ai.transport import HttpRequest, HttpResponse, TransportError
from py_agent.mcp import (
    McpClient,
    McpConnectError,
    McpCorsError,
    McpLegacySseError,
    McpMixedContentError,
    McpNotFoundError,
    McpSessionHeaderHiddenError,
)
from py_agent.testing.mcp_server import McpTestServer
from py_agent.transports.httpx import HttpxTransport

ORIGIN = "http://127.0.0.1:8000"
SAFELISTED = {
    "cache-control",
    "content-language",
    "content-length",
    "content-type",
    "expires",
    "last-modified",
    "pragma",
}


class BrowserLikeTransport:
    """A rejected fetch without ``Access-Control-Allow-Origin`` for the origin; only safelisted and
    exposed headers readable (the fetch standard's CORS check and header filter)."""

    def __init__(self, origin: str = ORIGIN) -> None:
        self.inner = HttpxTransport()
        self.origin = origin

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpResponse:
        request.headers["Origin"] = self.origin
        response = await self.inner.send(request, signal)
        if response.headers.get("access-control-allow-origin") not in ("*", self.origin):
            await response.aclose()
            raise TransportError("Failed to fetch", cors_suspected=True)
        exposed = {
            name.strip().lower() for name in response.headers.get("access-control-expose-headers", "").split(",")
        }
        everything = "*" in exposed  # "*" exposes every header of a request without credentials
        visible: Mapping[str, str] = {
            k: v for k, v in response.headers.items() if everything or k in SAFELISTED or k in exposed
        }
        response.headers = visible  # type: ignore[misc]
        return response


async def test_a_server_without_cors_is_named_with_the_headers_to_add() -> None:
    with McpTestServer(cors=False) as server:
        client = McpClient(server.url, transport=BrowserLikeTransport(), origin=ORIGIN)
        with pytest.raises(McpCorsError) as caught:
            await client.connect()
    text = str(caught.value)
    assert f"Access-Control-Allow-Origin: {ORIGIN}" in text
    assert "Access-Control-Expose-Headers: Mcp-Session-Id" in text
    assert "scripts/cors_proxy.py" in text


async def test_a_hidden_session_header_is_named_for_a_2025_server() -> None:
    with McpTestServer(expose_session=False, legacy_only=True) as server:
        client = McpClient(server.url, transport=BrowserLikeTransport(), origin=ORIGIN)
        with pytest.raises(McpSessionHeaderHiddenError) as caught:
            await client.connect()
    assert "Access-Control-Expose-Headers: Mcp-Session-Id" in caught.value.fix


async def test_a_2026_server_needs_no_session_header() -> None:
    with McpTestServer(expose_session=False) as server:
        async with McpClient(server.url, transport=BrowserLikeTransport(), origin=ORIGIN) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"


async def test_the_old_sse_transport_is_detected_and_named() -> None:
    with McpTestServer(old_sse=True) as server:
        client = McpClient(server.url)
        with pytest.raises(McpLegacySseError) as caught:
            await client.connect()
    assert "old HTTP+SSE transport" in str(caught.value)
    assert "/mcp" in caught.value.fix


async def test_a_wrong_url_is_named() -> None:
    with McpTestServer() as server:
        client = McpClient(server.url.replace("/mcp", "/nothing-here"))
        with pytest.raises(McpNotFoundError, match=r"No MCP server answers at .*/nothing-here \(HTTP 404\)"):
            await client.connect()


async def test_a_closed_port_is_named() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = McpClient(f"http://127.0.0.1:{port}/mcp")
    with pytest.raises(McpConnectError, match="Cannot reach the MCP server"):
        await client.connect()


async def test_an_https_page_cannot_call_an_http_server() -> None:
    client = McpClient("http://mcp.example.com/mcp", origin="https://app.example.com")
    with pytest.raises(McpMixedContentError):
        await client.connect()
    # localhost is a secure context: allowed
    local = McpClient("http://localhost:1/mcp", origin="https://app.example.com")
    with pytest.raises(McpConnectError) as caught:
        await local.connect()
    assert not isinstance(caught.value, McpMixedContentError)


async def test_the_proxy_route_the_errors_name_reaches_a_server_without_cors() -> None:
    import importlib.util
    import threading
    from pathlib import Path
    from urllib.parse import quote

    path = Path(__file__).resolve().parents[2] / "scripts" / "cors_proxy.py"
    spec = importlib.util.spec_from_file_location("cors_proxy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    proxy = module.make_server("127.0.0.1", 0, [ORIGIN])
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        with McpTestServer(cors=False, legacy_only=True) as server:
            url = f"http://127.0.0.1:{proxy.server_address[1]}/?url={quote(server.url, safe='')}"
            async with McpClient(url, transport=BrowserLikeTransport(), origin=ORIGIN) as client:
                assert client.session_id  # the proxy lets the page read Mcp-Session-Id
                assert (await client.call_tool("add", {"a": 4, "b": 5}))["content"][0]["text"] == "9"
    finally:
        proxy.shutdown()
        proxy.server_close()
