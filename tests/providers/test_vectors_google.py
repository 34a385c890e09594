# ruff: noqa: E501  (literal vectors)
"""Gemini stream vectors and request bodies (no ``maxOutputTokens``
without a cap, pi 0.79.10)."""

from __future__ import annotations

import json
import re
from typing import Any

from provider_helpers import (
    ANT_SRC,
    READ,
    SPLITS,
    Reply,
    content_json,
    cost_ok,
    f_gem,
    f_gem3,
    request_of,
    rich_context,
    run_stream,
    src_of,
    usage_tuple,
)


def D(obj: dict[str, Any], eol: str = "\r\n") -> str:
    return "data: " + json.dumps(obj, separators=(",", ":")) + eol + eol


def C(
    parts: list[dict[str, Any]], fr: str | None = None, um: tuple[int, int, int, int] | None = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    if fr:
        candidate["finishReason"] = fr
    candidate["index"] = 0
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}
    if um:
        p, c, t, k = um
        meta = {
            "promptTokenCount": p,
            "candidatesTokenCount": c,
            "thoughtsTokenCount": t,
            "cachedContentTokenCount": k,
            "totalTokenCount": p + c + t,
        }
        out["usageMetadata"] = {key: v for key, v in meta.items() if v}
    return out


GEN_ID = re.compile(r"^[a-z_]+_\d{13}_\d+$")


async def test_g1_text() -> None:
    chunks = [D(C([{"text": "Hel"}])), D(C([{"text": "lo"}], "STOP", (8, 2, 0, 0)))]
    for split in SPLITS:
        events, final, transport = await run_stream(f_gem(), [Reply(chunks=chunks)], split=split)
        assert events == [
            "start",
            "text_start 0",
            'text_delta 0 "Hel"',
            'text_delta 0 "lo"',
            'text_end 0 "Hello"',
            "done stop",
        ]
        assert usage_tuple(final) == (8, 2, 0, 0, 10)
        assert cost_ok(final, 8e-6, 4e-6, 0, 0, 1.2e-5)
        assert transport.requests[0].url.endswith("/models/gemini-2.5-flash:streamGenerateContent?alt=sse")


async def test_g2_thought_signed_text_function_call_cached_usage() -> None:
    chunks = [
        D(C([{"text": "Let me check.", "thought": True}])),
        D(C([{"text": "Checking", "thoughtSignature": "c2lnMQ=="}])),
        D(C([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnMg=="}])),
        D(C([{"text": ""}], "STOP", (100, 20, 30, 60))),
    ]
    for split in SPLITS:
        events, final, _ = await run_stream(f_gem(), [Reply(chunks=chunks)], split=split)
        call_id = final.content[2].id
        assert GEN_ID.match(call_id), call_id
        assert events == [
            "start",
            "thinking_start 0",
            'thinking_delta 0 "Let me check."',
            'thinking_end 0 "Let me check."',
            "text_start 1",
            'text_delta 1 "Checking"',
            'text_end 1 "Checking"',
            "toolcall_start 2",
            'toolcall_delta 2 "{\\"city\\":\\"Paris\\"}" -> {"city": "Paris"}',
            f'toolcall_end 2 {call_id} get_weather {{"city": "Paris"}}',
            "done toolUse",
        ]
        assert content_json(final) == [
            {"type": "thinking", "thinking": "Let me check."},
            {"type": "text", "text": "Checking", "textSignature": "c2lnMQ=="},
            {
                "type": "toolCall",
                "id": call_id,
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "thoughtSignature": "c2lnMg==",
            },
        ]
        assert usage_tuple(final) == (40, 50, 60, 0, 150)
        assert cost_ok(final, 4e-5, 1e-4, 3e-5, 0, 1.7e-4)


async def test_g3_function_call_without_id_and_args() -> None:
    events, final, _ = await run_stream(
        f_gem(), [Reply(chunks=[D(C([{"functionCall": {"name": "now"}}], "STOP", (5, 1, 0, 0)))])]
    )
    call_id = final.content[0].id
    assert GEN_ID.match(call_id)
    assert events == [
        "start",
        "toolcall_start 0",
        'toolcall_delta 0 "{}" -> {}',
        f"toolcall_end 0 {call_id} now {{}}",
        "done toolUse",
    ]


async def test_g4_max_tokens() -> None:
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(C([{"text": "abc"}], "MAX_TOKENS", (3, 1, 0, 0)))])])
    assert events == ["start", "text_start 0", 'text_delta 0 "abc"', 'text_end 0 "abc"', "done length"]
    assert usage_tuple(final) == (3, 1, 0, 0, 4)


