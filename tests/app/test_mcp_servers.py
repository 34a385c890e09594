"""Settings → MCP servers in CPython: a server added with a token, its tools in the session (the
model calls one through the mock provider), a tool switched off, the token kept like a key, an
``mcpServers`` JSON pasted, and a wrong URL named."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from app_helpers import call, idle

from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.mcp_servers import mcp_plugin, parse_mcp_servers
from py_agent.app.storage import MemoryBackend
from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer

TOKEN = "tok-mcp-secret-0123456789"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))


async def make_app(backend: MemoryBackend) -> tuple[WebApp, Recorder]:
    recorder = Recorder()
    app = WebApp(backend, MemoryTabStore(), recorder, demo_tokens_per_second=0, plugins=[mcp_plugin])
    await app.start()
    return app, recorder


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request["body"].get("tools") or []]


async def test_a_servers_tools_reach_the_model_and_a_switched_off_tool_leaves() -> None:
    backend = MemoryBackend()
    with McpTestServer() as mcp, MockProviderServer() as provider:
        app, recorder = await make_app(backend)
        added = await call(app, "mcp_add", name="tools", url=mcp.url, token=TOKEN, remember=True)
        assert added["ok"] is True
        [server] = added["servers"]
        assert server["token"] == "device" and server["connected"]
        assert server["tools"][0] == {
            "name": "add",
            "toolName": "mcp__tools__add",
            "description": "Add two integers and return the sum",
            "enabled": True,
        }
        custom = {"name": "Mock", "kind": "openai-compatible", "api": "anthropic-messages", "baseUrl": provider.url}
        await call(app, "save_custom_provider", provider={**custom, "models": ["m"]}, discover=False)
        await call(app, "save_key", provider="Mock", key="sk-mock-provider-key")
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock", id="m")
        provider.script(
            [
                {"tool_calls": [{"id": "call_1", "name": "mcp__tools__add", "arguments": {"a": 2, "b": 3}}]},
                {"text": "2 + 3 = 5"},
                {"text": "ok"},
            ]
        )
        await call(app, "send", text="What is 2 + 3?")
        await idle(app)
        await call(app, "mcp_switch", name="tools", tool="add", enabled=False)
        await call(app, "send", text="Again?")
        await idle(app)
        requests = provider.requests
        exported = (await call(app, "export_session"))["text"]
        mcp_headers = list(mcp.headers_seen)
    assert "mcp__tools__add" in tool_names(requests[0])
    result = requests[1]["body"]["messages"][-1]["content"][0]
    content = result["content"]
    assert result["type"] == "tool_result" and (content if isinstance(content, str) else content[0]["text"]) == "5"
    assert "mcp__tools__add" not in tool_names(requests[2])
    assert "mcp__tools__pixel" in tool_names(requests[2])
    # The token goes only to its server: not to the provider, not into the export, not to the page's events.
    assert all(h.get("authorization") == f"Bearer {TOKEN}" for h in mcp_headers)
    assert TOKEN not in json.dumps(requests)
    assert TOKEN not in exported and "mcp__tools__add" in exported
    assert TOKEN not in json.dumps(recorder.events)
    assert TOKEN not in json.dumps(backend.kv["settings"])
    assert backend.kv["settings"]["mcpServers"][0]["disabledTools"] == ["add"]


async def test_servers_and_switches_are_kept_across_a_restart() -> None:
    backend = MemoryBackend()
    with McpTestServer() as mcp:
        app, _ = await make_app(backend)
        await call(app, "mcp_add", name="tools", url=mcp.url)
        await call(app, "mcp_switch", name="tools", enabled=False)
        again, _ = await make_app(backend)
        [server] = (await call(again, "mcp_servers"))["servers"]
        assert server["enabled"] is False and server["url"] == mcp.url
        await call(again, "new_session")
        assert again.chat is not None
        assert not [t for t in again.chat.agent.state.tools if t.name.startswith("mcp__")]
        await call(again, "mcp_remove", name="tools")
        assert (await call(again, "mcp_servers"))["servers"] == []


async def test_a_wrong_url_is_named_in_the_listing() -> None:
    with McpTestServer() as mcp:
        app, _ = await make_app(MemoryBackend())
        added = await call(app, "mcp_add", name="typo", url=mcp.url.replace("/mcp", "/mpc"))
    assert added["ok"] is False
    assert added["problem"]["kind"] == "not-mcp"
    assert "Check the URL" in added["problem"]["fix"]
    assert added["servers"][0]["problem"]["kind"] == "not-mcp"


def test_mcp_servers_json_adds_http_entries_and_names_the_others() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
                "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abc", "X-Team": "7"}},
                "old": {"type": "sse", "url": "https://example.com/sse"},
            }
        }
    )
    usable, skipped = parse_mcp_servers(text)
    assert usable == [{"name": "docs", "url": "https://example.com/mcp", "headers": {"X-Team": "7"}, "token": "abc"}]
    assert [s["name"] for s in skipped] == ["filesystem", "old"]
    assert "not possible in a browser" in skipped[0]["reason"]


async def test_pasting_mcp_servers_json_adds_the_http_server() -> None:
    with McpTestServer() as mcp:
        app, _ = await make_app(MemoryBackend())
        text = json.dumps({"mcpServers": {"t": {"url": mcp.url}, "local": {"command": "uvx", "args": ["x"]}}})
        result = await call(app, "mcp_import", text=text)
    assert result["added"] == [{"name": "t", "ok": True}]
    assert result["skipped"][0]["name"] == "local"
    assert [s["name"] for s in result["servers"]] == ["t"]


async def test_sign_in_keeps_the_tokens_like_keys_and_refreshes_them() -> None:
    from urllib.parse import parse_qs, urlsplit

    import httpx

    backend = MemoryBackend()
    with McpTestServer(oauth=True) as mcp:
        assert mcp.oauth is not None
        app, recorder = await make_app(backend)
        added = await call(app, "mcp_add", name="secure", url=mcp.url)
        assert added["ok"] is False and added["problem"]["kind"] == "auth"
        started = await call(app, "mcp_sign_in", name="secure", redirect_uri="http://127.0.0.1:8000/")
        async with httpx.AsyncClient() as browser:
            location = (await browser.get(started["url"])).headers["location"]
        answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        done = await call(app, "mcp_sign_in_finish", code=answer["code"], state=answer["state"])
        assert done["ok"] is True
        [server] = done["servers"]
        assert server["signedIn"] and server["tools"][0]["name"] == "add"
        access = next(iter(mcp.oauth.access))
        assert backend.kv["keys"]["mcp:secure"]["key"] == access
        mcp.oauth.expire()
        again = await call(app, "mcp_test", name="secure")
        assert again["ok"] is True and mcp.oauth.refreshed == 1
        refreshed = next(iter(mcp.oauth.access))
        assert backend.kv["keys"]["mcp:secure"]["key"] == refreshed != access
        assert access not in json.dumps(backend.kv["settings"]) and refreshed not in json.dumps(backend.kv["settings"])
        assert refreshed not in json.dumps(recorder.events)


async def test_tools_a_server_announces_reach_the_open_session() -> None:
    with McpTestServer() as mcp:
        app, _ = await make_app(MemoryBackend())
        await call(app, "mcp_add", name="tools", url=mcp.url)
        await call(app, "new_session")
        assert app.chat is not None
        names = {tool.name: tool for tool in app.chat.agent.state.tools}
        assert "mcp__tools__extra" not in names
        await names["mcp__tools__grow"].execute("call-1", {}, None, None)
        for _ in range(200):
            if "mcp__tools__extra" in {tool.name for tool in app.chat.agent.state.tools}:
                break
            await asyncio.sleep(0.025)
        assert "mcp__tools__extra" in {tool.name for tool in app.chat.agent.state.tools}
