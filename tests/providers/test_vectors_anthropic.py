# ruff: noqa: E501  (literal vectors)
"""Anthropic stream vectors and request bodies (with pi 0.79.10's
request changes: beta header only ``interleaved-thinking``, ``eager_input_streaming`` per tool,
``thinking.display: "summarized"``, ``{type: "disabled"}`` when no level is asked, ``max_tokens``
from the model when no cap is given, adaptive thinking chosen by ``compat.forceAdaptiveThinking``)."""

from __future__ import annotations

from typing import Any

from provider_helpers import (
    ANT_SRC,
    READ,
    SPLITS,
    Reply,
    content_json,
    cost_ok,
    f_ant,
    f_ant46,
    request_of,
    rich_context,
    run_stream,
    src_of,
    usage_tuple,
)

from py_agent.ai.overflow import is_context_overflow


def ev(kind: str, data: dict[str, Any]) -> str:
    import json

    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def MS(**u: Any) -> str:
    usage = {
        "input_tokens": 25,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
        **u,
    }
    return ev(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
    )


def CBS(i: int, b: dict[str, Any]) -> str:
    return ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": b})


def CBD(i: int, d: dict[str, Any]) -> str:
    return ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})


def CBE(i: int) -> str:
    return ev("content_block_stop", {"type": "content_block_stop", "index": i})


def MD(sr: str | None, u: dict[str, Any]) -> str:
    return ev(
        "message_delta", {"type": "message_delta", "delta": {"stop_reason": sr, "stop_sequence": None}, "usage": u}
    )


STOP = ev("message_stop", {"type": "message_stop"})
PING = ev("ping", {"type": "ping"})
TEXT = {"type": "text", "text": ""}


def T(text: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": text}


async def test_a1_text_with_ping() -> None:
    chunks = [
        MS(),
        CBS(0, TEXT),
        PING,
        CBD(0, T("Hello")),
        CBD(0, T("!")),
        CBE(0),
        MD("end_turn", {"output_tokens": 12}),
        STOP,
    ]
    for split in SPLITS:
        events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)], split=split)
        assert events == [
            "start",
            "text_start 0",
            'text_delta 0 "Hello"',
            'text_delta 0 "!"',
            'text_end 0 "Hello!"',
            "done stop",
        ]
        assert content_json(final) == [{"type": "text", "text": "Hello!"}]
        assert usage_tuple(final) == (25, 12, 0, 0, 37)
        assert cost_ok(final, 7.5e-5, 1.8e-4, 0, 0, 2.55e-4)


async def test_a2_thinking_text_tool_use_cache_usage() -> None:
    chunks = [
        MS(input_tokens=100, cache_read_input_tokens=1000, cache_creation_input_tokens=200),
        CBS(0, {"type": "thinking", "thinking": "", "signature": ""}),
        CBD(0, {"type": "thinking_delta", "thinking": "Need weather."}),
        CBD(0, {"type": "signature_delta", "signature": "EqQBsig=="}),
        CBE(0),
        CBS(1, TEXT),
        CBD(1, T("Checking.")),
        CBE(1),
        CBS(2, {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}),
        CBD(2, {"type": "input_json_delta", "partial_json": ""}),
        CBD(2, {"type": "input_json_delta", "partial_json": '{"city": "Par'}),
        CBD(2, {"type": "input_json_delta", "partial_json": 'is"}'}),
        CBE(2),
        MD("tool_use", {"output_tokens": 80}),
        STOP,
    ]
    for split in SPLITS:
        events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)], split=split)
        assert events == [
            "start",
            "thinking_start 0",
            'thinking_delta 0 "Need weather."',
            'thinking_end 0 "Need weather."',
            "text_start 1",
            'text_delta 1 "Checking."',
            'text_end 1 "Checking."',
            "toolcall_start 2",
            'toolcall_delta 2 "" -> {}',
            'toolcall_delta 2 "{\\"city\\": \\"Par" -> {"city": "Par"}',
            'toolcall_delta 2 "is\\"}" -> {"city": "Paris"}',
            'toolcall_end 2 toolu_01 get_weather {"city": "Paris"}',
            "done toolUse",
        ]
        assert content_json(final) == [
            {"type": "thinking", "thinking": "Need weather.", "thinkingSignature": "EqQBsig=="},
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "id": "toolu_01", "name": "get_weather", "arguments": {"city": "Paris"}},
        ]
        assert usage_tuple(final) == (100, 80, 1000, 200, 1380)
        assert cost_ok(final, 3e-4, 1.2e-3, 3e-4, 7.5e-4, 2.55e-3)