async def test_g5_safety() -> None:
    last = {
        "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": []}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
    }
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(C([{"text": "x"}])), D(last)])])
    assert events == ["start", "text_start 0", 'text_delta 0 "x"', 'text_end 0 "x"', "error error"]
    assert usage_tuple(final) == (3, 1, 0, 0, 4)
    assert final.error_message == "Provider stop reason: SAFETY"


async def test_g6_http_400_bad_key() -> None:
    body = (
        '{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}'
    )
    reply = Reply(status=400, headers={"content-type": "application/json; charset=UTF-8"}, chunks=[body])
    events, final, _ = await run_stream(f_gem(), [reply])
    assert events == ["error error"] and final.error_message == body


async def test_g7_retry_info_over_the_cap() -> None:
    body = (
        '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",'
        '"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}'
    )
    reply = Reply(status=429, headers={"content-type": "application/json"}, chunks=[body])
    events, final, transport = await run_stream(f_gem(), [reply], max_retry_delay_ms=1000)
    assert events == ["error error"] and len(transport.requests) == 1
    assert (
        final.error_message
        == "Server requested 34s retry delay (max: 1s). Resource has been exhausted (e.g. check quota)."
    )


async def test_g8_error_object_in_stream() -> None:
    error = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(C([{"text": "Hi"}])), D(error)])])
    assert events == ["start", "text_start 0", 'text_delta 0 "Hi"', "error error"]
    assert final.error_message == '{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}'


async def test_g9_lf_last_event_unterminated() -> None:
    chunks = ["data: " + json.dumps(C([{"text": "A"}])) + "\n\n", "data: " + json.dumps(C([{"text": "B"}], "STOP"))]
    for split in SPLITS:
        events, final, _ = await run_stream(f_gem(), [Reply(chunks=chunks)], split=split)
        assert events == ["start", "text_start 0", 'text_delta 0 "A"', "error error"]
        assert content_json(final) == [{"type": "text", "text": "A"}]
        assert final.error_message == "Stream ended unexpectedly: no finishReason received"


async def test_g10_prompt_blocked() -> None:
    chunk = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 0, "totalTokenCount": 10},
    }
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(chunk)])])
    assert events == ["start", "error error"] and content_json(final) == []
    assert final.usage.input == 10
    assert final.error_message == "Prompt blocked: PROHIBITED_CONTENT"


async def test_g11_http_500_text() -> None:
    reply = Reply(
        status=500,
        headers={"content-type": "text/plain", "x-should-retry": "false"},
        chunks=["Internal Server Error"],
        status_text="Internal Server Error",
    )
    _, final, _ = await run_stream(f_gem(), [reply])
    assert (
        final.error_message
        == '{"error":{"message":"Internal Server Error","code":500,"status":"Internal Server Error"}}'
    )


async def test_g12_duplicate_function_call_ids() -> None:
    chunk = C(
        [
            {"functionCall": {"id": "c1", "name": "a", "args": {}}},
            {"functionCall": {"id": "c1", "name": "b", "args": {}}},
        ],
        "STOP",
        (5, 1, 0, 0),
    )
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(chunk)])])
    second = final.content[1].id
    assert second != "c1" and second.startswith("b_")
    assert events == [
        "start",
        "toolcall_start 0",
        'toolcall_delta 0 "{}" -> {}',
        "toolcall_end 0 c1 a {}",
        "toolcall_start 1",
        'toolcall_delta 1 "{}" -> {}',
        f"toolcall_end 1 {second} b {{}}",
        "done toolUse",
    ]


