"""The composer's context meter (py_agent/app/context_meter.py): pi's figure for the next request."""

from __future__ import annotations

import math

from py_agent import AgentTool
from py_agent.ai.types import AssistantMessage, TextContent, Usage, UserMessage
from py_agent.app.context_meter import RESERVE_TOKENS, context_meter


def reply(text: str, total: int, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="p",
        model="m",
        usage=Usage(input=total - 10, output=10, total_tokens=total),
        stop_reason=stop,
        error_message="failed" if stop == "error" else None,
    )


def question(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


TOOL = AgentTool(name="read", label="read", description="Read a file", parameters={"type": "object"}, execute=None)
PROMPT = "p" * 400


def meter(messages: list[object]) -> dict[str, object]:
    return context_meter(messages, system_prompt=PROMPT, tools=[TOOL], context_window=50_000)


def test_the_last_reply_s_usage_plus_what_followed_it() -> None:
    figure = meter([question("a" * 40), reply("b", 5000), question("c" * 400)])
    assert figure == {"tokens": 5100, "contextWindow": 50_000, "threshold": 50_000 - RESERVE_TOKENS, "fromUsage": True}
    # A failed reply does not count: the one before it does.
    assert meter([question("x"), reply("b", 5000), reply("", 9000, "error")])["tokens"] == 5000


def test_without_a_reply_the_prompt_and_tools_are_estimated() -> None:
    prompt = math.ceil((400 + len("read") + len("Read a file") + len('{"type":"object"}')) / 4)
    assert meter([]) == {
        "tokens": prompt,
        "contextWindow": 50_000,
        "threshold": 50_000 - RESERVE_TOKENS,
        "fromUsage": False,
    }
    assert meter([question("a" * 400)])["tokens"] == prompt + 100


def test_a_reply_before_the_cut_does_not_count() -> None:
    summary = {"role": "compactionSummary", "summary": "s" * 80, "tokensBefore": 90_000, "timestamp": 1}
    figure = meter([summary, reply("kept", 90_000), {**summary}, question("q" * 40)])
    assert not figure["fromUsage"]
    assert figure["tokens"] == 20 + 1 + 20 + 10 + meter([])["tokens"]
    # Once a reply after the cut reports usage, it counts again.
    assert meter([summary, question("q"), reply("new", 3000)])["tokens"] == 3000


def test_a_small_window_has_its_threshold_at_zero() -> None:
    assert context_meter([], system_prompt="", tools=[], context_window=8000)["threshold"] == 0
