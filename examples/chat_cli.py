"""A chat in the terminal: streaming replies, one tool, Ctrl-C stops the current reply.

    python examples/chat_cli.py                                   # offline: the scripted faux model
    ANTHROPIC_API_KEY=... python examples/chat_cli.py anthropic claude-sonnet-4-5
    OPENAI_API_KEY=... python examples/chat_cli.py openai gpt-4o-mini

The key is read from ``<PROVIDER>_API_KEY``; ``<PROVIDER>_BASE_URL`` overrides the provider's base URL
(a gateway or proxy of yours). An empty line or end of input (Ctrl-D) quits.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import signal
import sys
from typing import Any

from pydantic import BaseModel, Field

from py_agent import Agent, AgentTool, AgentToolResult, Model, TextContent
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.ai.models import get_model


class ClockParams(BaseModel):
    timezone_offset_hours: float = Field(0, description="Offset from UTC in hours, e.g. 2 or -5")


async def clock(tool_call_id: str, params: ClockParams, signal: Any, on_update: Any) -> AgentToolResult:
    """The tool: what time it is at an offset from UTC."""
    zone = datetime.timezone(datetime.timedelta(hours=params.timezone_offset_hours))
    now = datetime.datetime.now(zone).strftime("%H:%M")
    return AgentToolResult(content=[TextContent(text=f"It is {now} at UTC{params.timezone_offset_hours:+g}.")])


CLOCK = AgentTool(
    name="clock",
    label="Clock",
    description="The current time at an offset from UTC",
    parameters=ClockParams,
    execute=clock,
)


def pick_model(argv: list[str]) -> Model:
    if len(argv) < 2:
        # Offline: a scripted model that calls the tool, then answers (it repeats for every question).
        faux = register_faux_provider()
        steps: list[Any] = []
        for _ in range(50):
            steps += [
                faux_assistant_message([faux_tool_call("clock", {"timezone_offset_hours": 0})], stop_reason="toolUse"),
                lambda context, *_: faux_assistant_message(f"The clock says: {context.messages[-1].content[0].text}"),
            ]
        faux.set_responses(steps)
        model = faux.get_model()
        assert model is not None
        return model
    provider, model_id = argv[0], argv[1]
    found = get_model(provider, model_id)
    if found is None:
        sys.exit(f"Unknown model {provider}/{model_id}")
    base_url = os.environ.get(f"{provider.upper()}_BASE_URL")
    return found.model_copy(update={"base_url": base_url}) if base_url else found


async def main(argv: list[str]) -> None:
    model = pick_model(argv)
    agent = Agent(
        initial_state={"model": model, "tools": [CLOCK], "system_prompt": "You are a terse assistant."},
        get_api_key=lambda provider: os.environ.get(f"{provider.upper()}_API_KEY"),
    )

    def show(event: Any, abort_signal: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            print(event.assistant_message_event.delta, end="", flush=True)
        elif event.type == "tool_execution_start":
            print(f"[{event.tool_name} {event.args}]", flush=True)
        elif event.type == "message_end" and event.message.role == "assistant":
            if event.message.stop_reason in ("error", "aborted"):
                print(f"\n[{event.message.stop_reason}] {event.message.error_message or ''}", end="")
            print(flush=True)

    agent.subscribe(show)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, agent.abort)  # Ctrl-C stops the reply, not the program
    print(f"Chatting with {model.provider}/{model.id}. An empty line quits.")
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.strip():
            break
        await agent.prompt(line.strip())


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