async def test_a3_redacted_thinking() -> None:
    chunks = [
        MS(),
        CBS(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}),
        CBE(0),
        CBS(1, TEXT),
        CBD(1, T("Hi")),
        CBE(1),
        MD("end_turn", {"output_tokens": 5}),
        STOP,
    ]
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == [
        "start",
        "thinking_start 0",
        'thinking_end 0 "[Reasoning redacted]"',
        "text_start 1",
        'text_delta 1 "Hi"',
        'text_end 1 "Hi"',
        "done stop",
    ]
    assert content_json(final) == [
        {
            "type": "thinking",
            "thinking": "[Reasoning redacted]",
            "thinkingSignature": "EmwKAhgBEgy3va",
            "redacted": True,
        },
        {"type": "text", "text": "Hi"},
    ]
    assert usage_tuple(final) == (25, 5, 0, 0, 30)
    assert cost_ok(final, 7.5e-5, 7.5e-5, 0, 0, 1.5e-4)


async def test_a4_error_event_mid_stream() -> None:
    chunks = [
        MS(),
        CBS(0, TEXT),
        CBD(0, T("Hel")),
        ev("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]
    for split in SPLITS:
        events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "Hel"}]
        assert usage_tuple(final) == (25, 1, 0, 0, 26)
        assert cost_ok(final, 7.5e-5, 1.5e-5, 0, 0, 9e-5)
        assert final.error_message == '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


async def test_a5_max_tokens() -> None:
    chunks = [MS(), CBS(0, TEXT), CBD(0, T("abc")), CBE(0), MD("max_tokens", {"output_tokens": 3}), STOP]
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", 'text_delta 0 "abc"', 'text_end 0 "abc"', "done length"]
    assert usage_tuple(final) == (25, 3, 0, 0, 28)
    assert cost_ok(final, 7.5e-5, 4.5e-5, 0, 0, 1.2e-4)


JSON = {"content-type": "application/json"}


async def test_a6_http_401() -> None:
    body = (
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011"}'
    )
    events, final, transport = await run_stream(f_ant(), [Reply(status=401, headers=JSON, chunks=[body])])
    assert events == ["error error"] and len(transport.requests) == 1
    assert final.error_message == "401 " + body


async def test_a7_429_then_success() -> None:
    body = '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}'
    ok = [MS(), CBS(0, TEXT), CBD(0, T("ok")), CBE(0), MD("end_turn", {"output_tokens": 2}), STOP]
    events, final, transport = await run_stream(
        f_ant(), [Reply(status=429, headers={**JSON, "retry-after": "0.01"}, chunks=[body]), Reply(chunks=ok)]
    )
    assert len(transport.requests) == 2
    assert events == ["start", "text_start 0", 'text_delta 0 "ok"', 'text_end 0 "ok"', "done stop"]
    assert usage_tuple(final) == (25, 2, 0, 0, 27)


async def test_a8_529_exhausted() -> None:
    body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    events, final, transport = await run_stream(
        f_ant(), [Reply(status=529, headers={**JSON, "retry-after": "0.01"}, chunks=[body])]
    )
    assert len(transport.requests) == 3 and events == ["error error"]
    assert final.error_message == "529 " + body