async def test_g13_invalid_json() -> None:
    events, final, _ = await run_stream(f_gem(), [Reply(chunks=[D(C([{"text": "A"}])), "data: {bad\r\n\r\n"])])
    assert events == ["start", "text_start 0", 'text_delta 0 "A"', "error error"]
    assert final.error_message == "Invalid JSON in SSE data: {bad"


async def test_g14_comment_keepalive() -> None:
    events, _, _ = await run_stream(
        f_gem(), [Reply(chunks=[": keepalive\n\n", D(C([{"text": "A"}], "STOP", (1, 1, 0, 0)))])]
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "A"', 'text_end 0 "A"', "done stop"]


async def test_g15_abort_mid_stream() -> None:
    chunks = [D(C([{"text": "Hel"}])), D(C([{"text": "lo"}]))]
    events, final, transport = await run_stream(
        f_gem(), [Reply(chunks=chunks, delay=0.03, hang=True)], abort_after="text_delta"
    )
    assert events == ["start", "text_start 0", 'text_delta 0 "Hel"', "error aborted"]
    assert final.error_message == "Request was aborted" and content_json(final) == [{"type": "text", "text": "Hel"}]
    assert transport.responses[0].closed


# ---------------------------------------------------------------------------------------------
# Requests


async def test_q11_gemini_25_same_model() -> None:
    model = f_gem()
    request, body = await request_of(model, rich_context(src_of(model), "c2lnbmF0dXJl", "read_1"), reasoning="medium")
    assert (
        request.url
        == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers == {"content-type": "application/json", "x-goog-api-key": "KEY"}
    inline = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "user", "parts": [{"text": "what is this?"}, inline]},
            {
                "role": "model",
                "parts": [
                    {"thought": True, "text": "Let me look.", "thoughtSignature": "c2lnbmF0dXJl"},
                    {"text": "A dot."},
                    {"functionCall": {"name": "read", "args": {"path": "a.txt"}}},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "file body"}}}]},
            {"role": "user", "parts": [{"text": "Tool result image:"}, inline]},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ],
        "systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
        "tools": [
            {"functionDeclarations": [{"name": "read", "description": "Read a file", "parametersJsonSchema": READ}]}
        ],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192}},
    }


async def test_q11_with_a_cap() -> None:
    model = f_gem()
    _, body = await request_of(model, rich_context(src_of(model), None, "read_1"), reasoning="medium", max_tokens=32000)
    assert body["generationConfig"] == {
        "maxOutputTokens": 32000,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }


async def test_q12_gemini_3_replay_from_anthropic() -> None:
    _, body = await request_of(f_gem3(), rich_context(ANT_SRC, "EqQBsig", "toolu_01"), reasoning="minimal")
    contents = body["contents"]
    assert contents[2] == {
        "role": "model",
        "parts": [
            {"text": "Let me look."},
            {"text": "A dot."},
            {
                "functionCall": {"name": "read", "args": {"path": "a.txt"}},
                "thoughtSignature": "skip_thought_signature_validator",
            },
        ],
    }
    assert contents[3] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "read",
                    "response": {"output": "file body"},
                    "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}],
                }
            }
        ],
    }
    assert contents[4] == {"role": "user", "parts": [{"text": "thanks"}]}
    assert body["generationConfig"] == {"thinkingConfig": {"includeThoughts": True, "thinkingLevel": "LOW"}}


async def test_key_is_not_in_the_url() -> None:
    request, _ = await request_of(
        f_gem(), {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}, api_key="SECRET"
    )
    assert "SECRET" not in request.url
