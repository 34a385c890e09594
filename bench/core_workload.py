"""The per-delta workload of the core benchmark, shared by CPython and Pyodide runs.

One prompt: a tool call (round trip through an echo tool), then a reply streamed as ``N`` faux
text deltas of 4 characters each (token size 1). A listener counts events, as a UI would.
The same scenario is run on pi's reference agent by ``core_reference.mjs``.
"""

from __future__ import annotations

import time
from typing import Any

from py_agent import Agent, AgentTool, AgentToolResult, TextContent
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider

ECHO_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}}}


async def _echo(tool_call_id: str, params: dict[str, Any], signal: object, on_update: object) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="ok")], details={})


async def run_once(deltas: int) -> dict[str, float]:
    faux = register_faux_provider(token_size={"min": 1, "max": 1})
    try:
        faux.set_responses(
            [
                faux_assistant_message([faux_tool_call("echo", {"value": "hi"}, id="t1")], stop_reason="toolUse"),
                faux_assistant_message("abcd" * deltas),
            ]
        )
        tool = AgentTool(name="echo", label="Echo", description="echo", parameters=ECHO_SCHEMA, execute=_echo)
        agent = Agent(initial_state={"model": faux.get_model(), "tools": [tool]})
        count = 0

        def listener(event: object) -> None:
            nonlocal count
            count += 1

        agent.subscribe(listener)
        started = time.perf_counter()
        await agent.prompt("go")
        elapsed = time.perf_counter() - started
        assert agent.state.messages[-1].content[0].text == "abcd" * deltas
        return {"events": count, "seconds": elapsed, "us_per_delta": elapsed / deltas * 1e6}
    finally:
        faux.unregister()


async def run(deltas: int = 20000, repeats: int = 7) -> list[dict[str, float]]:
    await run_once(min(deltas, 2000))  # warm-up
    return [await run_once(deltas) for _ in range(repeats)]
