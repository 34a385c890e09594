# ruff: noqa: E501  (literal vectors)
"""Chat Completions request bodies, stream vectors, and HTTP errors and retries,
through the real decoder and a fake in-memory transport that re-splits every byte stream.

Deviations pinned here (see the report): usage ``output`` is ``completion_tokens`` alone (pi 0.79.10
and decision OQ1: reasoning tokens are already counted there, unless a model's compat flag
``reasoningTokensIncludedInCompletion`` is false); stop-reason errors read ``Provider finish_reason: <x>``
(0.79.10); no ``max_completion_tokens`` when no cap is given (0.79.10).
"""

from __future__ import annotations

from provider_helpers import (
    ANT_SRC,
    CH,
    DONE,
    HI,
    IMG,
    READ,
    SPLITS,
    Reply,
    U,
    connection_refused,
    content_json,
    cost_ok,
    f_chat,
    f_chatr,
    f_ds,
    f_or,
    request_of,
    rich_context,
    run_stream,
    src_of,
    sse,
    usage_tuple,
)

from py_agent.ai.overflow import is_context_overflow

C1 = [
    CH({"role": "assistant", "content": ""}, None),
    CH({"content": "Hel"}, None),
    CH({"content": "lo"}, None),
    CH({}, "stop"),
    U(10, 2),
    DONE,
]


async def test_c1_basic_text() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=C1)], split=split)
        assert events == [
            "start",
            "text_start 0",
            'text_delta 0 "Hel"',
            'text_delta 0 "lo"',
            'text_end 0 "Hello"',
            "done stop",
        ]
        assert content_json(final) == [{"type": "text", "text": "Hello"}]
        assert usage_tuple(final) == (10, 2, 0, 0, 12)
        assert cost_ok(final, 1e-5, 4e-6, 0, 0, 1.4e-5)
        assert final.stop_reason == "stop" and final.error_message is None


async def test_c2_crlf_comment_utf8_split() -> None:
    body = (
        ": OPENROUTER PROCESSING\r\n\r\n"
        'data: {"choices":[{"index":0,"delta":{"content":"héllo 🙈"},"finish_reason":null}]}\r\n\r\n'
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n'
        "data: [DONE]\r\n\r\n"
    ).encode()
    first = body.index(b"\xc3") + 1
    second = body.index(b"\xf0\x9f") + 2
    chunks = [body[:first], body[first:second], body[second:]]
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=chunks)], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "héllo 🙈"', 'text_end 0 "héllo 🙈"', "done stop"] or (
            split != "whole" and events[-2:] == ['text_end 0 "héllo 🙈"', "done stop"]
        )
        assert content_json(final) == [{"type": "text", "text": "héllo 🙈"}]
        assert usage_tuple(final) == (0, 0, 0, 0, 0)


C3 = [
    CH(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"index": 0, "id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
            ],
        },
        None,
    ),
    CH({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}, None),
    CH({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}, None),
    CH(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_B",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"tz":"CET"}'},
                }
            ]
        },
        None,
    ),
    CH({}, "tool_calls"),
    U(20, 10),
    DONE,
]


async def test_c3_parallel_tool_calls() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=C3)], split=split)
        assert events == [
            "start",
            "toolcall_start 0",
            'toolcall_delta 0 "" -> {}',
            'toolcall_delta 0 "{\\"city\\":" -> {}',
            'toolcall_delta 0 "\\"Paris\\"}" -> {"city": "Paris"}',
            'toolcall_end 0 call_A get_weather {"city": "Paris"}',
            "toolcall_start 1",
            'toolcall_delta 1 "{\\"tz\\":\\"CET\\"}" -> {"tz": "CET"}',
            'toolcall_end 1 call_B get_time {"tz": "CET"}',
            "done toolUse",
        ]
        assert content_json(final) == [
            {"type": "toolCall", "id": "call_A", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "toolCall", "id": "call_B", "name": "get_time", "arguments": {"tz": "CET"}},
        ]
        assert usage_tuple(final) == (20, 10, 0, 0, 30)
        assert cost_ok(final, 2e-5, 2e-5, 0, 0, 4e-5)
        assert final.stop_reason == "toolUse"


