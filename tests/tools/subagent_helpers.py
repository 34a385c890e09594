"""Plain helpers for the subagent tests (no pytest fixtures: the tests also run inside Pyodide)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from py_agent.ai.faux import FauxProviderRegistration, faux_assistant_message, register_faux_provider
from py_agent.ai.types import AssistantMessage, Context, Model
from py_agent.core import AgentTool, AgentToolResult
from py_agent.tools.subagent import SubagentHost


def text_of(message: Any) -> str:
    content = message["content"] if isinstance(message, dict) else message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        kind = block["type"] if isinstance(block, dict) else block.type
        if kind == "text":
            parts.append(block["text"] if isinstance(block, dict) else block.text)
    return "".join(parts)


def task_of(context: Context) -> str:
    """The child's task: the text of the first user message, without pi's ``Task: `` prefix."""
    text = text_of(context.messages[0])
    return text.removeprefix("Task: ")


@dataclass
class Seen:
    """What each faux call received: system prompt, messages and tool names."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    def record(self, context: Context, model: Model) -> None:
        self.calls.append(
            {
                "system_prompt": context.system_prompt,
                "messages": list(context.messages),
                "tools": [t.name for t in context.tools or []],
                "model": model.id,
            }
        )


def router(
    respond: Callable[[Context], AssistantMessage | Any], seen: Seen | None = None, count: int = 50
) -> list[Any]:
    """``count`` copies of one faux step that answers each call with ``respond(context)``
    (sync or async); the shared faux queue then serves any number of children in any order."""

    async def step(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        if seen is not None:
            seen.record(context, model)
        reply = respond(context)
        if asyncio.iscoroutine(reply):
            reply = await reply
        if isinstance(reply, str):
            reply = faux_assistant_message(reply)
        return reply

    return [step] * count


def make_faux(models: list[dict[str, Any]] | None = None) -> tuple[FauxProviderRegistration, Model]:
    faux = register_faux_provider(models=models, token_size={"min": 50, "max": 50})
    model = faux.get_model()
    assert model is not None
    return faux, model


def dummy_tool(name: str, description: str = "") -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any = None, on_update: Any = None) -> AgentToolResult:
        return AgentToolResult(content=[{"type": "text", "text": f"{name} ok"}])  # type: ignore[list-item]

    return AgentTool(
        name=name,
        label=name,
        description=description or f"The {name} tool.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )


def host_for(model: Model, tools: list[Any] | None = None, **kwargs: Any) -> SubagentHost:
    return SubagentHost(model=model, tools=tools or [], **kwargs)


class Updates:
    """Collects a tool's on_update partial results."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, partial: Any) -> None:
        self.items.append(partial)

    @property
    def texts(self) -> list[str]:
        return [item.content[0].text for item in self.items]
