"""The provider code in the page: Pyodide streams from the mock server through ``FetchTransport``.

The site is served from one localhost port and the mock provider from another, so every call is
a real cross-origin ``fetch`` with a CORS preflight. Python runs inside the booted page
(``window.pyAgent.pyodide``) and reports back as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from py_agent.testing.mock_server import MockProviderServer

Serve = Callable[[Path], str]

APIS = ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"]
PROVIDER = {
    "openai-completions": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "google-generative-ai": "google",
}


@pytest.fixture
def mock() -> Iterator[MockProviderServer]:
    with MockProviderServer() as server:
        server.stall_seconds = 10
        yield server


@pytest.fixture
def page(built_site: Path, serve: Serve, visit: Any) -> Any:
    run = visit(serve(built_site) + "/")
    assert run.state == "ready", run.console
    return run.page


def run_python(page: Any, code: str) -> Any:
    result = page.evaluate("async (code) => await window.pyAgent.pyodide.runPythonAsync(code)", code)
    return json.loads(result)


PRELUDE = """
import asyncio, json
from js import performance
from py_agent.ai import AbortController, Model, stream_simple
from py_agent.core import Agent, AgentTool, AgentToolResult
from py_agent.ai.transport import get_default_transport

def make_model(api, provider, base_url):
    return Model.model_validate({"id": "mock-model", "name": "mock", "api": api, "provider": provider,
        "baseUrl": base_url, "input": ["text"], "contextWindow": 8192, "maxTokens": 1024})
"""


@pytest.mark.parametrize("api", APIS)
def test_tool_conversation_streams_incrementally_over_fetch(page: Any, mock: MockProviderServer, api: str) -> None:
    text = "Echo finished: the tool replied with ping, all good."
    mock.script(
        [
            {
                "content": [
                    {"type": "text", "text": "Calling the tool."},
                    {"type": "tool_call", "id": "call_1", "name": "echo", "arguments": {"text": "ping"}},
                ],
                "chunk_size": 4,
            },
            # 13 chunks ~2 s apart in all: a busy machine that starves the page for a while still
            # sees them arrive over well more than the 300 ms asserted below.
            {"text": text, "chunk_size": 4, "delay_ms": 150},
        ]
    )
    code = (
        PRELUDE
        + f"""
transport_name = type(get_default_transport()).__name__
async def execute(tool_call_id, params, signal=None, on_update=None):
    return AgentToolResult(content=[{{"type": "text", "text": "echo: " + params["text"]}}])