C4 = [
    CH({"role": "assistant", "reasoning_content": "Think"}, None),
    CH({"reasoning_content": "ing."}, None),
    CH({"content": "Answer"}, None),
    CH({}, "stop"),
    U(5, 7, 0, 3),
    DONE,
]


async def test_c4_reasoning_content() -> None:
    events, final, _ = await run_stream(f_ds(), [Reply(chunks=C4)], split="bytes")
    assert events == [
        "start",
        "thinking_start 0",
        'thinking_delta 0 "Think"',
        'thinking_delta 0 "ing."',
        'thinking_end 0 "Thinking."',
        "text_start 1",
        'text_delta 1 "Answer"',
        'text_end 1 "Answer"',
        "done stop",
    ]
    assert content_json(final) == [
        {"type": "thinking", "thinking": "Thinking.", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Answer"},
    ]
    # completion_tokens already include reasoning tokens (pi 0.79.10, OQ1): output 7, not 7 + 3.
    assert usage_tuple(final) == (5, 7, 0, 0, 12)
    assert cost_ok(final, 5e-6, 1.4e-5, 0, 0, 1.9e-5)


async def test_c4_reasoning_tokens_counted_when_excluded() -> None:
    model = f_ds().model_copy(update={"compat": {"reasoningTokensIncludedInCompletion": False}})
    _, final, _ = await run_stream(model, [Reply(chunks=C4)])
    assert usage_tuple(final) == (5, 10, 0, 0, 15)
    assert cost_ok(final, 5e-6, 2e-5, 0, 0, 2.5e-5)


async def test_c5_mid_stream_provider_error() -> None:
    error_chunk = sse(
        {
            "error": {"code": 502, "message": "Provider returned error", "metadata": {"raw": "upstream timeout"}},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
        }
    )
    for split in SPLITS:
        events, final, _ = await run_stream(
            f_or(), [Reply(chunks=[CH({"content": "Par"}, None), error_chunk])], split=split
        )
        assert events == ["start", "text_start 0", 'text_delta 0 "Par"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "Par"}]
        assert final.stop_reason == "error"
        assert final.error_message == "Provider returned error\nupstream timeout"
        assert usage_tuple(final) == (0, 0, 0, 0, 0)


async def test_c6_length() -> None:
    events, final, _ = await run_stream(
        f_chat(), [Reply(chunks=[CH({"content": "abc"}, None), CH({}, "length"), U(3, 1), DONE])]
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "abc"', 'text_end 0 "abc"', "done length"]
    assert usage_tuple(final) == (3, 1, 0, 0, 4)
    assert cost_ok(final, 3e-6, 2e-6, 0, 0, 5e-6)


async def test_c7_incomplete_tool_arguments() -> None:
    chunks = [
        CH(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_X",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1, "b": tru'},
                    }
                ]
            },
            None,
        ),
        CH({"tool_calls": [{"index": 0, "function": {"arguments": 'e, "c": [1,2'}}]}, None),
        CH({}, "tool_calls"),
        DONE,
    ]
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=chunks)], split=split)
        assert events == [
            "start",
            "toolcall_start 0",
            'toolcall_delta 0 "{\\"a\\": 1, \\"b\\": tru" -> {"a": 1, "b": true}',
            'toolcall_delta 0 "e, \\"c\\": [1,2" -> {"a": 1, "b": true, "c": [1, 2]}',
            'toolcall_end 0 call_X f {"a": 1, "b": true, "c": [1, 2]}',
            "done toolUse",
        ]
        assert final.stop_reason == "toolUse"