async def test_a9_truncated() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(
            f_ant(), [Reply(chunks=[MS(), CBS(0, TEXT), CBD(0, T("Hel"))])], split=split
        )
        assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "Hel"}]
        assert usage_tuple(final) == (25, 1, 0, 0, 26)
        assert final.error_message == "Stream ended unexpectedly: no stop_reason received"


async def test_a10_unknown_event_ignored() -> None:
    chunks = [
        MS(),
        ev("content_block_future", {"type": "content_block_future"}),
        CBS(0, TEXT),
        CBD(0, T("A")),
        CBE(0),
        MD("end_turn", {"output_tokens": 1}),
        STOP,
    ]
    events, _, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", 'text_delta 0 "A"', 'text_end 0 "A"', "done stop"]


async def test_a11_refusal() -> None:
    chunks = [MS(), CBS(0, TEXT), CBD(0, T("I can't")), CBE(0), MD("refusal", {"output_tokens": 2}), STOP]
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", 'text_delta 0 "I can\'t"', 'text_end 0 "I can\'t"', "error error"]
    assert content_json(final) == [{"type": "text", "text": "I can't"}]
    assert usage_tuple(final) == (25, 2, 0, 0, 27)
    assert final.error_message == "The model refused to complete the request"


async def test_a12_unknown_stop_reason() -> None:
    chunks = [MS(), MD("model_context_window_exceeded", {"output_tokens": 0}), STOP]
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "error error"]
    assert usage_tuple(final) == (25, 1, 0, 0, 26)
    assert final.error_message == "Unhandled stop reason: model_context_window_exceeded"
    assert is_context_overflow(final)


async def test_a13_http_400_overflow() -> None:
    body = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}'
    events, final, _ = await run_stream(f_ant(), [Reply(status=400, headers=JSON, chunks=[body])])
    assert events == ["error error"] and final.error_message == "400 " + body
    assert is_context_overflow(final)


async def test_a14_tool_without_arguments() -> None:
    chunks = [
        MS(),
        CBS(0, {"type": "tool_use", "id": "toolu_02", "name": "now", "input": {}}),
        CBE(0),
        MD("tool_use", {"output_tokens": 9}),
        STOP,
    ]
    events, _, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "toolcall_start 0", "toolcall_end 0 toolu_02 now {}", "done toolUse"]


async def test_a15_complete_input_in_block_start() -> None:
    chunks = [
        MS(),
        CBS(0, {"type": "tool_use", "id": "toolu_03", "name": "f", "input": {"a": 1}}),
        CBE(0),
        MD("tool_use", {"output_tokens": 9}),
        STOP,
    ]
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert events == ["start", "toolcall_start 0", 'toolcall_end 0 toolu_03 f {"a": 1}', "done toolUse"]
    assert content_json(final) == [{"type": "toolCall", "id": "toolu_03", "name": "f", "arguments": {"a": 1}}]


async def test_a16_message_delta_usage_with_nulls() -> None:
    chunks = [
        MS(input_tokens=50),
        CBS(0, TEXT),
        CBD(0, T("x")),
        CBE(0),
        MD("end_turn", {"input_tokens": None, "output_tokens": 7, "cache_read_input_tokens": 30}),
        STOP,
    ]
    _, final, _ = await run_stream(f_ant(), [Reply(chunks=chunks)])
    assert usage_tuple(final) == (50, 7, 30, 0, 87)
    assert cost_ok(final, 1.5e-4, 1.05e-4, 9e-6, 0, 2.64e-4)


async def test_a17_invalid_json() -> None:
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=[MS(), "event: content_block_start\ndata: {oops\n\n"])])
    assert events == ["start", "error error"]
    assert usage_tuple(final) == (25, 1, 0, 0, 26)
    assert final.error_message == "Invalid JSON in SSE data: {oops"


