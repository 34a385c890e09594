"""Property tests (hypothesis, fixed budget, derandomized) of message JSON round trips:
pi's JSON of a message -> the agent's model -> JSON gives the same line back, for every message
role and content block, optional fields present or absent, unknown fields included, and the same
again through a whole session (entry line -> session -> export).

(Session import itself is fuzzed in test_fuzz_import.py.)
"""

from __future__ import annotations

from typing import Any

# Imported, not importorskip'ed: CI must never skip these (hypothesis is in the test extras).
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_agent.ai.types import AssistantMessage, ToolResultMessage, UserMessage
from py_agent.session import (
    Session,
    export_jsonl,
    import_jsonl,
    json_parse,
    json_stringify,
    message_from_json,
    message_to_json,
)

# The number of examples is the hypothesis profile's (tests/conftest.py).
BUDGET = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

text = st.text(max_size=20)
ints = st.integers(min_value=0, max_value=2**53)
numbers = st.integers(min_value=-(2**53), max_value=2**53) | st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | numbers | text
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=10,
)
# Unknown fields newer pi versions may write: names that are no field of ours in any spelling.
# (A null one is dropped, as for every optional field: the models never write null.)
extra_fields = st.dictionaries(
    st.sampled_from(["futureField", "x-vendor", "meta2", "éxtra"]),
    json_values.filter(lambda v: v is not None),
    max_size=2,
)


def with_optional(required: dict[str, Any], optional: dict[str, Any]) -> Any:
    return st.fixed_dictionaries(required, optional=optional)


text_block = with_optional({"type": st.just("text"), "text": text}, {"textSignature": text})
image_block = st.fixed_dictionaries(
    {"type": st.just("image"), "data": text, "mimeType": st.sampled_from(["image/png", "image/jpeg"])}
)
thinking_block = with_optional(
    {"type": st.just("thinking"), "thinking": text}, {"thinkingSignature": text, "redacted": st.booleans()}
)
tool_call = with_optional(
    {
        "type": st.just("toolCall"),
        "id": text,
        "name": text,
        "arguments": st.dictionaries(text, json_values, max_size=4),
    },
    {"thoughtSignature": text},
)
usage = with_optional(
    {
        "input": ints,
        "output": ints,
        "cacheRead": ints,
        "cacheWrite": ints,
        "totalTokens": ints,
        "cost": st.fixed_dictionaries(
            {k: st.floats(min_value=0, max_value=1e6) for k in ("input", "output", "cacheRead", "cacheWrite", "total")}
        ),
    },
    {"cacheWrite1h": ints},
)
user = with_optional(
    {"role": st.just("user"), "content": text | st.lists(text_block | image_block, max_size=3), "timestamp": ints}, {}
)
assistant = with_optional(
    {
        "role": st.just("assistant"),
        "content": st.lists(text_block | thinking_block | tool_call, max_size=4),
        "api": st.sampled_from(
            ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]
        ),
        "provider": text,
        "model": text,
        "usage": usage,
        "stopReason": st.sampled_from(["stop", "length", "toolUse", "error", "aborted"]),
        "timestamp": ints,
    },
    {
        "responseModel": text,
        "responseId": text,
        "errorMessage": text,
        "diagnostics": st.lists(json_values.filter(lambda v: v is not None), max_size=2),
    },
)
tool_result = with_optional(
    {
        "role": st.just("toolResult"),
        "toolCallId": text,
        "toolName": text,
        "content": st.lists(text_block | image_block, max_size=3),
        "isError": st.booleans(),
        "timestamp": ints,
    },
    {"details": json_values.filter(lambda v: v is not None)},
)
messages = st.builds(lambda m, extra: {**extra, **m}, user | assistant | tool_result, extra_fields)

MODELS = {"user": UserMessage, "assistant": AssistantMessage, "toolResult": ToolResultMessage}


@BUDGET
@given(messages)
def test_message_json_round_trips_through_the_model(message: dict[str, Any]) -> None:
    line = json_stringify(message)
    model = message_from_json(json_parse(line))
    assert isinstance(model, MODELS[message["role"]])  # a real model, not a fallback dict
    again = message_to_json(model)
    # The same JSON value (the model writes its fields in pi's usual order, whatever the input's).
    assert json_parse(json_stringify(again)) == json_parse(line)
    assert message_from_json(again) == model


@BUDGET
@given(st.lists(messages, min_size=1, max_size=6))
def test_messages_round_trip_through_a_session_export(items: list[dict[str, Any]]) -> None:
    session = Session.create()
    for item in items:
        session.append_message(message_from_json(item))
    text = export_jsonl(session)
    again = import_jsonl(text)
    assert not again.warnings
    stored = [json_parse(json_stringify(e.message)) for e in again if hasattr(e, "message")]
    assert stored == [json_parse(json_stringify(i)) for i in items]
    assert export_jsonl(again) == text