async def test_c8_garbage_tool_arguments() -> None:
    chunks = [
        CH(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_X", "type": "function", "function": {"name": "f", "arguments": "not json"}}
                ]
            },
            None,
        ),
        CH({}, "tool_calls"),
        DONE,
    ]
    events, final, _ = await run_stream(f_chat(), [Reply(chunks=chunks)])
    assert events == [
        "start",
        "toolcall_start 0",
        'toolcall_delta 0 "not json" -> {}',
        "toolcall_end 0 call_X f {}",
        "done toolUse",
    ]
    assert content_json(final) == [{"type": "toolCall", "id": "call_X", "name": "f", "arguments": {}}]


async def test_c9_truncated_stream() -> None:
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=[CH({"content": "Hello wor"}, None)])], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "Hello wor"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "Hello wor"}]
        assert final.error_message == "Stream ended unexpectedly: no finish_reason received"


async def test_c10_truncated_inside_an_event() -> None:
    chunks = [CH({"content": "Hello"}, None), 'data: {"choices":[{"index":0,"delta":{"content":" wor']
    for split in SPLITS:
        events, final, _ = await run_stream(f_chat(), [Reply(chunks=chunks)], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "Hello"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "Hello"}]
        assert final.error_message == "Stream ended unexpectedly: no finish_reason received"


async def test_c11_invalid_json() -> None:
    events, final, _ = await run_stream(
        f_chat(), [Reply(chunks=[CH({"content": "Hi"}, None), "data: {not json}\n\n", DONE])]
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "Hi"', "error error"]
    assert final.error_message == "Invalid JSON in SSE data: {not json}"
    assert content_json(final) == [{"type": "text", "text": "Hi"}]


async def test_c12_content_filter() -> None:
    events, final, _ = await run_stream(
        f_chat(), [Reply(chunks=[CH({"content": "I"}, None), CH({}, "content_filter"), DONE])]
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "I"', 'text_end 0 "I"', "error error"]
    assert final.stop_reason == "error"
    assert final.error_message == "Provider finish_reason: content_filter"


async def test_c13_cached_and_reasoning_usage() -> None:
    _, final, _ = await run_stream(
        f_chat(), [Reply(chunks=[CH({"content": "ok"}, None), CH({}, "stop"), U(1000, 200, 600, 50), DONE])]
    )
    assert usage_tuple(final) == (400, 200, 600, 0, 1200)
    assert cost_ok(final, 4e-4, 4e-4, 3e-4, 0, 1.1e-3)
    assert final.stop_reason == "stop"


async def test_c14_usage_inside_the_choice() -> None:
    moonshot = sse(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {},
                    "finish_reason": "stop",
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                }
            ]
        }
    )
    _, final, _ = await run_stream(f_chat(), [Reply(chunks=[CH({"content": "ok"}, None), moonshot, DONE])])
    assert usage_tuple(final) == (7, 3, 0, 0, 10)
    assert cost_ok(final, 7e-6, 6e-6, 0, 0, 1.3e-5)


async def test_c15_unknown_finish_reason() -> None:
    events, final, _ = await run_stream(f_chat(), [Reply(chunks=[CH({"content": "ok"}, None), CH({}, "eos"), DONE])])
    assert events == ["start", "text_start 0", 'text_delta 0 "ok"', 'text_end 0 "ok"', "error error"]
    assert final.error_message == "Provider finish_reason: eos"
    assert content_json(final) == [{"type": "text", "text": "ok"}]


async def test_c16_finish_reason_end() -> None:
    events, _, _ = await run_stream(f_chat(), [Reply(chunks=[CH({"content": "ok"}, None), CH({}, "end"), DONE])])
    assert events == ["start", "text_start 0", 'text_delta 0 "ok"', 'text_end 0 "ok"', "done stop"]


