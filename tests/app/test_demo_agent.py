"""The offline demo model as a scripted agent, in CPython: asked to show the agent at work, it calls
the session's real tools (write, the code tools, subagent), one step per reply, and sums up the
results; its subagents are the same demo model reading the files they are given. The code tools
here run the script's Python for real (CPython, in a folder holding the workspace's files) and
stand in for the page's JavaScript sandbox, which the browser tests run."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from py_agent.ai.types import Context, SimpleStreamOptions, TextContent, ToolCall, UserMessage
from py_agent.app.controller import WebApp
from py_agent.app.demo import (
    AGENT_SCRIPTS,
    JAVASCRIPT_CODE,
    PYTHON_CODE,
    SAMPLE_CSV,
    SAMPLE_CSV_PATH,
    agent_script,
    demo_reply,
)
from py_agent.app.keys import MemoryTabStore
from py_agent.app.plugins import default_plugins
from py_agent.app.storage import MemoryBackend
from py_agent.app.workspace_store import WorkspacePlatform, open_workspace, set_workspace_platform
from py_agent.core.types import AgentTool, AgentToolResult
from py_agent.tools.workspace import Workspace

TOUR_REQUEST = "Show me the agent at work on a sample data file"
# What the page's javascript tool answers for the script's code (console, value, files written).
JAVASCRIPT_OUTPUT = (
    "chart.svg: 3 bars\n=> North 3763.00, South 2793.00, West 2420.00\n[Workspace: wrote chart.svg (620B)]"
)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))


def python_tool(workspace: Workspace) -> AgentTool:
    """Runs the code in CPython, in a folder holding the workspace's files; new files go back."""

    async def execute(tool_call_id: str, params: dict[str, Any], *_: Any) -> AgentToolResult:
        with tempfile.TemporaryDirectory() as folder:
            for file in workspace.files():
                target = Path(folder, file.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.to_bytes())
            output = io.StringIO()
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                with contextlib.redirect_stdout(output):
                    exec(compile(params["code"], "<python tool>", "exec"), {})
            finally:
                os.chdir(cwd)
            for path in Path(folder).rglob("*"):
                name = path.relative_to(folder).as_posix()
                if path.is_file() and name not in workspace:
                    await workspace.write(name, path.read_text(), source="python")
        return AgentToolResult(content=[TextContent(text=output.getvalue())])

    return AgentTool(name="python", description="Python", execute=execute)


def javascript_tool(workspace: Workspace, calls: list[str]) -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], *_: Any) -> AgentToolResult:
        calls.append(params["code"])
        bars = "".join(f'<rect width="{n}"/>' for n in (240, 178, 154))
        await workspace.write("chart.svg", f"<svg>{bars}</svg>", source="javascript")
        return AgentToolResult(content=[TextContent(text=JAVASCRIPT_OUTPUT)])

    return AgentTool(name="javascript", description="JavaScript", execute=execute)


@pytest.fixture
def javascript_calls() -> Iterator[list[str]]:
    calls: list[str] = []

    def code_tools(workspace: Workspace, settings: Any) -> list[AgentTool]:
        return [javascript_tool(workspace, calls), python_tool(workspace)]

    set_workspace_platform(WorkspacePlatform(code_tools=code_tools))
    yield calls
    set_workspace_platform(WorkspacePlatform())


async def call(app: WebApp, command: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await app.dispatch(command, json.dumps(args)))
    assert "error" not in result, result
    return result


async def run_to_the_end(app: WebApp) -> None:
    assert app.chat is not None
    for _ in range(500):
        await app.chat.wait_idle()
        if not app.chat.streaming:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run did not end")


def tool_calls(messages: list[Any]) -> list[ToolCall]:
    return [
        block
        for message in messages
        if message.role == "assistant"
        for block in message.content
        if isinstance(block, ToolCall)
    ]


async def test_the_tour_runs_every_real_tool_and_sums_up(javascript_calls: list[str]) -> None:
    app = WebApp(MemoryBackend(), MemoryTabStore(), Recorder(), demo_tokens_per_second=0, plugins=default_plugins())
    await app.start()
    await call(app, "new_session")
    assert app.chat is not None and app.chat.agent.state.model.provider == "demo"
    assert (await call(app, "send", text=TOUR_REQUEST))["status"] == "sent"
    await run_to_the_end(app)

    messages = app.chat.agent.state.messages
    calls = tool_calls(messages)
    assert [c.name for c in calls] == ["write", "python", "javascript", "subagent"]
    results = {m.tool_call_id: m for m in messages if m.role == "toolResult"}
    assert all(not results[c.id].is_error for c in calls), [results[c.id].content for c in calls]

    workspace = await open_workspace(app.chat.id)
    assert workspace.get(SAMPLE_CSV_PATH) is not None and workspace.get(SAMPLE_CSV_PATH).text() == SAMPLE_CSV
    summary = json.loads(workspace.get("summary.json").text() or "")
    assert summary["total"] == 8976.0 and summary["best"] == "North"
    python_output = results[calls[1].id].content[0].text
    assert "North       404    3763.00" in python_output
    assert javascript_calls == [JAVASCRIPT_CODE]

    # The two subagents ran in parallel, each reading its file with the real read tool.
    details = results[calls[3].id].details
    children = details.results if hasattr(details, "results") else details["results"]
    outputs = [json.dumps(child if isinstance(child, dict) else child.model_dump(), default=str) for child in children]
    assert len(outputs) == 2
    assert "is a table of 9 rows with the columns month, region, units, price" in outputs[0]
    assert "is an SVG chart with 3 bars" in outputs[1]

    final = messages[-1]
    assert final.role == "assistant" and final.stop_reason == "stop"
    text = final.content[-1].text
    assert "Summary: 9 rows, 3 regions, revenue 8976.00; North leads with 42%." in text
    assert "`chart.svg` (totals: North 3763.00, South 2793.00, West 2420.00)" in text
    assert "no request left it" in text


async def test_without_code_tools_the_script_leaves_their_steps_out() -> None:
    app = WebApp(MemoryBackend(), MemoryTabStore(), Recorder(), demo_tokens_per_second=0, plugins=default_plugins())
    await app.start()
    await call(app, "new_session")
    await call(app, "send", text=TOUR_REQUEST)
    await run_to_the_end(app)
    assert app.chat is not None
    assert [c.name for c in tool_calls(app.chat.agent.state.messages)] == ["write", "subagent"]
    assert app.chat.agent.state.messages[-1].stop_reason == "stop"


async def test_without_any_tool_the_demo_says_how_to_turn_them_on() -> None:
    context = Context(messages=[UserMessage(content=TOUR_REQUEST)], tools=[])
    reply = demo_reply(context, SimpleStreamOptions())
    assert reply.stop_reason == "stop"
    assert "Settings → Tools" in reply.content[-1].text


def test_requests_pick_their_scripts_and_plain_chat_is_unchanged() -> None:
    assert agent_script(TOUR_REQUEST) == "tour"
    assert agent_script("Analyse a sample CSV file with Python") == "analyse"
    assert agent_script("Draw a chart of the sample data with JavaScript") == "chart"
    assert agent_script("Run two subagents in parallel on the sample data") == "parallel"
    assert agent_script("Show me what this app can do") is None
    assert agent_script("Write some code: a debounce helper") is None
    assert [tool for tool, _ in AGENT_SCRIPTS["analyse"]] == ["write", "python"]
    assert "print(" in PYTHON_CODE
