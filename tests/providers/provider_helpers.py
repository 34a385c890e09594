"""Plain helpers for the provider vector tests (no pytest: these also run inside Pyodide).

``FakeTransport`` is an in-memory ``HttpTransport``: it answers each request with the next scripted
response, delivering the body as byte chunks re-split at chosen positions (every byte, random
cuts, or as given), and records every request and whether the body was closed early.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_agent.ai import AbortController, AbortError, AbortSignal, Model
from py_agent.ai.transport import HttpRequest, TransportError

# ---------------------------------------------------------------------------------------------
# Fixture models


def _model(
    id: str, api: str, provider: str, base_url: str, reasoning: bool, vision: bool = True, **extra: Any
) -> Model:
    data: dict[str, Any] = {
        "id": id,
        "name": extra.pop("name", id),
        "api": api,
        "provider": provider,
        "baseUrl": base_url,
        "reasoning": reasoning,
        "input": ["text", "image"] if vision else ["text"],
        "cost": extra.pop("cost", {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 4}),
        "contextWindow": 128000,
        "maxTokens": extra.pop("maxTokens", 16384),
    }
    data.update(extra)
    return Model.model_validate(data)


OPENAI = "https://api.openai.com/v1"
GOOGLE = "https://generativelanguage.googleapis.com/v1beta"


def f_chat() -> Model:
    return _model("gpt-4o-mini", "openai-completions", "openai", OPENAI, False)


def f_chatr() -> Model:
    return _model("o4-mini", "openai-completions", "openai", OPENAI, True, maxTokens=100000)


def f_or(id: str = "openai/gpt-4o") -> Model:
    return _model(id, "openai-completions", "openrouter", "https://openrouter.ai/api/v1", False)


def f_ds() -> Model:
    return _model(
        "deepseek-reasoner",
        "openai-completions",
        "deepseek",
        "https://api.deepseek.com",
        True,
        vision=False,
        maxTokens=64000,
    )


def f_resp(name: str = "GPT-5 Mini") -> Model:
    return _model("gpt-5-mini", "openai-responses", "openai", OPENAI, True, name=name, maxTokens=128000)


def f_ant() -> Model:
    return _model(
        "claude-sonnet-4-5",
        "anthropic-messages",
        "anthropic",
        "https://api.anthropic.com",
        True,
        cost={"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        maxTokens=64000,
    )


def f_ant46() -> Model:
    return _model(
        "claude-opus-4-6",
        "anthropic-messages",
        "anthropic",
        "https://api.anthropic.com",
        True,
        cost={"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25},
        maxTokens=128000,
        compat={"forceAdaptiveThinking": True},
        thinkingLevelMap={"xhigh": "max"},
    )


def f_gem() -> Model:
    return _model("gemini-2.5-flash", "google-generative-ai", "google", GOOGLE, True, maxTokens=65536)


def f_gem3() -> Model:
    return _model("gemini-3-pro-preview", "google-generative-ai", "google", GOOGLE, True, maxTokens=65536)


HI = {"messages": [{"role": "user", "content": "Hi", "timestamp": 1}]}

# ---------------------------------------------------------------------------------------------
# Fake transport


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunks: Sequence[bytes | str] = ()
    status_text: str = ""
    delay: float = 0.0
    """Seconds to wait before each chunk (observable streaming, abort tests)."""
    hang: bool = False
    """After the chunks, never end (until closed)."""


class FakeResponse:
    def __init__(self, reply: Reply, split: Callable[[bytes], list[bytes]], signal: AbortSignal | None) -> None:
        self.status = reply.status
        self.status_text = reply.status_text
        self.headers = {k.lower(): v for k, v in reply.headers.items()}
        self._reply = reply
        self._split = split
        self._signal = signal
        self.closed = False
        self.consumed = False

    def _pieces(self) -> list[bytes]:
        pieces: list[bytes] = []
        for chunk in self._reply.chunks:
            data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
            pieces.extend(self._split(data))
        return pieces

    async def _iterate(self) -> AsyncIterator[bytes]:
        for piece in self._pieces():
            if self._reply.delay:
                await asyncio.sleep(self._reply.delay)
            if self.closed:
                return
            if self._signal is not None and self._signal.aborted:
                raise AbortError()
            yield piece
        self.consumed = True
        if self._reply.hang:
            while not self.closed:
                await asyncio.sleep(0.01)

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._iterate()

    async def aread(self) -> bytes:
        return b"".join(c.encode("utf-8") if isinstance(c, str) else c for c in self._reply.chunks)

    async def aclose(self) -> None:
        self.closed = True


class FakeTransport:
    """Answers requests with scripted replies (a ``Reply``, an exception to raise, or a callable)."""

    def __init__(self, replies: Sequence[Any], split: Callable[[bytes], list[bytes]] | str = "whole") -> None:
        self.replies = list(replies)
        self.requests: list[HttpRequest] = []
        self.responses: list[FakeResponse] = []
        self.split = make_split(split) if isinstance(split, str) else split

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> FakeResponse:
        self.requests.append(request)
        if signal is not None and signal.aborted:
            raise AbortError()
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if callable(reply) and not isinstance(reply, Reply):
            reply = reply(request)
        if isinstance(reply, BaseException):
            raise reply
        response = FakeResponse(reply, self.split, signal)
        self.responses.append(response)
        return response

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].body or b"null")


def make_split(mode: str, seed: int = 0) -> Callable[[bytes], list[bytes]]:
    if mode == "whole":
        return lambda data: [data]
    if mode == "bytes":
        return lambda data: [data[i : i + 1] for i in range(len(data))]
    rng = random.Random(seed)

    def split(data: bytes) -> list[bytes]:
        pieces, pos = [], 0
        while pos < len(data):
            size = rng.randint(1, 7)
            pieces.append(data[pos : pos + size])
            pos += size
        return pieces

    return split


SPLITS = ("whole", "bytes", "random")


def connection_refused(message: str = "Failed to fetch") -> TransportError:
    return TransportError(message)


# ---------------------------------------------------------------------------------------------
# SSE builders


def sse(data: Any, event: str | None = None, eol: str = "\n") -> str:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {text}{eol}{eol}"


def CH(delta: Mapping[str, Any], fr: str | None) -> str:
    return sse({"choices": [{"index": 0, "delta": dict(delta), "finish_reason": fr}]})


def U(p: int, c: int, cached: int = 0, reasoning: int = 0) -> str:
    return sse(
        {
            "choices": [],
            "usage": {
                "prompt_tokens": p,
                "completion_tokens": c,
                "total_tokens": p + c,
                "prompt_tokens_details": {"cached_tokens": cached},
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            },
        }
    )


DONE = "data: [DONE]\n\n"


def named(data: Mapping[str, Any]) -> str:
    return sse(dict(data), event=str(data["type"]))


# ---------------------------------------------------------------------------------------------
# Running a stream and describing its events


def describe(event: Any) -> str:
    """An event in the vectors' notation, e.g. ``text_delta 0 "Hel"``."""
    kind = event.type
    if kind == "start":
        return "start"
    if kind in ("done",):
        return f"done {event.reason}"
    if kind == "error":
        return f"error {event.reason}"
    index = event.content_index
    if kind.endswith("_start"):
        return f"{kind} {index}"
    if kind in ("text_delta", "thinking_delta"):
        return f"{kind} {index} {json.dumps(event.delta, ensure_ascii=False)}"
    if kind == "toolcall_delta":
        args = event.partial.content[index].arguments
        return f"{kind} {index} {json.dumps(event.delta, ensure_ascii=False)} -> {json.dumps(args, sort_keys=True)}"
    if kind in ("text_end", "thinking_end"):
        return f"{kind} {index} {json.dumps(event.content, ensure_ascii=False)}"
    if kind == "toolcall_end":
        call = event.tool_call
        return f"{kind} {index} {call.id} {call.name} {json.dumps(call.arguments, sort_keys=True)}"
    return kind