async def test_c17_multiline_data_and_events_after_done() -> None:
    chunks = [
        'data:{"choices":[{"index":0,\n',
        'data: "delta":{"content":"A"},"finish_reason":null}]}\n\n',
        CH({}, "stop"),
        "data: [DONE]\n\n",
        CH({"content": "IGNORED"}, None),
    ]
    for split in SPLITS:
        events, _final, transport = await run_stream(f_chat(), [Reply(chunks=chunks)], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "A"', 'text_end 0 "A"', "done stop"]
        assert transport.responses[0].closed  # reading stopped at [DONE] and the body was cancelled


async def test_c18_empty_data_line() -> None:
    events, _, _ = await run_stream(
        f_chat(), [Reply(chunks=["data: \n\n", CH({"content": "A"}, None), CH({}, "stop"), DONE])]
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "A"', 'text_end 0 "A"', "done stop"]


async def test_c19_text_then_tool_call() -> None:
    chunks = [
        CH({"content": "Checking."}, None),
        CH(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ]
            },
            None,
        ),
        CH({}, "tool_calls"),
        DONE,
    ]
    events, _, _ = await run_stream(f_chat(), [Reply(chunks=chunks)])
    assert events == [
        "start",
        "text_start 0",
        'text_delta 0 "Checking."',
        'text_end 0 "Checking."',
        "toolcall_start 1",
        'toolcall_delta 1 "{}" -> {}',
        "toolcall_end 1 call_1 f {}",
        "done toolUse",
    ]


async def test_c20_named_error_event() -> None:
    body = 'event: error\ndata: {"error":{"message":"boom","type":"server_error"}}\n\n'
    events, final, _ = await run_stream(f_chat(), [Reply(chunks=[body])])
    assert events == ["start", "error error"]
    assert content_json(final) == [] and final.error_message == "boom"


async def test_c21_abort_mid_stream() -> None:
    chunks = [CH({"content": "Hel"}, None), CH({"content": "lo"}, None), CH({}, "stop"), DONE]
    events, final, transport = await run_stream(f_chat(), [Reply(chunks=chunks, delay=0.03)], abort_after="text_delta")
    assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error aborted"]
    assert content_json(final) == [{"type": "text", "text": "Hel"}]
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert transport.responses[0].closed


async def test_c22_signal_already_aborted() -> None:
    from py_agent.ai import AbortSignal

    events, final, transport = await run_stream(f_chat(), [Reply(chunks=C1)], signal=AbortSignal.aborted_signal())
    assert events == ["error aborted"]
    assert transport.requests == []
    assert content_json(final) == [] and final.error_message == "Request was aborted"


# ---------------------------------------------------------------------------------------------
# HTTP errors and retries

JSON = {"content-type": "application/json"}


def _err(status: int, body: str, **headers: str) -> Reply:
    return Reply(status=status, headers={**JSON, **headers}, chunks=[body] if body else [])


async def _http(model, replies, n_requests: int, message: str, **options) -> None:  # type: ignore[no-untyped-def]
    events, final, transport = await run_stream(model, replies, **options)
    assert events == ["error error"], events
    assert len(transport.requests) == n_requests
    assert content_json(final) == [] and usage_tuple(final) == (0, 0, 0, 0, 0)
    assert final.stop_reason == "error"
    assert final.error_message == message


async def test_h1_401() -> None:
    body = '{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}'
    await _http(
        f_chat(),
        [_err(401, body)],
        1,
        "401 Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.",
    )


H2_BODY = '{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","param":null,"code":"rate_limit_exceeded"}}'


async def test_h2_429_retried_then_fails() -> None:
    await _http(f_chat(), [_err(429, H2_BODY, **{"retry-after": "0.01"})], 3, "429 Rate limit reached for gpt-4o-mini")


async def test_h3_500_should_not_retry() -> None:
    reply = Reply(
        status=500, headers={"content-type": "text/plain", "x-should-retry": "false"}, chunks=["Internal Server Error"]
    )
    await _http(f_chat(), [reply], 1, "500 Internal Server Error")


async def test_h4_vllm_top_level_message() -> None:
    body = '{"object":"error","message":"This model\'s maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}'
    await _http(f_chat(), [_err(400, body)], 1, "400 This model's maximum context length is 4096 tokens.")


