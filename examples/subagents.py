"""Subagents in parallel: the ``subagent`` tool runs several tasks at once, each in a fresh child agent.

    python examples/subagents.py

The parent asks for three tasks in one ``subagent`` call (``tasks``: up to 8, at most 4 run at a time);
each child gets the task as its first message and the parent's model and tools, and the tool result the
parent model reads holds every child's final answer. The faux model scripts both the parent and the
children here (a child answers with its task in upper case); a real model decides this itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

from py_agent import Agent
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.tools.subagent import create_subagent_tool


def respond(context: Any, *_: Any) -> Any:
    first = context.messages[0]
    text = first.content if isinstance(first.content, str) else first.content[0].text
    if context.tools and any(tool.name == "subagent" for tool in context.tools):  # the parent
        if len(context.messages) == 1:
            tasks = [{"agent": "worker", "task": t} for t in ("count the apples", "count the pears", "count the plums")]
            return faux_assistant_message([faux_tool_call("subagent", {"tasks": tasks})], stop_reason="toolUse")
        return faux_assistant_message("All three counts are done.")
    return faux_assistant_message(f"Done: {text.removeprefix('Task: ').upper()}")  # a child


async def main() -> None:
    faux = register_faux_provider()
    faux.set_responses([respond] * 10)
    parent = Agent(initial_state={"model": faux.get_model()})
    parent.state.tools = [create_subagent_tool(parent)]
    parent.subscribe(
        lambda event, signal: print(event.result.content[0].text) if event.type == "tool_execution_end" else None
    )
    await parent.prompt("Count the fruit, in parallel.")
    print(parent.state.messages[-1].content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
