"""Pure vectors: the SSE decoder split anywhere, parseStreamingJson, transformMessages and the
small helpers."""

from __future__ import annotations

import random
from typing import Any

from py_agent.ai.partial_json import parse_streaming_json
from py_agent.ai.providers import sanitize_surrogates, short_hash
from py_agent.ai.sse import SSEDecoder, SSEEvent
from py_agent.ai.transform import transform_messages
from py_agent.ai.types import Model


def decode(chunks: list[bytes]) -> list[tuple[str | None, str]]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.flush())
    return [(e.event, e.data) for e in events]


def all_splits(data: bytes) -> list[list[bytes]]:
    """Every single cut, every byte, and a few random multi-cuts."""
    out = [[data], [data[i : i + 1] for i in range(len(data))]]
    out.extend([[data[:i], data[i:]] for i in range(1, len(data))])
    rng = random.Random(7)
    for _ in range(30):
        cuts = sorted(rng.sample(range(1, len(data)), min(5, len(data) - 1)))
        pieces, last = [], 0
        for cut in cuts:
            pieces.append(data[last:cut])
            last = cut
        pieces.append(data[last:])
        out.append(pieces)
    return out


SAMPLE = (
    "\ufeff: comment\r\n\r\n"
    "event: greet\r\ndata: héllo 🙈\r\n\r\n"
    "data: line1\ndata:line2\n\n"
    "data\n\n"
    "id: 7\rdata: cr only\r\r"
    "retry: 10\nfoo: bar\ndata: last\n\n"
    "data: dropped at EOF"
).encode()

EXPECTED = [("greet", "héllo 🙈"), (None, "line1\nline2"), (None, ""), (None, "cr only"), (None, "last")]


def test_sse_split_anywhere() -> None:
    for chunks in all_splits(SAMPLE):
        assert decode(chunks) == EXPECTED, chunks


def test_sse_crlf_split_between_cr_and_lf() -> None:
    assert decode([b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]) == [(None, "a"), (None, "b")]


def test_sse_empty_data_dispatches_and_blank_lines_alone_do_not() -> None:
    assert decode([b"\n\n\ndata:\n\n"]) == [(None, "")]


def test_sse_event_without_data_is_not_dispatched() -> None:
    assert decode([b"event: ping\n\n", b"data: x\n\n"]) == [(None, "x")]


def test_sse_invalid_utf8_is_replaced() -> None:
    assert decode([b"data: \xff\n\n"]) == [(None, "\ufffd")]


def test_sse_feed_returns_only_completed_events() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: 1\n") == []
    assert [e.data for e in decoder.feed(b"\ndata: 2")] == ["1"]
    assert decoder.flush() == []


async def test_aiter_sse() -> None:
    from py_agent.ai.sse import aiter_sse

    async def source():  # type: ignore[no-untyped-def]
        for byte in b"data: a\n\ndata: b\n\n":
            yield bytes([byte])

    assert [e.data async for e in aiter_sse(source())] == ["a", "b"]


# ---------------------------------------------------------------------------------------------
# parseStreamingJson

PARTIAL_JSON: list[tuple[str, Any]] = [
    ("", {}),
    ("   ", {}),
    ("{", {}),
    ('{"', {}),
    ('{"a', {}),
    ('{"a"', {}),
    ('{"a":', {}),
    ('{"a": ', {}),
    ('{"a":"', {"a": ""}),
    ('{"a":"hel', {"a": "hel"}),
    ('{"a":"hello"', {"a": "hello"}),
    ('{"a":"hello",', {"a": "hello"}),
    ('{"a":"hello","b', {"a": "hello"}),
    ('{"a":"hello","b":1', {"a": "hello", "b": 1}),
    ('{"a":"x\\', {"a": "x"}),
    ('{"a":"x\\u00', {"a": "x"}),
    ('{"a":"x\\u00e9"}', {"a": "xé"}),
    ('{"a":[', {"a": []}),
    ('{"a":[1,', {"a": [1]}),
    ('{"a":[1,2', {"a": [1, 2]}),
    ('{"a":{"b":', {"a": {}}),
    ('{"a":tr', {"a": True}),
    ('{"a":fa', {"a": False}),
    ('{"a":nu', {"a": None}),
    ('{"a":-1', {"a": -1}),
    ('{"a":1e5', {"a": 100000}),
    ('{"a":1.5e-3}', {"a": 0.0015}),
    ('{"a":-', {}),
    ('{"a":0.', {}),
    ('{"a":1,}', {"a": 1}),
    ('{"a":true,"b":[{"c":"d"', {"a": True, "b": [{"c": "d"}]}),
    ('{"a":"\\"q', {"a": '"q'}),
    ('{"a":"line\\nbreak"}', {"a": "line\nbreak"}),
    ('{"a":1}}', {"a": 1}),
    ('{"a":1} garbage', {"a": 1}),
    ('{"cmd":"ls -la"}{"cmd":"pwd"}', {"cmd": "ls -la"}),
    ("not json", {}),
    ("{'a':1}", {}),
    ('{"a": 1 "b": 2}', {}),
    # non-objects become {} (tool arguments are always an object)
    ("[1,2", {}),
    ('"str', {}),
    ("42", {}),
    ("null", {}),
    ("true", {}),
    ('{"a":NaN}', {}),
    # pi 0.79.10's repair of raw control characters inside strings
    ('{"a":"x\ny"}', {"a": "x\ny"}),
]