async def test_h5_lm_studio_string_error() -> None:
    await _http(f_chat(), [_err(400, '{"error":"Model not loaded"}')], 1, "400 Model not loaded")


async def test_h6_413_no_body() -> None:
    await _http(f_chat(), [_err(413, "")], 1, "413 status code (no body)")
    _, final, _ = await run_stream(f_chat(), [_err(413, "")])
    assert is_context_overflow(final)


async def test_h7_connection_error_retried() -> None:
    await _http(f_chat(), [connection_refused()], 3, "Connection error: Failed to fetch", max_retries=2)


async def test_h8_insufficient_quota_not_retried() -> None:
    from provider_helpers import f_resp

    body = '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}'
    await _http(
        f_resp(),
        [_err(429, body)],
        1,
        "OpenAI API error (429): You exceeded your current quota, please check your plan and billing details.",
    )


async def test_h9_503_then_success() -> None:
    ok = Reply(chunks=['data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n', DONE])
    events, _final, transport = await run_stream(f_chat(), [_err(503, "overloaded", **{"retry-after-ms": "5"}), ok])
    assert len(transport.requests) == 2
    assert events == ["start", "text_start 0", 'text_delta 0 "ok"', 'text_end 0 "ok"', "done stop"]


async def test_h10_server_delay_over_the_cap() -> None:
    await _http(
        f_chat(),
        [_err(429, H2_BODY, **{"retry-after": "30"})],
        1,
        "Server requested 30s retry delay (max: 1s). Rate limit reached for gpt-4o-mini",
        max_retry_delay_ms=1000,
    )


async def test_missing_key_is_a_stream_error() -> None:
    events, final, transport = await run_stream(f_chat(), [Reply(chunks=C1)], api_key=None)
    assert events == ["error error"] and transport.requests == []
    assert final.error_message == "No API key for provider: openai"


async def test_keyless_model_sends_no_authorization() -> None:
    model = f_chat().model_copy(update={"provider": "ollama", "base_url": "http://localhost:11434/v1"})
    model = model.model_validate({**model.model_dump(), "requiresApiKey": False})
    events, _, transport = await run_stream(model, [Reply(chunks=C1)], api_key=None)
    assert events[-1] == "done stop"
    assert "authorization" not in {k.lower() for k in transport.requests[0].headers}


# ---------------------------------------------------------------------------------------------
# Request bodies


async def test_q1_chat_same_model() -> None:
    model = f_chat()
    request, body = await request_of(model, rich_context(src_of(model), "reasoning_content", "call_1"))
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer KEY"
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": IMG}},
                ],
            },
            {
                "role": "assistant",
                "content": "A dot.",
                "reasoning_content": "Let me look.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a.txt"}'}}
                ],
            },
            {"role": "tool", "content": "file body", "tool_call_id": "call_1"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Attached image(s) from tool result:"},
                    {"type": "image_url", "image_url": {"url": IMG}},
                ],
            },
            {"role": "user", "content": "thanks"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
        "tools": [
            {
                "type": "function",
                "function": {"name": "read", "description": "Read a file", "parameters": READ, "strict": False},
            }
        ],
    }
    assert list(body) == ["model", "messages", "stream", "stream_options", "store", "tools"]


async def test_q1_with_max_tokens() -> None:
    model = f_chat()
    _, body = await request_of(model, rich_context(src_of(model), None, "call_1"), max_tokens=16384)
    assert body["max_completion_tokens"] == 16384


async def test_q2_chat_replay_from_anthropic() -> None:
    _, body = await request_of(f_chat(), rich_context(ANT_SRC, "EqQBsig", "toolu_01|weird+id"))
    assert body["messages"][3] == {
        "role": "assistant",
        "content": "Let me look.A dot.",
        "tool_calls": [
            {"id": "toolu_01", "type": "function", "function": {"name": "read", "arguments": '{"path":"a.txt"}'}}
        ],
    }
    assert body["messages"][4] == {"role": "tool", "content": "file body", "tool_call_id": "toolu_01"}


