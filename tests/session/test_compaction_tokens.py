"""Token estimates of py_agent.session.compaction (pi's figures; parity with pi itself:
tests/session/test_compaction_parity.py)."""

from __future__ import annotations

from session_helpers import assistant, new_session, tool_result, user

from py_agent.ai.types import AssistantMessage, ImageContent, TextContent, ToolCall, Usage, UserMessage
from py_agent.session.compaction import (
    DEFAULT_COMPACTION_SETTINGS,
    CompactionSettings,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)


def test_defaults_are_pis() -> None:
    settings = DEFAULT_COMPACTION_SETTINGS
    assert (settings.enabled, settings.reserve_tokens, settings.keep_recent_tokens) == (True, 16384, 20000)


def test_characters_over_four_rounded_up_in_utf16_units() -> None:
    assert estimate_tokens(user("abcd")) == 1
    assert estimate_tokens(user("abcde")) == 2
    assert estimate_tokens({"role": "user", "content": "😀😀"}) == 1  # 4 UTF-16 units
    assert estimate_tokens({"role": "user", "content": "😀😀a"}) == 2


def test_images_count_4800_characters() -> None:
    message = UserMessage(content=[TextContent(text="abc"), ImageContent(data="AAAA", mime_type="image/png")])
    assert estimate_tokens(message) == -(-4803 // 4)


def test_tool_calls_count_name_and_json_arguments() -> None:
    call = ToolCall(id="c1", name="read", arguments={"path": "a.txt", "n": 1.0})
    message = AssistantMessage(content=[call], api="x", provider="p", model="m", usage=Usage(), stop_reason="toolUse")
    # JSON.stringify writes 1.0 as 1: {"path":"a.txt","n":1} is 22 characters
    assert estimate_tokens(message) == -(-(4 + 22) // 4)
    as_json = message.model_dump(by_alias=True)
    assert estimate_tokens(as_json) == estimate_tokens(message)


def test_session_made_roles() -> None:
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 9, "tokensBefore": 1}) == 3
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "a b"}) == 2
    assert estimate_tokens({"role": "artifact", "content": "long text"}) == 0


def test_context_tokens_use_the_last_usable_usage_plus_what_follows() -> None:
    ok = assistant("ok", tokens=(1000, 200))
    failed = assistant("x", tokens=(99999, 0)).model_copy(update={"stop_reason": "error"})
    messages = [user("hi"), ok, tool_result("c", "abcdefgh"), failed, user("abcd")]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index == 1
    assert estimate.usage_tokens == 1200
    assert estimate.trailing_tokens == 2 + estimate_tokens(failed) + 1
    assert estimate.tokens == 1200 + estimate.trailing_tokens
    none = estimate_context_tokens([user("abcd"), user("abcdefgh")])
    assert (none.tokens, none.usage_tokens, none.last_usage_index) == (3, 0, None)


def test_calculate_context_tokens_falls_back_to_the_parts() -> None:
    assert calculate_context_tokens(Usage(input=1, output=2, cache_read=3, cache_write=4, total_tokens=50)) == 50
    assert calculate_context_tokens({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 0}) == 10


def test_last_assistant_usage_of_session_entries() -> None:
    session = new_session()
    session.append_message(user("a"))
    session.append_message(assistant("b", tokens=(7, 3)))
    session.append_message(assistant("c", tokens=(70, 30)).model_copy(update={"stop_reason": "aborted"}))
    found = get_last_assistant_usage(session.entries)
    assert found is not None and found["totalTokens"] == 10
    assert get_last_assistant_usage([]) is None


def test_should_compact_past_the_window_minus_the_reserve() -> None:
    assert not should_compact(100_000 - 16384, 100_000, DEFAULT_COMPACTION_SETTINGS)
    assert should_compact(100_000 - 16383, 100_000, DEFAULT_COMPACTION_SETTINGS)
    assert not should_compact(10**9, 100_000, CompactionSettings(enabled=False))
