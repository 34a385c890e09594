# ruff: noqa: E501  (literal vectors)
"""OpenAI Responses stream vectors and request bodies, with pi 0.79.10's changes
(errors read ``OpenAI API error (<status>): ...``; no Juice item, ``reasoning: {effort: "none"}``
for a reasoning model without a level; fallback item ids ``msg_pi_<k>`` / ``msg_pi_<k>_<j>``;
no ``max_output_tokens`` without a cap)."""

from __future__ import annotations

from typing import Any

from provider_helpers import (
    ANT_SRC,
    IMG,
    READ,
    SPLITS,
    Reply,
    content_json,
    cost_ok,
    f_resp,
    named,
    request_of,
    rich_context,
    run_stream,
    src_of,
    usage_tuple,
)

from py_agent.ai.overflow import is_context_overflow

CREATED = named({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}})
RS = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
MSG = {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}
FC = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": "",
    "status": "in_progress",
}


def body(*events: dict[str, Any]) -> list[str]:
    return [CREATED, *(named(e) for e in events)]


def completed(
    usage: dict[str, Any], status: str = "completed", kind: str = "response.completed", **extra: Any
) -> dict[str, Any]:
    return {"type": kind, "response": {"id": "resp_1", "status": status, "usage": usage, **extra}}


R1 = body(
    {"type": "response.output_item.added", "output_index": 0, "item": RS},
    {
        "type": "response.reasoning_summary_part.added",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": {"type": "summary_text", "text": ""},
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "Plan.",
    },
    {
        "type": "response.reasoning_summary_part.done",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": {"type": "summary_text", "text": "Plan."},
    },
    {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {**RS, "summary": [{"type": "summary_text", "text": "Plan."}]},
    },
    {"type": "response.output_item.added", "output_index": 1, "item": MSG},
    {
        "type": "response.content_part.added",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []},
    },
    {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Hi"},
    {
        "type": "response.output_text.delta",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "delta": " there",
    },
    {
        "type": "response.output_text.done",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "text": "Hi there",
    },
    {
        "type": "response.content_part.done",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": {"type": "output_text", "text": "Hi there", "annotations": []},
    },
    {
        "type": "response.output_item.done",
        "output_index": 1,
        "item": {
            **MSG,
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hi there", "annotations": []}],
        },
    },
    completed(
        {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 40},
            "output_tokens": 50,
            "output_tokens_details": {"reasoning_tokens": 30},
            "total_tokens": 150,
        }
    ),
)


async def test_r1_reasoning_text_cached_usage() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(f_resp(), [Reply(chunks=R1)], split=split)
        assert events == [
            "start",
            "thinking_start 0",
            'thinking_delta 0 "Plan."',
            'thinking_end 0 "Plan."',
            "text_start 1",
            'text_delta 1 "Hi"',
            'text_delta 1 " there"',
            'text_end 1 "Hi there"',
            "done stop",
        ]
        assert content_json(final) == [
            {
                "type": "thinking",
                "thinking": "Plan.",
                "thinkingSignature": '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAA"}',
            },
            {"type": "text", "text": "Hi there", "textSignature": '{"v":1,"id":"msg_1"}'},
        ]
        assert usage_tuple(final) == (60, 50, 40, 0, 150)
        assert cost_ok(final, 6e-5, 1e-4, 2e-5, 0, 1.8e-4)


async def test_summary_parts_separator_comes_with_the_next_part() -> None:
    part = {"type": "summary_text", "text": ""}
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": RS},
        {"type": "response.reasoning_summary_part.added", "summary_index": 0, "part": part},
        {"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": "A"},
        {"type": "response.reasoning_summary_part.done", "summary_index": 0, "part": part},
        {"type": "response.reasoning_summary_part.added", "summary_index": 1, "part": part},
        {"type": "response.reasoning_summary_text.delta", "summary_index": 1, "delta": "B"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**RS, "summary": [{"type": "summary_text", "text": "A"}, {"type": "summary_text", "text": "B"}]},
        },
        completed({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}),
    )
    events, _, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == [
        "start",
        "thinking_start 0",
        'thinking_delta 0 "A"',
        'thinking_delta 0 "\\n\\n"',
        'thinking_delta 0 "B"',
        'thinking_end 0 "A\\n\\nB"',
        "done stop",
    ]