async def test_q3_chat_reasoning_model() -> None:
    model = f_chatr()
    _, body = await request_of(model, rich_context(src_of(model), None, "call_1"), reasoning="high", temperature=0.5)
    assert body["messages"][0] == {"role": "developer", "content": "You are terse."}
    assert "reasoning_content" not in body["messages"][3]
    assert body["temperature"] == 0.5 and body["reasoning_effort"] == "high"
    assert list(body)[-3:] == ["temperature", "tools", "reasoning_effort"]


async def test_q4_openrouter_anthropic_caching() -> None:
    ctx = {"systemPrompt": "S", "messages": [{"role": "user", "content": "hello", "timestamp": 1}]}
    _, body = await request_of(f_or("anthropic/claude-sonnet-4"), ctx)
    assert body == {
        "model": "anthropic/claude-sonnet-4",
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
    }


async def test_q5_deepseek_compat() -> None:
    ctx = {"systemPrompt": "S", "messages": [{"role": "user", "content": "hello", "timestamp": 1}]}
    request, body = await request_of(f_ds(), ctx, reasoning="medium")
    assert request.url == "https://api.deepseek.com/chat/completions"
    assert body == {
        "model": "deepseek-reasoner",
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "reasoning_effort": "medium",
    }


async def test_tools_empty_list_when_history_has_tool_calls() -> None:
    model = f_chat()
    ctx = rich_context(src_of(model), None, "call_1")
    del ctx["tools"]
    _, body = await request_of(model, ctx)
    assert body["tools"] == []


async def test_lone_surrogates_are_removed() -> None:
    ctx = {"messages": [{"role": "user", "content": "a\ud83db", "timestamp": 1}]}
    _, body = await request_of(f_chat(), ctx)
    assert body["messages"][0]["content"] == "ab"


async def test_on_payload_replaces_body_and_on_response_sees_status() -> None:
    seen = []

    async def on_payload(payload, model):  # type: ignore[no-untyped-def]
        return {**payload, "extra": 1}

    def on_response(response, model):  # type: ignore[no-untyped-def]
        seen.append(response.status)

    events, _, transport = await run_stream(
        f_chat(), [Reply(chunks=C1)], on_payload=on_payload, on_response=on_response
    )
    assert transport.body()["extra"] == 1 and seen == [200] and events[-1] == "done stop"


async def test_idle_timeout() -> None:
    reply = Reply(chunks=[CH({"content": "Hel"}, None)], hang=True)
    events, final, transport = await run_stream(f_chat(), [reply], idle_timeout_ms=100)
    assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error error"]
    assert final.error_message == "Stream stalled: no data for 0.1s"
    assert transport.responses[0].closed


async def test_header_precedence() -> None:
    model = f_chat().model_copy(update={"headers": {"X-Model": "m", "Accept": "application/json"}})
    request, _ = await request_of(model, HI, headers={"x-model": "o"})
    lowered = {k.lower(): v for k, v in request.headers.items()}
    assert lowered == {
        "content-type": "application/json",
        "accept": "application/json",
        "authorization": "Bearer KEY",
        "x-model": "o",
    }


async def test_abort_during_retry_backoff() -> None:
    import asyncio
    import time

    from py_agent.ai import AbortController

    controller = AbortController()
    asyncio.get_running_loop().call_later(0.1, controller.abort)
    start = time.monotonic()
    events, final, transport = await run_stream(
        f_chat(), [_err(429, H2_BODY, **{"retry-after": "20"})], signal=controller.signal
    )
    assert time.monotonic() - start < 5
    assert events == ["error aborted"] and len(transport.requests) == 1
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"


async def test_on_response_error_is_a_stream_error() -> None:
    def on_response(response, model):  # type: ignore[no-untyped-def]
        raise RuntimeError("hook failed")

    events, final, _ = await run_stream(f_chat(), [Reply(chunks=C1)], on_response=on_response)
    assert events == ["error error"] and final.error_message == "hook failed"
