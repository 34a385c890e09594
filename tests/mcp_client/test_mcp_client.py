"""The MCP client against the official MCP Python SDK (py_agent/testing/mcp_server.py) on loopback:
both protocol eras, paging, results, list changes, cancellation, timeouts, ended sessions."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from py_agent import Agent
from py_agent.ai.abort import AbortController, AbortError
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.ai.types import ImageContent, TextContent
from py_agent.mcp import McpClient, McpServer, McpTimeoutError
from py_agent.testing.mcp_server import McpTestServer

ERAS = ["modern", "handshake"]


def start(era: str, **options: Any) -> McpTestServer:
    """``modern``: the SDK as it is (2026-07-28 after discover); ``handshake``: a server that refuses
    2026-07-28, which the client must fall back from to ``initialize``."""
    return McpTestServer(legacy_only=era == "handshake", **options).start()


@pytest.fixture(params=ERAS)
def server(request: pytest.FixtureRequest) -> Iterator[McpTestServer]:
    running = start(request.param)
    yield running
    running.stop()


async def wait_for(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_negotiates_the_era_the_server_speaks(server: McpTestServer) -> None:
    async with McpClient(server.url) as client:
        assert client.server_info["name"] == "test-tools"
        if server.legacy_only:
            assert client.protocol_version == "2025-11-25"
            assert client.session_id
            assert server.seen[:3] == ["server/discover", "initialize", "notifications/initialized"]
        else:
            assert client.protocol_version == "2026-07-28"
            assert client.session_id is None
            assert server.seen[0] == "server/discover"
            assert "initialize" not in server.seen
            tools_call = [h for h in server.headers_seen if h.get("mcp-method") == "server/discover"]
            assert tools_call and tools_call[0]["mcp-protocol-version"] == "2026-07-28"


async def test_lists_tools_through_every_page(server: McpTestServer) -> None:
    async with McpClient(server.url) as client:
        tools = await client.list_tools()
    assert [tool["name"] for tool in tools] == ["add", "pixel", "weather", "slow", "sleepy", "grow"]
    assert server.pages_served == 3  # six tools, two a page
    assert tools[0]["description"] == "Add two integers and return the sum"


async def test_tools_become_agent_tools_named_as_pi_names_them(server: McpTestServer) -> None:
    async with McpServer("test-srv.v1", server.url) as mcp:
        names = [tool.name for tool in mcp.tools]
        assert names[:3] == ["mcp__test_srv_v1__add", "mcp__test_srv_v1__pixel", "mcp__test_srv_v1__weather"]
        add = mcp.tools[0]
        assert add.label == "test-srv.v1/add"
        assert add.parameters["required"] == ["a", "b"]
        result = await add.execute("call-1", {"a": 2, "b": 3}, None, None)
        assert result.content == [TextContent(text="5")]
        assert result.details == {"server": "test-srv.v1", "tool": "add"}
        image = await mcp.tools[1].execute("call-2", {}, None, None)
        assert isinstance(image.content[0], ImageContent) and image.content[0].mime_type == "image/png"
        weather = await mcp.tools[2].execute("call-3", {"city": "Oslo"}, None, None)
        assert '"conditions": "sunny"' in weather.content[0].text  # type: ignore[union-attr]


async def test_an_agent_calls_an_mcp_tool_and_the_result_reaches_the_next_request(server: McpTestServer) -> None:
    faux = register_faux_provider()
    seen: list[Any] = []

    def answer(context: Any) -> Any:
        seen.append(context)
        return faux_assistant_message("The sum is 5.")

    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("mcp__tools__add", {"a": "2", "b": 3})], stop_reason="toolUse"),
            answer,
        ]
    )
    try:
        async with McpServer("tools", server.url) as mcp:
            agent = Agent(initial_state={"model": faux.get_model(), "tools": mcp.tools})
            await agent.prompt("What is 2 + 3?")
    finally:
        faux.unregister()
    result = seen[0].messages[-1]
    assert result.role == "toolResult" and result.tool_name == "mcp__tools__add"
    assert not result.is_error
    assert result.content[0].text == "5"  # "2" was coerced to 2 by the schema, as for every JSON-schema tool
    assert "mcp__tools__add" in [tool.name for tool in seen[0].tools]


async def test_arguments_are_validated_against_the_servers_schema(server: McpTestServer) -> None:
    faux = register_faux_provider()
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("mcp__tools__add", {"a": "two"})], stop_reason="toolUse"),
            faux_assistant_message("Sorry."),
        ]
    )
    try:
        async with McpServer("tools", server.url) as mcp:
            agent = Agent(initial_state={"model": faux.get_model(), "tools": mcp.tools})
            await agent.prompt("Add")
    finally:
        faux.unregister()
    result = agent.state.messages[2]
    assert result.is_error
    assert 'Validation failed for tool "mcp__tools__add"' in result.content[0].text
    assert "tools/call" not in server.seen


async def test_a_list_change_brings_the_new_tool(server: McpTestServer) -> None:
    async with McpServer("tools", server.url) as mcp:
        changed: list[list[str]] = []
        mcp.on_tools(lambda tools: changed.append([tool.name for tool in tools]))
        if not server.legacy_only:
            await wait_for(lambda: "subscriptions/listen" in server.seen)
        else:
            await wait_for(lambda: any(h.get("accept") == "text/event-stream" for h in server.headers_seen))
        grow = next(tool for tool in mcp.tools if tool.name == "mcp__tools__grow")
        await grow.execute("call-1", {}, None, None)
        await wait_for(lambda: bool(changed))
    assert "mcp__tools__extra" in changed[-1]


async def test_abort_during_a_long_call_cancels_it_on_the_server(server: McpTestServer) -> None:
    async with McpClient(server.url) as client:
        controller = AbortController()
        call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}, signal=controller.signal))
        await wait_for(lambda: "slow started" in server.events)
        controller.abort()
        with pytest.raises(AbortError):
            await call
        await wait_for(lambda: "slow cancelled" in server.events)
    if server.legacy_only:
        assert "notifications/cancelled" in server.seen  # 2025: the notification
    else:
        assert "notifications/cancelled" not in server.seen  # 2026-07-28: closing the stream is the cancellation


async def test_a_silent_call_times_out_and_is_cancelled(server: McpTestServer) -> None:
    async with McpClient(server.url) as client:
        started = time.monotonic()
        with pytest.raises(McpTimeoutError, match=r"tools/call timed out after 0.5 s"):
            await client.call_tool("sleepy", {"seconds": 30}, timeout=0.5)
        assert time.monotonic() - started < 5
        await wait_for(lambda: "sleepy cancelled" in server.events)


async def test_progress_restarts_the_timeout(server: McpTestServer) -> None:
    async with McpClient(server.url) as client:
        progress: list[Any] = []
        # A timeout shorter than the call, longer than a loaded machine's gap between two progress steps.
        result = await client.call_tool("slow", {"seconds": 1.5}, timeout=1.0, on_progress=progress.append)
    assert result["content"] == [{"type": "text", "text": "done"}]
    assert len(progress) >= 10
    assert progress[0]["message"] == "step 1 of 15"


async def test_a_session_the_server_ended_is_opened_again() -> None:
    with start("handshake") as server:
        async with McpClient(server.url) as client:
            first = client.session_id
            assert server.end_sessions() == 1
            result = await client.call_tool("add", {"a": 1, "b": 1})
            assert result["content"][0]["text"] == "2"
            assert client.session_id not in (None, first)
        assert server.seen.count("initialize") == 2


async def test_the_agents_abort_cancels_the_running_mcp_call(server: McpTestServer) -> None:
    faux = register_faux_provider()
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("mcp__tools__slow", {"seconds": 30})], stop_reason="toolUse")]
    )
    try:
        async with McpServer("tools", server.url) as mcp:
            agent = Agent(initial_state={"model": faux.get_model(), "tools": mcp.tools})
            run = asyncio.ensure_future(agent.prompt("Work slowly"))
            await wait_for(lambda: "slow started" in server.events)
            agent.abort()
            await asyncio.wait_for(run, 10)
            await wait_for(lambda: "slow cancelled" in server.events)
    finally:
        faux.unregister()
    result = agent.state.messages[2]
    assert result.role == "toolResult" and result.is_error
    assert ("notifications/cancelled" in server.seen) == server.legacy_only
