"""End to end over real HTTP: the provider code with the httpx transport against the mock server.

* a tool-using conversation through ``py_agent.core.Agent`` completes for each of the four APIs;
* text arrives incrementally;
* every injected fault ends in a final message with stop reason ``error``/``aborted`` and a
  readable message, never an exception from ``stream_simple`` and never a hang;
* aborting mid-stream closes the connection (the server sees it) and keeps the text so far;
* requests carry only the headers each API needs; the key goes only to the model's base URL.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.ai import AbortController, Model, stream_simple
from py_agent.ai.providers import ProviderStreamOptions
from py_agent.core import Agent, AgentTool, AgentToolResult
from py_agent.testing.mock_server import MockProviderServer
from py_agent.transports.httpx import HttpxTransport

APIS = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]
PROVIDER = {
    "openai-completions": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "google-generative-ai": "google",
}
MODEL_ID = {
    "openai-completions": "gpt-4o-mini",
    "openai-responses": "gpt-5-mini",
    "anthropic-messages": "claude-sonnet-4-5",
    "google-generative-ai": "gemini-2.5-flash",
}
KEY = "sk-test-SECRET"


@pytest.fixture
def server() -> Iterator[MockProviderServer]:
    with MockProviderServer() as mock:
        mock.stall_seconds = 10
        yield mock


def model_for(server: MockProviderServer, api: str) -> Model:
    return Model.model_validate(
        {
            "id": MODEL_ID[api],
            "name": MODEL_ID[api],
            "api": api,
            "provider": PROVIDER[api],
            "baseUrl": server.base_url(api),
            "reasoning": False,
            "input": ["text", "image"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000,
            "maxTokens": 4096,
        }
    )


def echo_tool() -> AgentTool:
    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None
    ) -> AgentToolResult:
        return AgentToolResult(
            content=[{"type": "text", "text": f"echo: {params['text']}"}], details={"echoed": params["text"]}
        )

    return AgentTool(
        name="echo",
        label="Echo",
        description="Echo the text back",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=execute,
    )


@pytest.mark.parametrize("api", APIS)
async def test_tool_conversation_through_agent(server: MockProviderServer, api: str) -> None:
    server.script(
        [
            {
                "content": [
                    {"type": "text", "text": "Let me echo that."},
                    {"type": "tool_call", "id": "call_echo_1", "name": "echo", "arguments": {"text": "ping"}},
                ],
                "chunk_size": 3,
                "usage": {"input": 20, "output": 8},
            },
            {"text": "The tool said: echo: ping", "chunk_size": 5},
        ]
    )
    agent = Agent(
        initial_state={"model": model_for(server, api), "system_prompt": "Be brief.", "tools": [echo_tool()]},
        get_api_key=lambda provider: KEY,
    )
    await asyncio.wait_for(agent.prompt("Please echo ping"), 20)
    messages = agent.state.messages
    roles = [m.role for m in messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"], roles
    first, result, last = messages[1], messages[2], messages[3]
    assert first.stop_reason == "toolUse", first.error_message
    call = first.content[-1]
    assert call.name == "echo" and call.arguments == {"text": "ping"}
    assert result.content[0].text == "echo: ping" and not result.is_error
    assert last.stop_reason == "stop" and last.content[-1].text == "The tool said: echo: ping"
    assert first.usage.input == 20 and first.usage.output == 8
    requests = server.requests
    assert len(requests) == 2
    second_body = json.dumps(requests[1]["body"])
    assert "echo: ping" in second_body and "Please echo ping" in second_body


@pytest.mark.parametrize("api", APIS)
async def test_text_arrives_incrementally(server: MockProviderServer, api: str) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    server.script([{"text": text, "chunk_size": 4, "delay_ms": 40}])
    stream = stream_simple(
        model_for(server, api), {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}, {"api_key": KEY}
    )
    arrivals: list[float] = []
    end = 0.0

    async def consume() -> None:
        nonlocal end
        async for event in stream:
            if event.type == "text_delta":
                arrivals.append(time.monotonic())
            if event.type in ("done", "error"):
                end = time.monotonic()

    await asyncio.wait_for(consume(), 20)
    final = await stream.result()
    assert final.stop_reason == "stop", final.error_message
    assert final.content[0].text == text
    assert len(arrivals) >= 8
    assert arrivals[-1] - arrivals[0] > 0.2  # spread over time, not delivered at once
    assert end - arrivals[0] > 0.2


FAULTS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("401", {"type": "http", "status": 401}, {}),
    ("403", {"type": "http", "status": 403}, {}),
    ("429", {"type": "http", "status": 429, "retry_after": "0"}, {}),
    ("500", {"type": "http", "status": 500}, {"max_retries": 1}),
    ("503", {"type": "http", "status": 503, "retry_after": "0"}, {"max_retries": 1}),
    ("drop", {"type": "drop", "after": 3}, {"max_retries": 0}),
    ("stall", {"type": "stall", "after": 3}, {"idle_timeout_ms": 300}),
    ("stall-headers", {"type": "stall_headers", "seconds": 5}, {"timeout_ms": 300, "max_retries": 0}),
    ("malformed", {"type": "malformed", "after": 3}, {}),
    ("truncate", {"type": "truncate", "after": 3}, {}),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("name", "fault", "options"), FAULTS, ids=[f[0] for f in FAULTS])
async def test_faults_end_in_an_error_message(
    server: MockProviderServer, api: str, name: str, fault: dict[str, Any], options: dict[str, Any]
) -> None:
    server.script([{"text": "Hello there, this is a longer reply.", "chunk_size": 3, "fault": fault, "repeat": 5}])
    stream = stream_simple(
        model_for(server, api),
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
        {"api_key": KEY, **options},
    )
    kinds: list[str] = []

    async def consume() -> None:
        async for event in stream:
            kinds.append(event.type)

    await asyncio.wait_for(consume(), 20)
    final = await stream.result()
    assert final.stop_reason in ("error", "aborted"), (name, final.stop_reason)
    assert final.error_message and len(final.error_message) > 5, final.error_message
    assert kinds[-1] == "error" and kinds.count("error") == 1
    if name in ("401", "403"):
        assert len(server.requests) == 1
        assert str(fault["status"]) in final.error_message or '"code":' in final.error_message
    if name == "stall":
        assert final.error_message == "Stream stalled: no data for 0.3s"
        assert server.wait_closed(0, 5)
    if name == "truncate":
        assert final.error_message.startswith("Stream ended unexpectedly")
    if name == "malformed":
        assert final.error_message.startswith("Invalid JSON in SSE data")


@pytest.mark.parametrize("api", APIS)
async def test_abort_mid_stream_closes_the_connection(server: MockProviderServer, api: str) -> None:
    server.script([{"text": "Hello world, this goes on for a while.", "chunk_size": 3, "delay_ms": 60}])
    controller = AbortController()
    stream = stream_simple(
        model_for(server, api),
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
        {"api_key": KEY, "signal": controller.signal},
    )
    kinds: list[str] = []

    async def consume() -> None:
        async for event in stream:
            kinds.append(event.type)
            if event.type == "text_delta" and kinds.count("text_delta") == 2:
                controller.abort()

    await asyncio.wait_for(consume(), 20)
    final = await stream.result()
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert final.content[0].text == "Hel" + "lo "
    assert kinds[-1] == "error" and "text_end" not in kinds
    assert await asyncio.to_thread(server.wait_closed, 0, 5)
    assert not server.requests[0]["completed"]


EXPECTED_HEADERS = {
    "openai-completions": {"content-type", "accept", "authorization"},
    "openai-responses": {"content-type", "accept", "authorization"},
    "anthropic-messages": {
        "content-type",
        "accept",
        "anthropic-version",
        "anthropic-dangerous-direct-browser-access",
        "x-api-key",
        "anthropic-beta",
    },
    "google-generative-ai": {"content-type", "x-goog-api-key"},
}
TRANSPORT_HEADERS = {"host", "accept-encoding", "connection", "content-length"}
KEY_HEADER = {
    "openai-completions": ("authorization", f"Bearer {KEY}"),
    "openai-responses": ("authorization", f"Bearer {KEY}"),
    "anthropic-messages": ("x-api-key", KEY),
    "google-generative-ai": ("x-goog-api-key", KEY),
}


@pytest.mark.parametrize("api", APIS)
async def test_requests_carry_only_the_needed_headers(server: MockProviderServer, api: str) -> None:
    server.script([{"text": "ok"}])
    model = model_for(server, api)
    final = await asyncio.wait_for(
        stream_simple(
            model, {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}, {"api_key": KEY}
        ).result(),
        20,
    )
    assert final.stop_reason == "stop", final.error_message
    (request,) = server.requests
    headers = request["headers"]
    assert set(headers) - TRANSPORT_HEADERS == EXPECTED_HEADERS[api]
    assert not any(name.startswith("x-stainless") for name in headers) and "user-agent" not in headers
    name, value = KEY_HEADER[api]
    assert headers[name] == value
    assert [k for k, v in headers.items() if KEY in v] == [name]
    assert KEY not in request["path"]
    base_path = model.base_url.removeprefix(server.url)
    assert request["path"].startswith(base_path + "/")


async def test_key_goes_only_to_the_base_url() -> None:
    """Every request the providers send goes to the model's own base URL (a recording transport)."""
    import os
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from provider_helpers import FakeTransport, Reply

    for api in APIS:
        base = "https://llm.example.test/prefix/v1"
        model = Model.model_validate({"id": "m", "api": api, "provider": "custom", "baseUrl": base, "input": ["text"]})
        transport = FakeTransport([Reply(status=401, headers={"content-type": "application/json"}, chunks=["{}"])])
        await stream_simple(
            model,
            {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
            ProviderStreamOptions(api_key=KEY, http_transport=transport),
        ).result()
        for request in transport.requests:
            assert request.url.startswith(base + "/"), request.url
            assert KEY not in request.url


async def test_httpx_transport_connection_refused() -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    model = Model.model_validate(
        {
            "id": "m",
            "api": "openai-completions",
            "provider": "openai",
            "baseUrl": f"http://127.0.0.1:{port}/v1",
            "input": ["text"],
        }
    )
    final = await asyncio.wait_for(
        stream_simple(
            model,
            {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
            ProviderStreamOptions(api_key=KEY, max_retries=0, http_transport=HttpxTransport()),
        ).result(),
        20,
    )
    assert final.stop_reason == "error" and final.error_message.startswith("Connection error: ")


async def test_cors_refusal_is_only_a_browser_matter(server: MockProviderServer) -> None:
    """With CORS refused, a non-browser client still works (CORS is enforced by browsers)."""
    server.cors = False
    server.script([{"text": "ok"}])
    final = await stream_simple(
        model_for(server, "openai-completions"),
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
        {"api_key": KEY},
    ).result()
    assert final.stop_reason == "stop"


async def test_abort_while_waiting_for_headers(server: MockProviderServer) -> None:
    server.script([{"text": "never sent", "fault": {"type": "stall_headers", "seconds": 10}}])
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.3, controller.abort)
    stream = stream_simple(
        model_for(server, "anthropic-messages"),
        {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]},
        {"api_key": KEY, "signal": controller.signal},
    )
    final = await asyncio.wait_for(stream.result(), 10)
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert await asyncio.to_thread(server.wait_closed, 0, 5)