tool = AgentTool(name="echo", description="Echo", execute=execute,
                 parameters={{"type": "object", "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}})
model = make_model({api!r}, {PROVIDER[api]!r}, {mock.base_url(api)!r})
agent = Agent(initial_state={{"model": model, "tools": [tool]}}, get_api_key=lambda provider: "browser-key")
arrivals = []
ends = []
turns = [0]
def listen(event, signal=None):
    if event.type == "message_start" and event.message.role == "assistant":
        turns[0] += 1
    if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
        arrivals.append((turns[0], performance.now()))
    if event.type == "message_end" and event.message.role == "assistant":
        ends.append(performance.now())
agent.subscribe(listen)
await asyncio.wait_for(agent.prompt("Please echo ping"), 60)
msgs = agent.state.messages
json.dumps({{"transport": transport_name, "roles": [m.role for m in msgs],
            "stops": [getattr(m, "stop_reason", None) for m in msgs],
            "errors": [getattr(m, "error_message", None) for m in msgs],
            "final": msgs[-1].content[-1].text if msgs[-1].content else None,
            "tool_result": msgs[2].content[0].text if len(msgs) > 2 else None,
            "arrivals": [t for n, t in arrivals if n == 2], "end": ends[-1] if ends else None}})
"""
    )
    result = run_python(page, code)
    assert result["transport"] == "FetchTransport"
    assert result["roles"] == ["user", "assistant", "toolResult", "assistant"], result
    assert result["stops"][1] == "toolUse" and result["stops"][3] == "stop", result["errors"]
    assert result["tool_result"] == "echo: ping"
    assert result["final"] == text
    arrivals = result["arrivals"]
    assert len(arrivals) >= 8
    assert len({round(t) for t in arrivals}) >= 5  # several distinct arrival times
    assert arrivals[-1] - arrivals[0] > 300  # ms: the text came over time...
    assert result["end"] - arrivals[0] > 300  # ...and the first delta arrived well before the end
    requests = mock.requests
    assert len(requests) == 2
    assert requests[0]["headers"].get("origin")  # cross-origin fetch from the page


def test_abort_mid_stream_closes_the_connection(page: Any, mock: MockProviderServer) -> None:
    api = "openai-completions"
    # About nine seconds of reply: a starved page may take in several chunks at once, never half of it.
    full = "This reply is slow and will be aborted halfway through. " * 5
    script = [{"text": full, "chunk_size": 3, "delay_ms": 100}]
    code = (
        PRELUDE
        + f"""
from js import fetch, Object
from pyodide.ffi import to_js
# Script the mock server through its control endpoint, as a browser-only test would.
await fetch({mock.url + "/__mock__/script"!r}, to_js({{"method": "POST", "body": {json.dumps(script)!r}}},
            dict_converter=Object.fromEntries))
controller = AbortController()
stream = stream_simple(make_model({api!r}, "openai", {mock.base_url(api)!r}),
                       {{"messages": [{{"role": "user", "content": "hi", "timestamp": 1}}]}},
                       {{"api_key": "browser-key", "signal": controller.signal}})
kinds = []
async def consume():
    async for event in stream:
        kinds.append(event.type)
        if kinds.count("text_delta") == 2:
            controller.abort()
await asyncio.wait_for(consume(), 30)
final = await stream.result()
json.dumps({{"kinds": kinds, "stop": final.stop_reason, "error": final.error_message,
            "text": final.content[0].text if final.content else None}})
"""
    )
    result = run_python(page, code)
    assert result["stop"] == "aborted" and result["error"] == "Request was aborted"
    # What arrived before the abort is kept: at least the two deltas seen (a starved page may have parsed
    # more chunks before the consumer got to abort), never the rest of the reply.
    assert result["text"].startswith("This r") and full.startswith(result["text"]), result["text"]
    assert len(result["text"]) < len(full) // 2, result["text"]
    assert result["kinds"][-1] == "error" and "text_end" not in result["kinds"]
    assert mock.wait_closed(0, 10), mock.requests
    assert not mock.requests[0]["completed"]


def test_cors_refusal_is_a_readable_stream_error(page: Any, mock: MockProviderServer) -> None:
    mock.cors = False
    api = "openai-completions"
    code = (
        PRELUDE
        + f"""
stream = stream_simple(make_model({api!r}, "openai", {mock.base_url(api)!r}),
                       {{"messages": [{{"role": "user", "content": "hi", "timestamp": 1}}]}},
                       {{"api_key": "browser-key", "max_retries": 0}})
final = await asyncio.wait_for(stream.result(), 30)
json.dumps({{"stop": final.stop_reason, "error": final.error_message}})
"""
    )
    result = run_python(page, code)
    assert result["stop"] == "error"
    assert result["error"].startswith("Connection error: ") and "CORS" in result["error"], result["error"]


def test_http_error_over_fetch(page: Any, mock: MockProviderServer) -> None:
    mock.script([{"fault": {"type": "http", "status": 401}}])
    api = "anthropic-messages"
    code = (
        PRELUDE
        + f"""
stream = stream_simple(make_model({api!r}, "anthropic", {mock.base_url(api)!r}),
                       {{"messages": [{{"role": "user", "content": "hi", "timestamp": 1}}]}}, {{"api_key": "bad"}})
final = await asyncio.wait_for(stream.result(), 30)
json.dumps({{"stop": final.stop_reason, "error": final.error_message}})
"""
    )
    result = run_python(page, code)
    assert result["stop"] == "error"
    assert result["error"].startswith('401 {"type":"error","error":{"type":"authentication_error"')
