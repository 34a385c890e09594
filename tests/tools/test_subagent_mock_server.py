"""The subagent tool end to end over real HTTP: the mock provider server, the httpx transport.

CPython only (a local server). The server's request log is the evidence: each child sends its
own requests, which hold only its system prompt and its task; a parallel run of 5 never has more
than 4 requests open at once; aborting closes every child's connection.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.ai import AbortController, Model
from py_agent.core import Agent
from py_agent.testing.mock_server import MockProviderServer
from py_agent.tools.subagent import SubagentDetails, create_subagent_tool, parse_subagent_details

API = "openai-completions"
KEY = "sk-test-subagent"
PARENT_PROMPT = "You are the parent agent. PARENT-ONLY-MARKER"


@pytest.fixture
def server() -> Iterator[MockProviderServer]:
    with MockProviderServer() as mock:
        mock.stall_seconds = 10
        yield mock


def model_for(server: MockProviderServer) -> Model:
    return Model.model_validate(
        {
            "id": "gpt-4o-mini",
            "name": "gpt-4o-mini",
            "api": API,
            "provider": "openai",
            "baseUrl": server.base_url(API),
            "reasoning": False,
            "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000,
            "maxTokens": 4096,
        }
    )


def parent_for(server: MockProviderServer) -> Agent:
    parent = Agent(
        initial_state={"model": model_for(server), "system_prompt": PARENT_PROMPT},
        get_api_key=lambda provider: KEY,
    )
    parent.state.tools = [create_subagent_tool(parent)]
    return parent


def sub_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_call", "id": "call_sub", "name": "subagent", "arguments": arguments}]}


def body_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return list(request["body"]["messages"])


def task_in(request: dict[str, Any]) -> str:
    """The child's task from its request: it must hold exactly a system message and one user message."""
    messages = body_messages(request)
    assert [m["role"] for m in messages] == ["system", "user"], messages
    content = messages[1]["content"]
    text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    return str(text)


class OpenRequests:
    """Samples the server's request log and remembers the most requests open at once."""

    def __init__(self, server: MockProviderServer) -> None:
        self.server = server
        self.max_open = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            open_now = sum(1 for r in self.server.requests if not r["completed"] and not r["closed_early"])
            self.max_open = max(self.max_open, open_now)
            time.sleep(0.002)

    def __enter__(self) -> OpenRequests:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)


def tool_details(parent: Agent) -> tuple[str, SubagentDetails]:
    result = next(m for m in parent.state.messages if m.role == "toolResult")
    details = parse_subagent_details(result.details)
    assert details is not None
    return result.content[0].text, details


async def test_single_task_over_http(server: MockProviderServer) -> None:
    server.script(
        [
            {"text": "Earlier answer with PARENT-HISTORY-MARKER"},
            sub_call({"agent": "scout", "task": "Find where authentication is implemented"}),
            {"text": "auth lives in auth.py (lines 1-40)", "usage": {"input": 30, "output": 9}},
            {"text": "The scout found it."},
        ]
    )
    parent = parent_for(server)
    await asyncio.wait_for(parent.prompt("Hello PARENT-HISTORY-MARKER"), 20)
    await asyncio.wait_for(parent.prompt("Use the scout."), 20)
    text, details = tool_details(parent)
    assert text == "auth lives in auth.py (lines 1-40)"
    [child] = details.results
    assert child.status == "completed" and child.usage.input == 30 and child.usage.output == 9
    assert child.usage.cost > 0
    assert parent.state.messages[-1].content[0].text == "The scout found it."

    requests = server.requests
    assert len(requests) == 4
    child_request = requests[2]
    assert task_in(child_request) == "Task: Find where authentication is implemented"
    wire = json.dumps(child_request["body"])
    assert "PARENT-ONLY-MARKER" not in wire and "PARENT-HISTORY-MARKER" not in wire and "Use the scout." not in wire
    assert "You are a scout." in body_messages(child_request)[0]["content"]
    assert [t["function"]["name"] for t in child_request["body"].get("tools", [])] == []  # no session tools given
    assert child_request["headers"]["authorization"] == f"Bearer {KEY}"