R2 = body(
    {"type": "response.output_item.added", "output_index": 0, "item": FC},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '{"city":'},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '"Paris"}'},
    {
        "type": "response.function_call_arguments.done",
        "item_id": "fc_1",
        "output_index": 0,
        "arguments": '{"city":"Paris"}',
    },
    {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {**FC, "arguments": '{"city":"Paris"}', "status": "completed"},
    },
    completed({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}),
)


async def test_r2_function_call() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(f_resp(), [Reply(chunks=R2)], split=split)
        assert events == [
            "start",
            "toolcall_start 0",
            'toolcall_delta 0 "{\\"city\\":" -> {}',
            'toolcall_delta 0 "\\"Paris\\"}" -> {"city": "Paris"}',
            'toolcall_end 0 call_1|fc_1 get_weather {"city": "Paris"}',
            "done toolUse",
        ]
        assert content_json(final) == [
            {"type": "toolCall", "id": "call_1|fc_1", "name": "get_weather", "arguments": {"city": "Paris"}}
        ]
        assert usage_tuple(final) == (10, 5, 0, 0, 15)
        assert cost_ok(final, 1e-5, 1e-5, 0, 0, 2e-5)


async def test_r3_incomplete() -> None:
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": MSG},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Trunc",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                **MSG,
                "status": "incomplete",
                "content": [{"type": "output_text", "text": "Trunc", "annotations": []}],
            },
        },
        completed(
            {"input_tokens": 10, "output_tokens": 16, "total_tokens": 26},
            status="incomplete",
            kind="response.incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        ),
    )
    events, final, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", 'text_delta 0 "Trunc"', 'text_end 0 "Trunc"', "done length"]
    assert usage_tuple(final) == (10, 16, 0, 0, 26)
    assert cost_ok(final, 1e-5, 3.2e-5, 0, 0, 4.2e-5)
    assert content_json(final) == [{"type": "text", "text": "Trunc", "textSignature": '{"v":1,"id":"msg_1"}'}]


async def test_r4_error_event() -> None:
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": MSG},
        {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error while processing your request.",
            "param": None,
        },
    )
    events, final, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", "error error"]
    assert content_json(final) == [{"type": "text", "text": ""}]
    assert final.error_message == "Error Code server_error: The server had an error while processing your request."


async def test_r5_response_failed() -> None:
    chunks = body(
        {
            "type": "response.failed",
            "response": {
                "id": "resp_1",
                "status": "failed",
                "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"},
                "incomplete_details": None,
            },
        }
    )
    events, final, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == ["start", "error error"] and content_json(final) == []
    assert final.error_message == "rate_limit_exceeded: Rate limit reached"


async def test_r6_refusal() -> None:
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": MSG},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        {
            "type": "response.refusal.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "I can't help.",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**MSG, "status": "completed", "content": [{"type": "refusal", "refusal": "I can't help."}]},
        },
        completed({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}),
    )
    events, _, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == [
        "start",
        "text_start 0",
        'text_delta 0 "I can\'t help."',
        'text_end 0 "I can\'t help."',
        "done stop",
    ]


async def test_text_delta_before_content_part_added() -> None:
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": MSG},
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                **MSG,
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
            },
        },
        completed({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}),
    )
    events, _, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == ["start", "text_start 0", 'text_delta 0 "Hi"', 'text_end 0 "Hi"', "done stop"]


async def test_r7_http_400_overflow() -> None:
    error = '{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}'
    events, final, _ = await run_stream(
        f_resp(), [Reply(status=400, headers={"content-type": "application/json"}, chunks=[error])]
    )
    assert events == ["error error"]
    assert (
        final.error_message
        == "OpenAI API error (400): Your input exceeds the context window of this model. Please adjust your input and try again."
    )
    assert is_context_overflow(final)


