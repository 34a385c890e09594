"""Plain helpers for the session tests (no pytest fixtures: the tests also run inside Pyodide)."""

from __future__ import annotations

import json
import pathlib
from typing import Any

from py_agent.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UsageCost, UserMessage
from py_agent.session import Session, SessionContext

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"

# 2026-11-30T01:02:03.456Z
START_MS = 1_796_000_523_456


def read_fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def load_json_fixture(name: str) -> Any:
    return json.loads(read_fixture(name))


class Clock:
    """A clock that starts at ``START_MS`` and moves ``step`` ms per reading."""

    def __init__(self, start: int = START_MS, step: int = 1) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> int:
        value = self.now
        self.now += self.step
        return value


class CountingIds:
    """Deterministic entry-id candidates: 00000001, 00000002, ..."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"{self.count:08x}"


class RepeatingIds:
    """Always the same candidate (to exercise the collision fallback)."""

    def __call__(self) -> str:
        return "deadbeef"


def new_session(**kwargs: Any) -> Session:
    kwargs.setdefault("session_id", "01a229fe-0000-7000-8000-000000000001")
    kwargs.setdefault("clock", Clock())
    kwargs.setdefault("id_generator", CountingIds())
    return Session.create(**kwargs)


def user(text: str, timestamp: int = 1_764_464_523_000) -> UserMessage:
    return UserMessage(content=text, timestamp=timestamp)


def usage(input_tokens: int = 10, output_tokens: int = 5, cost: float = 0.000015) -> Usage:
    return Usage(
        input=input_tokens,
        output=output_tokens,
        total_tokens=input_tokens + output_tokens,
        cost=UsageCost(input=cost, output=cost * 2, total=cost * 3),
    )


def assistant(
    text: str,
    *,
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    tokens: tuple[int, int] = (10, 5),
    cost: float = 0.000015,
    tool_call: str | None = None,
    timestamp: int = 1_764_464_524_000,
) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)]
    if tool_call:
        content.append(ToolCall(id=tool_call, name="search", arguments={"q": text}))
    return AssistantMessage(
        content=content,
        api="anthropic-messages",
        provider=provider,
        model=model,
        usage=usage(*tokens, cost=cost),
        stop_reason="toolUse" if tool_call else "stop",
        timestamp=timestamp,
    )


def tool_result(call_id: str, text: str, timestamp: int = 1_764_464_525_000) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="search",
        content=[TextContent(text=text)],
        details={"n": 1},
        timestamp=timestamp,
    )


def context_json(context: SessionContext) -> dict[str, Any]:
    """A context in pi's ``SessionContext`` JSON shape."""
    return {
        "messages": context.messages,
        "thinkingLevel": context.thinking_level,
        "model": context.model.model_dump() if context.model else None,
    }


def jsonl_objects(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


ID_KEYS = ("id", "parentId", "firstKeptEntryId", "targetId", "fromId")


def remap_ids(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` with entry ids (in the id-valued keys) translated through ``mapping``."""
    if isinstance(value, dict):
        return {
            key: (mapping.get(item, item) if key in ID_KEYS and isinstance(item, str) else remap_ids(item, mapping))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [remap_ids(item, mapping) for item in value]
    return value


def build_sample() -> Session:
    session = new_session()
    session.append_system_prompt("You are terse.")
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_thinking_level_change("medium")
    first = session.append_message(user("Plan a trip to Lisbon. Then more."))
    answer = session.append_message(assistant("Day 1: Alfama.", tool_call="call_1"))
    session.append_message(tool_result("call_1", "Sunny, 24°C"))
    session.append_message(
        {"role": "artifact", "action": "create", "filename": "plan.md", "timestamp": "2026-01-01T00:00:00Z"}
    )
    session.append_custom("py-agent.ui", {"collapsed": [answer.id], "ratio": 0.25})
    session.append_custom_message("reminder", "Remember the budget.", display=True)
    session.append_label(first.id, "start")
    session.append_session_info("Lisbon")
    session.append_compaction("Trip planning so far.", answer.id, 1234, details={"files": []})
    session.append_message(user("And day 2?"))
    session.branch_before(first.id)
    session.append_message(user("Plan a trip to Porto instead."))
    session.branch_with_summary(answer.id, "Tried Porto.", details={"why": "curious"}, from_hook=False)
    session.append_message(user("Back to Lisbon."))
    return session