async def run_stream(
    model: Model,
    replies: Sequence[Any],
    context: Mapping[str, Any] | None = None,
    split: str = "whole",
    abort_after: str | None = None,
    signal: AbortSignal | None = None,
    timeout: float = 10.0,
    **options: Any,
) -> tuple[list[str], Any, FakeTransport]:
    """Stream ``model`` against ``replies``; returns (event descriptions, final message, transport)."""
    from py_agent.ai.providers import ProviderStreamOptions
    from py_agent.ai.registry import stream_simple

    transport = FakeTransport(replies, split)
    controller = AbortController()
    opts = ProviderStreamOptions(
        api_key=options.pop("api_key", "KEY"),
        http_transport=transport,
        signal=signal or controller.signal,
        **options,
    )
    stream = stream_simple(model, context or HI, opts)
    events: list[str] = []

    async def consume() -> None:
        async for event in stream:
            events.append(describe(event))
            if abort_after is not None and event.type == abort_after:
                controller.abort()

    await asyncio.wait_for(consume(), timeout)
    final = await stream.result()
    return events, final, transport


def content_json(message: Any) -> list[dict[str, Any]]:
    return [block.model_dump() for block in message.content]


def usage_tuple(message: Any) -> tuple[int, int, int, int, int]:
    u = message.usage
    return (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens)


def approx(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def cost_ok(message: Any, *parts: float) -> bool:
    """``parts`` = (input, output, cacheRead, cacheWrite, total) costs, compared with 1e-9 tolerance."""
    c = message.usage.cost
    return all(
        approx(x, y) for x, y in zip((c.input, c.output, c.cache_read, c.cache_write, c.total), parts, strict=True)
    )


# ---------------------------------------------------------------------------------------------
# Request-body fixtures

IMG = "data:image/png;base64,iVBORw0KGgo="
READ = {"type": "object", "properties": {"path": {"type": "string", "description": "Path"}}, "required": ["path"]}


def rich_context(src: tuple[str, str, str], sig: str | None, call_id: str) -> dict[str, Any]:
    """RC(src, sig, callId): src = (api, provider, model)."""
    api, provider, model_id = src
    thinking: dict[str, Any] = {"type": "thinking", "thinking": "Let me look."}
    if sig is not None:
        thinking["thinkingSignature"] = sig
    return {
        "systemPrompt": "You are terse.",
        "messages": [
            {"role": "user", "content": "hi", "timestamp": 1},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                ],
                "timestamp": 2,
            },
            {
                "role": "assistant",
                "api": api,
                "provider": provider,
                "model": model_id,
                "stopReason": "toolUse",
                "content": [
                    thinking,
                    {"type": "text", "text": "A dot."},
                    {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a.txt"}},
                ],
                "timestamp": 3,
            },
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": [
                    {"type": "text", "text": "file body"},
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                ],
                "isError": False,
                "timestamp": 4,
            },
            {"role": "user", "content": "thanks", "timestamp": 5},
        ],
        "tools": [{"name": "read", "description": "Read a file", "parameters": READ}],
    }


def src_of(model: Model) -> tuple[str, str, str]:
    return (model.api, model.provider, model.id)


ANT_SRC = ("anthropic-messages", "anthropic", "claude")


async def request_of(model: Model, context: Mapping[str, Any], **options: Any) -> tuple[HttpRequest, Any]:
    """The request ``stream_simple`` sends (answered with an empty 200 body)."""
    _, _, transport = await run_stream(model, [Reply(chunks=[])], context=context, **options)
    return transport.requests[0], transport.body()