async def test_parallel_run_of_five_never_has_more_than_four_requests_open(server: MockProviderServer) -> None:
    tasks = [{"agent": "worker", "task": f"t{i}"} for i in range(5)]
    server.script(
        [
            sub_call({"tasks": tasks}),
            {"text": "child result", "chunk_size": 2, "delay_ms": 40, "repeat": 5},
            {"text": "All five done."},
        ]
    )
    parent = parent_for(server)
    with OpenRequests(server) as probe:
        await asyncio.wait_for(parent.prompt("Run five workers."), 30)
    assert probe.max_open == 4

    text, details = tool_details(parent)
    assert text.startswith("Parallel: 5/5 succeeded\n\n### Task 1 [worker] completed: ")
    assert "\n\nchild result" in text
    assert len(re.findall(r"### Task [1-5] \[worker\] completed: ", text)) == 5
    assert [r.status for r in details.results] == ["completed"] * 5

    requests = server.requests
    child_requests = requests[1:6]
    assert sorted(task_in(r) for r in child_requests) == [f"Task: t{i}" for i in range(5)]
    # the fifth child started only after one of the first four finished
    starts = sorted(r["time"] for r in child_requests)
    assert starts[4] - starts[0] > 0.1
    assert parent.state.messages[-1].content[0].text == "All five done."


async def test_chain_of_three_with_previous_over_http(server: MockProviderServer) -> None:
    server.script(
        [
            sub_call(
                {
                    "chain": [
                        {"agent": "scout", "task": "Find the read tool implementation"},
                        {"agent": "planner", "task": "Use these findings to propose a refactor plan:\n{previous}"},
                        {"agent": "worker", "task": "Implement the plan:\n{previous}"},
                    ]
                }
            ),
            {"text": "FINDINGS: read.py"},
            {"text": "PLAN: split read.py"},
            {"text": "DONE: split"},
            {"text": "Chain finished."},
        ]
    )
    parent = parent_for(server)
    await asyncio.wait_for(parent.prompt("Refactor the read tool."), 30)
    text, details = tool_details(parent)
    assert text == "DONE: split"
    assert [(r.step, r.agent, r.status) for r in details.results] == [
        (1, "scout", "completed"),
        (2, "planner", "completed"),
        (3, "worker", "completed"),
    ]
    tasks = [task_in(r) for r in server.requests[1:4]]
    assert tasks == [
        "Task: Find the read tool implementation",
        "Task: Use these findings to propose a refactor plan:\nFINDINGS: read.py",
        "Task: Implement the plan:\nPLAN: split read.py",
    ]


async def test_failing_middle_step_stops_the_chain_over_http(server: MockProviderServer) -> None:
    server.script(
        [
            sub_call(
                {
                    "chain": [
                        {"agent": "scout", "task": "look"},
                        {"agent": "planner", "task": "plan {previous}"},
                        {"agent": "worker", "task": "do {previous}"},
                    ]
                }
            ),
            {"text": "FINDINGS"},
            {"fault": {"type": "http", "status": 401, "message": "Incorrect API key provided"}},
            {"text": "The chain failed at the planner."},
        ]
    )
    parent = parent_for(server)
    await asyncio.wait_for(parent.prompt("Go."), 30)
    text, details = tool_details(parent)
    assert text.startswith('Chain stopped at step 2 (planner: "')
    assert "): Error: " in text
    assert "Incorrect API key provided" in text
    assert [(r.step, r.agent, r.status) for r in details.results] == [
        (1, "scout", "completed"),
        (2, "planner", "failed"),
    ]
    assert details.is_error and details.results[1].stop_reason == "error"
    assert len(server.requests) == 4  # parent, scout, planner, parent: the worker never ran
    assert parent.state.messages[-1].content[0].text == "The chain failed at the planner."


async def test_abort_during_a_parallel_run_closes_every_child_connection(server: MockProviderServer) -> None:
    server.script([{"text": "This reply takes a long time to arrive.", "chunk_size": 2, "delay_ms": 100, "repeat": 5}])
    parent = parent_for(server)
    tool = parent.state.tools[0]
    controller = AbortController()
    run = asyncio.ensure_future(
        tool.execute(
            "call-1", {"tasks": [{"agent": "worker", "task": f"t{i}"} for i in range(5)]}, controller.signal, None
        )
    )
    for _ in range(400):
        if len(server.requests) == 4:
            break
        await asyncio.sleep(0.01)
    assert len(server.requests) == 4
    await asyncio.sleep(0.15)  # some text has arrived
    controller.abort()
    result = await asyncio.wait_for(run, 10)
    details = parse_subagent_details(result.details)
    assert details is not None
    assert [r.status for r in details.results] == ["aborted"] * 5
    assert details.results[4].error_message == "Subagent was aborted before starting"
    for index in range(4):
        assert await asyncio.to_thread(server.wait_closed, index, 5)
        assert not server.requests[index]["completed"]
    await asyncio.sleep(0.2)
    assert len(server.requests) == 4  # no request after the abort
    assert result.content[0].text.startswith("Parallel: 0/5 succeeded")