def test_parse_streaming_json_vectors() -> None:
    for text, expected in PARTIAL_JSON:
        result = parse_streaming_json(text)
        assert isinstance(result, dict) and result == expected, (text, result)
    assert parse_streaming_json(None) == {}


def test_parse_streaming_json_every_prefix_is_a_dict() -> None:
    text = '{"path": "a/b.txt", "n": [1, 2.5, -3e2, {"deep": [true, false, null]}], "s": "esc \\" \\\\ \\u00e9 ok"}'
    for end in range(len(text) + 1):
        assert isinstance(parse_streaming_json(text[:end]), dict)
    assert parse_streaming_json(text)["s"] == 'esc " \\ é ok'


def test_parse_streaming_json_large_string_is_fast() -> None:
    import time

    big = '{"content": "' + "x" * 200_000
    start = time.perf_counter()
    for _ in range(20):
        assert len(parse_streaming_json(big)["content"]) == 200_000
    assert time.perf_counter() - start < 5


# ---------------------------------------------------------------------------------------------
# Small helpers


def test_short_hash_vectors() -> None:
    assert short_hash("") == "k4n83c7h0j2b"
    assert short_hash("a") == "m8735310ae7sx"
    assert short_hash("call_abc|fc_123") == "jp01dsxufnom"
    assert short_hash("é🙈") == "5q56rm1x795kj"


def test_sanitize_surrogates() -> None:
    assert sanitize_surrogates("Hello 🙈 World") == "Hello 🙈 World"
    assert sanitize_surrogates("Text \ud83d here") == "Text  here"
    assert sanitize_surrogates("\udc00x") == "x"


# ---------------------------------------------------------------------------------------------
# transformMessages (target F-ANT, Anthropic normaliser)

F_ANT = Model.model_validate(
    {
        "id": "claude-sonnet-4-5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": "https://api.anthropic.com",
        "reasoning": True,
        "input": ["text", "image"],
    }
)
F_RESP = Model.model_validate(
    {
        "id": "gpt-5-mini",
        "api": "openai-responses",
        "provider": "openai",
        "baseUrl": "https://api.openai.com/v1",
        "reasoning": True,
        "input": ["text", "image"],
    }
)
RESP = ("openai-responses", "openai", "gpt-5-mini")
ANT = ("anthropic-messages", "anthropic", "claude-sonnet-4-5")


def anthropic_normalize(id: str, *_: Any) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_-]", "_", id)[:64]