async def test_r8_service_tier() -> None:
    chunks = body(completed({"input_tokens": 1000, "output_tokens": 1000, "total_tokens": 2000}, service_tier="flex"))
    events, final, transport = await run_stream(f_resp(), [Reply(chunks=chunks)], service_tier="flex")
    assert events == ["start", "done stop"]
    assert usage_tuple(final) == (1000, 1000, 0, 0, 2000)
    assert cost_ok(final, 5e-4, 1e-3, 0, 0, 1.5e-3)
    assert transport.body()["service_tier"] == "flex"


async def test_r9_function_call_without_deltas() -> None:
    chunks = body(
        {"type": "response.output_item.added", "output_index": 0, "item": FC},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**FC, "arguments": '{"x":1}', "status": "completed"},
        },
        completed({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}),
    )
    events, final, _ = await run_stream(f_resp(), [Reply(chunks=chunks)])
    assert events == ["start", "toolcall_start 0", 'toolcall_end 0 call_1|fc_1 get_weather {"x": 1}', "done toolUse"]
    assert content_json(final) == [
        {"type": "toolCall", "id": "call_1|fc_1", "name": "get_weather", "arguments": {"x": 1}}
    ]


async def test_r10_signal_already_aborted() -> None:
    from py_agent.ai import AbortSignal

    events, final, transport = await run_stream(f_resp(), [Reply(chunks=R2)], signal=AbortSignal.aborted_signal())
    assert events == ["error aborted"] and transport.requests == []
    assert final.error_message == "Request was aborted"


async def test_truncated_responses_stream() -> None:
    events, final, _ = await run_stream(f_resp(), [Reply(chunks=R2[:3])])
    assert events[-1] == "error error"
    assert final.error_message == "Stream ended unexpectedly: no response.completed received"


# ---------------------------------------------------------------------------------------------
# Requests

SIG = '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Let me look."}],"encrypted_content":"ENC"}'


async def test_q6_same_model() -> None:
    model = f_resp()
    request, body_ = await request_of(
        model, rich_context(src_of(model), SIG, "call_1|fc_1"), reasoning="low", session_id="sess-1"
    )
    assert request.url == "https://api.openai.com/v1/responses"
    assert body_ == {
        "model": "gpt-5-mini",
        "input": [
            {"role": "developer", "content": "You are terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "what is this?"},
                    {"type": "input_image", "detail": "auto", "image_url": IMG},
                ],
            },
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Let me look."}],
                "encrypted_content": "ENC",
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "A dot.", "annotations": []}],
                "status": "completed",
                "id": "msg_pi_2",
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "read",
                "arguments": '{"path":"a.txt"}',
            },
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": [
                    {"type": "input_text", "text": "file body"},
                    {"type": "input_image", "detail": "auto", "image_url": IMG},
                ],
            },
            {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
        ],
        "stream": True,
        "prompt_cache_key": "sess-1",
        "store": False,
        "tools": [
            {"type": "function", "name": "read", "description": "Read a file", "parameters": READ, "strict": False}
        ],
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


async def test_q7_replay_from_anthropic() -> None:
    _, body_ = await request_of(f_resp(), rich_context(ANT_SRC, "EqQBsig", "toolu_01"))
    items = body_["input"]
    assert items[3] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
        "status": "completed",
        "id": "msg_pi_2",
    }
    assert items[4] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "A dot.", "annotations": []}],
        "status": "completed",
        "id": "msg_pi_2_1",
    }
    assert items[5] == {"type": "function_call", "call_id": "toolu_01", "name": "read", "arguments": '{"path":"a.txt"}'}
    assert items[6]["call_id"] == "toolu_01"
    assert "prompt_cache_key" not in body_ and "include" not in body_
    assert body_["reasoning"] == {"effort": "none"}
    assert not any(item.get("role") == "developer" and "Juice" in str(item) for item in items)