async def test_a18_html_gateway_error() -> None:
    reply = Reply(
        status=502,
        headers={"content-type": "text/html", "x-should-retry": "false"},
        chunks=["<html>Bad gateway</html>"],
    )
    _events, final, transport = await run_stream(f_ant(), [reply])
    assert len(transport.requests) == 1 and final.error_message == "502 <html>Bad gateway</html>"


async def test_a19_abort_mid_stream() -> None:
    chunks = [MS(input_tokens=5), CBS(0, TEXT), CBD(0, T("Hel")), CBD(0, T("lo"))]
    events, final, transport = await run_stream(
        f_ant(), [Reply(chunks=chunks, delay=0.03, hang=True)], abort_after="text_delta"
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error aborted"]
    assert content_json(final) == [{"type": "text", "text": "Hel"}]
    assert usage_tuple(final) == (5, 1, 0, 0, 6)
    assert final.error_message == "Request was aborted" and final.stop_reason == "aborted"
    assert transport.responses[0].closed


async def test_events_before_message_start() -> None:
    events, final, _ = await run_stream(f_ant(), [Reply(chunks=[CBS(0, TEXT), STOP])])
    assert events == ["start", "error error"]
    assert final.error_message == 'Unexpected event order, got content_block_start before "message_start"'


# ---------------------------------------------------------------------------------------------
# Requests


async def test_q8_same_model_budget_thinking() -> None:
    model = f_ant()
    request, body = await request_of(
        model, rich_context(src_of(model), "EqQBsig", "toolu_01"), reasoning="medium", temperature=0.2
    )
    assert request.url == "https://api.anthropic.com/v1/messages"
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers == {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": "2023-06-01",
        "anthropic-dangerous-direct-browser-access": "true",
        "x-api-key": "KEY",
        "anthropic-beta": "interleaved-thinking-2025-05-14",
    }
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert body == {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "what is this?"}, img]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Let me look.", "signature": "EqQBsig"},
                    {"type": "text", "text": "A dot."},
                    {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.txt"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": [{"type": "text", "text": "file body"}, img],
                        "is_error": False,
                    }
                ],
            },
            {"role": "user", "content": [{"type": "text", "text": "thanks", "cache_control": {"type": "ephemeral"}}]},
        ],
        "max_tokens": 64000,
        "stream": True,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "read", "description": "Read a file", "eager_input_streaming": True, "input_schema": READ}],
        "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
    }


async def test_q8_budget_with_a_cap() -> None:
    model = f_ant()
    _, body = await request_of(
        model, rich_context(src_of(model), "EqQBsig", "toolu_01"), reasoning="medium", max_tokens=32000
    )
    assert body["max_tokens"] == 40192 and body["thinking"]["budget_tokens"] == 8192


async def test_q9_replay_from_responses() -> None:
    sig = '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Let me look."}],"encrypted_content":"ENC"}'
    request, body = await request_of(
        f_ant(), rich_context(("openai-responses", "openai", "gpt-5"), sig, "call_abc|fc_+/=xyz")
    )
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "text", "text": "A dot."},
        {"type": "tool_use", "id": "call_abc_fc____xyz", "name": "read", "input": {"path": "a.txt"}},
    ]
    assert body["messages"][3]["content"][0]["tool_use_id"] == "call_abc_fc____xyz"
    assert body["max_tokens"] == 64000 and body["thinking"] == {"type": "disabled"}
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_q10_adaptive() -> None:
    ctx = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    request, body = await request_of(f_ant46(), ctx, reasoning="xhigh")
    assert "anthropic-beta" not in request.headers
    assert body == {
        "model": "claude-opus-4-6",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
        ],
        "max_tokens": 128000,
        "stream": True,
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "max"},
    }


async def test_replay_from_chat_keeps_anthropic_ids_valid() -> None:
    _, body = await request_of(f_ant(), rich_context(ANT_SRC, "EqQBsig", "toolu_01"))
    # Another Anthropic model: thinking becomes text, signatures are dropped.
    assert body["messages"][2]["content"][0] == {"type": "text", "text": "Let me look."}