def U(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def A(src: tuple[str, str, str], stop: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    api, provider, model = src
    return {
        "role": "assistant",
        "api": api,
        "provider": provider,
        "model": model,
        "stopReason": stop,
        "content": blocks,
        "timestamp": 1,
    }


def TR(id: str, name: str = "f") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": id,
        "toolName": name,
        "content": [{"type": "text", "text": "r"}],
        "isError": False,
        "timestamp": 1,
    }


def call(id: str, name: str = "f") -> dict[str, Any]:
    return {"type": "toolCall", "id": id, "name": name, "arguments": {}}


def dump(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        data = message.model_dump()
        data.pop("timestamp", None)
        out.append(data)
    return out


def test_t1_cross_model_conversion() -> None:
    messages = [
        U("q"),
        A(
            RESP,
            "toolUse",
            [
                {"type": "thinking", "thinking": "deep", "thinkingSignature": "sig"},
                {
                    "type": "thinking",
                    "thinking": "[Reasoning redacted]",
                    "thinkingSignature": "opaque",
                    "redacted": True,
                },
                {"type": "thinking", "thinking": "   ", "thinkingSignature": '{"type":"reasoning"}'},
                {"type": "text", "text": "ans", "textSignature": '{"v":1,"id":"msg_1"}'},
                {**call("call_1|fc_+/xyz"), "thoughtSignature": "ts"},
            ],
        ),
        TR("call_1|fc_+/xyz"),
    ]
    result = dump(transform_messages(messages, F_ANT, anthropic_normalize))
    assert result[0]["content"] == "q"
    assert result[1]["content"] == [
        {"type": "text", "text": "deep"},
        {"type": "text", "text": "ans"},
        {"type": "toolCall", "id": "call_1_fc___xyz", "name": "f", "arguments": {}},
    ]
    assert result[2]["toolCallId"] == "call_1_fc___xyz"
    assert len(result) == 3


def test_t2_same_model_keeps_signatures() -> None:
    blocks = [
        {"type": "thinking", "thinking": "", "thinkingSignature": '{"type":"reasoning","id":"rs_1"}'},
        {"type": "thinking", "thinking": "", "thinkingSignature": ""},
        {"type": "thinking", "thinking": "x", "thinkingSignature": "opaque", "redacted": True},
        call("call_1|fc_1"),
    ]
    result = dump(transform_messages([U("q"), A(RESP, "toolUse", blocks)], F_RESP, lambda id, *_: id))
    assert result[1]["content"] == [blocks[0], blocks[2], blocks[3]]


def test_t3_orphaned_call_before_user() -> None:
    messages = [U("q"), A(ANT, "toolUse", [call("a"), call("b", "g")]), TR("a"), U("stop that")]
    result = dump(transform_messages(messages, F_ANT, anthropic_normalize))
    assert [m["role"] for m in result] == ["user", "assistant", "toolResult", "toolResult", "user"]
    assert result[3] == {
        "role": "toolResult",
        "toolCallId": "b",
        "toolName": "g",
        "content": [{"type": "text", "text": "No result provided"}],
        "isError": True,
    }


def test_t4_orphan_before_another_assistant() -> None:
    messages = [U("q"), A(ANT, "toolUse", [call("a")]), A(ANT, "stop", [{"type": "text", "text": "hm"}])]
    result = dump(transform_messages(messages, F_ANT, anthropic_normalize))
    assert [m["role"] for m in result] == ["user", "assistant", "toolResult", "assistant"]
    assert result[2]["toolCallId"] == "a" and result[2]["isError"] is True


def test_t5_orphan_at_the_end() -> None:
    messages = [U("q"), A(ANT, "toolUse", [call("a")])]
    assert [m["role"] for m in dump(transform_messages(messages, F_ANT, anthropic_normalize))] == ["user", "assistant"]


def test_t6_errored_and_aborted_turns_dropped() -> None:
    messages = [
        U("q"),
        A(ANT, "aborted", [{"type": "text", "text": "partial"}]),
        U("again"),
        A(ANT, "error", [call("z")]),
        TR("z"),
        U("and again"),
    ]
    result = dump(transform_messages(messages, F_ANT, anthropic_normalize))
    assert [(m["role"], m.get("content")) for m in result] == [("user", "q"), ("user", "again"), ("user", "and again")]


def test_t7_flush_before_the_errored_turn_is_dropped() -> None:
    messages = [U("q"), A(ANT, "toolUse", [call("a")]), A(ANT, "error", [{"type": "text", "text": "x"}]), U("u")]
    result = dump(transform_messages(messages, F_ANT, anthropic_normalize))
    assert [m["role"] for m in result] == ["user", "assistant", "toolResult", "user"]
    assert result[2]["toolCallId"] == "a"


def test_inputs_are_not_mutated() -> None:
    from py_agent.ai.types import to_message

    original = to_message(A(RESP, "toolUse", [call("call_1|fc_+/xyz")]))
    transform_messages([original], F_ANT, anthropic_normalize)
    assert original.content[0].id == "call_1|fc_+/xyz"
