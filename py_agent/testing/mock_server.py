"""A mock LLM provider server for tests and manual/browser use (standard library, plus the list of
wire APIs in ``py_agent/ai/providers/wire_apis.py``).

It listens on 127.0.0.1 (a random port by default) and speaks the streaming formats of the wire
APIs of ``WIRE_APIS``, each at its descriptor's route (``WireApi.route``), e.g.:

* ``POST /v1/chat/completions``                       OpenAI Chat Completions (``openai-completions``)
* ``POST /v1/responses``                              OpenAI Responses (``openai-responses``)
* ``POST /v1/messages``                               Anthropic Messages (``anthropic-messages``)
* ``POST /v1beta/models/{id}:streamGenerateContent``  Gemini (``google-generative-ai``)

Replies are scripted in a neutral form and replayed in order, one per API request::

    {"content": [{"type": "thinking", "text": "..."}, {"type": "text", "text": "Hello"},
                 {"type": "tool_call", "id": "call_1", "name": "echo", "arguments": {"text": "hi"}}],
     "usage": {"input": 10, "output": 5},      # optional; "input": "count" counts the request's text
     "stop_reason": "stop" | "length" | "toolUse",   # default: toolUse if there are tool calls
     "chunk_size": 4, "delay_ms": 0,           # text is cut into many small deltas
     "fault": {...}}                           # optional, see below

Shorthands: ``"text"``, ``"thinking"`` and ``"tool_calls"`` keys instead of ``content``. A tool call
with ``"raw_arguments": "<text>"`` streams that text as its arguments, as is (e.g. invalid JSON;
not for Gemini, whose arguments are an object).
Faults: ``{"type": "http", "status": 401|403|429|500|503|..., "retry_after": "1", "body": ...}``
(provider-style error bodies by default), ``{"type": "drop", "after": n}`` (connection cut after
n events), ``{"type": "stall", "after": n}`` (no more bytes until the client goes),
``{"type": "stall_headers"}`` (no response at all), ``{"type": "malformed", "after": n}`` (an
unparseable data line), ``{"type": "truncate", "after": n}`` (the body ends cleanly without the
API's terminal marker). A reply with ``"repeat": k`` answers k requests.

Every request is recorded (method, path, lower-cased headers, JSON body) together with whether
the client closed the connection before the reply was complete (``closed_early``). Control
endpoints (always CORS-enabled) let a browser page drive it: ``POST /__mock__/script`` (a list of
replies, or ``{"replies": [...], "cors": bool}``), ``POST /__mock__/append``, ``POST
/__mock__/reset``, ``GET /__mock__/requests``
(``list_models`` gives it a model list to discover). CORS preflights are answered (or refused when
``cors`` is false, to test the browser's error path).

From pytest::

    with MockProviderServer() as server:
        server.script([{"text": "Hello"}])
        model = {..., "baseUrl": server.base_url("openai-completions")}

From a shell: ``python -m py_agent.testing.mock_server --port 8765``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..ai.providers.descriptor import WireApi
from ..ai.providers.wire_apis import WIRE_APIS, wire_api

__all__ = ["MockProviderServer", "main"]


def _route_pattern(api: WireApi) -> re.Pattern[str]:
    """The end of a request path for ``api``, with or without the version segment; ``{model}`` is captured."""
    route = api.route.removeprefix(api.version_path)
    before, model, after = route.partition("{model}")
    return re.compile(re.escape(before) + ("(?P<model>[^/]+)" if model else "") + re.escape(after) + "$")


_ROUTES = [(api.id, _route_pattern(api)) for api in WIRE_APIS]

_STATUS_TEXT = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
_DEFAULT_REPLY: dict[str, Any] = {"text": "Hello from the mock provider."}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _arguments_text(block: Mapping[str, Any]) -> str:
    raw = block.get("raw_arguments")
    return raw if isinstance(raw, str) else _dumps(block["arguments"])


def normalize_reply(reply: Mapping[str, Any]) -> dict[str, Any]:
    """Turn shorthands into ``content`` blocks and fill defaults."""
    out = dict(reply)
    content = list(out.get("content") or [])
    if not content:
        if out.get("thinking"):
            content.append({"type": "thinking", "text": out["thinking"]})
        if out.get("text"):
            content.append({"type": "text", "text": out["text"]})
        for call in out.get("tool_calls") or []:
            content.append({"type": "tool_call", **call})
    for index, block in enumerate(content):
        if block.get("type") in ("tool_call", "toolCall"):
            block = {**block, "type": "tool_call"}
            block.setdefault("id", f"call_{index}_{uuid.uuid4().hex[:8]}")
            block.setdefault("arguments", {})
            content[index] = block
    out["content"] = content
    has_calls = any(b["type"] == "tool_call" for b in content)
    out.setdefault("stop_reason", "toolUse" if has_calls else "stop")
    usage = {"input": 10, "output": 5, **(out.get("usage") or {})}
    out["usage"] = usage
    out.setdefault("chunk_size", 4)
    out.setdefault("delay_ms", 0)
    return out


def count_input_tokens(body: Any) -> int:
    """A provider's input tokens for a request, as a tokenizer of about 4 characters a token would
    count them: the characters of every string in its JSON body (prompt, messages, tool
    definitions; not the JSON syntax around them) / 4, rounded up."""
    chars = 0
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return -(-chars // 4)


# ---------------------------------------------------------------------------------------------
# Encoders: neutral reply -> list of SSE events (each a complete "...\n\n" string)


def _sse(data: Any, event: str | None = None, eol: str = "\n") -> str:
    text = data if isinstance(data, str) else _dumps(data)
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {text}{eol}{eol}"


def encode_chat(reply: dict[str, Any], model: str) -> list[str]:
    size = reply["chunk_size"]
    events: list[str] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _sse(
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    events.append(chunk({"role": "assistant", "content": ""}))
    call_index = 0
    for block in reply["content"]:
        if block["type"] == "thinking":
            events.extend(chunk({"reasoning_content": piece}) for piece in _pieces(block["text"], size))
        elif block["type"] == "text":
            events.extend(chunk({"content": piece}) for piece in _pieces(block["text"], size))
        elif block["type"] == "tool_call":
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": call_index,
                                "id": block["id"],
                                "type": "function",
                                "function": {"name": block["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for piece in _pieces(_arguments_text(block), size):
                events.append(chunk({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}))
            call_index += 1
    finish = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}.get(
        reply["stop_reason"], reply["stop_reason"]
    )
    events.append(chunk({}, finish))
    usage = reply["usage"]
    events.append(
        _sse(
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": usage["input"],
                    "completion_tokens": usage["output"],
                    "total_tokens": usage["input"] + usage["output"],
                },
            }
        )
    )
    events.append("data: [DONE]\n\n")
    return events


def encode_responses(reply: dict[str, Any], model: str) -> list[str]:
    size = reply["chunk_size"]
    events: list[str] = []
    seq = 0

    def emit(data: dict[str, Any]) -> None:
        nonlocal seq
        data = {**data, "sequence_number": seq}
        seq += 1
        events.append(_sse(data, data["type"]))

    emit(
        {
            "type": "response.created",
            "response": {"id": "resp_mock", "object": "response", "status": "in_progress", "output": []},
        }
    )
    for index, block in enumerate(reply["content"]):
        if block["type"] == "thinking":
            item = {"type": "reasoning", "id": f"rs_{index}", "summary": [], "encrypted_content": "ENC"}
            emit({"type": "response.output_item.added", "output_index": index, "item": item})
            emit(
                {
                    "type": "response.reasoning_summary_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            for piece in _pieces(block["text"], size):
                emit(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": 0,
                        "delta": piece,
                    }
                )
            emit(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": {**item, "summary": [{"type": "summary_text", "text": block["text"]}]},
                }
            )
        elif block["type"] == "text":
            item = {
                "type": "message",
                "id": f"msg_{index}",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            emit({"type": "response.output_item.added", "output_index": index, "item": item})
            emit(
                {
                    "type": "response.content_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
            for piece in _pieces(block["text"], size):
                emit(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": piece,
                    }
                )
            emit(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": {
                        **item,
                        "status": "completed",
                        "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                    },
                }
            )
        elif block["type"] == "tool_call":
            call_id = block["id"]
            item = {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": call_id,
                "name": block["name"],
                "arguments": "",
                "status": "in_progress",
            }
            emit({"type": "response.output_item.added", "output_index": index, "item": item})
            arguments = _arguments_text(block)
            for piece in _pieces(arguments, size):
                emit(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": piece,
                    }
                )
            emit(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": index,
                    "arguments": arguments,
                }
            )
            emit(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": {**item, "arguments": arguments, "status": "completed"},
                }
            )
    usage = reply["usage"]
    status = "incomplete" if reply["stop_reason"] == "length" else "completed"
    response: dict[str, Any] = {
        "id": "resp_mock",
        "object": "response",
        "status": status,
        "model": model,
        "usage": {
            "input_tokens": usage["input"],
            "output_tokens": usage["output"],
            "total_tokens": usage["input"] + usage["output"],
        },
    }
    if status == "incomplete":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    emit({"type": f"response.{status}", "response": response})
    return events


def encode_anthropic(reply: dict[str, Any], model: str) -> list[str]:
    size = reply["chunk_size"]
    usage = reply["usage"]
    events = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_mock",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage["input"],
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            },
            "message_start",
        )
    ]
    for index, block in enumerate(reply["content"]):

        def delta(d: dict[str, Any], i: int = index) -> str:
            return _sse({"type": "content_block_delta", "index": i, "delta": d}, "content_block_delta")

        if block["type"] == "thinking":
            events.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                    "content_block_start",
                )
            )
            events.extend(delta({"type": "thinking_delta", "thinking": p}) for p in _pieces(block["text"], size))
            events.append(delta({"type": "signature_delta", "signature": block.get("signature", "c2lnbmF0dXJl")}))
        elif block["type"] == "text":
            events.append(
                _sse(
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                    "content_block_start",
                )
            )
            events.extend(delta({"type": "text_delta", "text": p}) for p in _pieces(block["text"], size))
        elif block["type"] == "tool_call":
            events.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
                    },
                    "content_block_start",
                )
            )
            events.extend(
                delta({"type": "input_json_delta", "partial_json": p}) for p in _pieces(_arguments_text(block), size)
            )
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}.get(
        reply["stop_reason"], reply["stop_reason"]
    )
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output"]},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def encode_google(reply: dict[str, Any], model: str) -> list[str]:
    size = reply["chunk_size"]
    events: list[str] = []

    def chunk(parts: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> str:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": "mock"}
        if extra:
            candidate.update(extra.get("candidate", {}))
            data.update(extra.get("top", {}))
        return _sse(data, eol="\r\n")

    for block in reply["content"]:
        if block["type"] == "thinking":
            events.extend(chunk([{"text": p, "thought": True}]) for p in _pieces(block["text"], size))
        elif block["type"] == "text":
            events.extend(chunk([{"text": p}]) for p in _pieces(block["text"], size))
        elif block["type"] == "tool_call":
            events.append(
                chunk([{"functionCall": {"name": block["name"], "args": block["arguments"], "id": block["id"]}}])
            )
    usage = reply["usage"]
    finish = "MAX_TOKENS" if reply["stop_reason"] == "length" else "STOP"
    events.append(
        chunk(
            [],
            {
                "candidate": {"finishReason": finish},
                "top": {
                    "usageMetadata": {
                        "promptTokenCount": usage["input"],
                        "candidatesTokenCount": usage["output"],
                        "totalTokenCount": usage["input"] + usage["output"],
                    }
                },
            },
        )
    )
    return events


ENCODERS = {
    "openai-completions": encode_chat,
    "openai-responses": encode_responses,
    "anthropic-messages": encode_anthropic,
    "google-generative-ai": encode_google,
}

_MALFORMED = {
    "openai-completions": "data: {oops\n\n",
    "openai-responses": "event: response.output_text.delta\ndata: {oops\n\n",
    "anthropic-messages": "event: content_block_delta\ndata: {oops\n\n",
    "google-generative-ai": "data: {oops\r\n\r\n",
}


def error_body(api: str, status: int, message: str | None = None) -> dict[str, Any]:
    """A provider-style error body for ``status``."""
    if api == "anthropic-messages":
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        text = message or {
            401: "invalid x-api-key",
            403: "Your API key does not have permission to use the specified resource.",
            429: "Number of request tokens has exceeded your per-minute rate limit",
        }.get(status, "Internal server error")
        return {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_mock"}
    if api == "google-generative-ai":
        state = {
            400: "INVALID_ARGUMENT",
            401: "UNAUTHENTICATED",
            403: "PERMISSION_DENIED",
            429: "RESOURCE_EXHAUSTED",
            503: "UNAVAILABLE",
        }.get(status, "INTERNAL")
        text = message or {
            401: "API key not valid. Please pass a valid API key.",
            403: "Permission denied.",
            429: "Resource has been exhausted (e.g. check quota).",
        }.get(status, "Internal error encountered.")
        return {"error": {"code": status, "message": text, "status": state}}
    kind, code = {
        401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", "unsupported_country_region_territory"),
        429: ("requests", "rate_limit_exceeded"),
    }.get(status, ("server_error", None))
    text = message or {
        401: "Incorrect API key provided: sk-mock.",
        403: "Country, region, or territory not supported",
        429: "Rate limit reached for mock-model",
        503: "The engine is currently overloaded, please try again later",
    }.get(status, "The server had an error while processing your request.")
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


# ---------------------------------------------------------------------------------------------
# The server


class _State:
    def __init__(self, cors: bool) -> None:
        self.lock = threading.Lock()
        self.cors = cors
        self.replies: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.closed = threading.Condition(self.lock)
        self.stall_seconds = 60.0
        # Models the server lists (GET /v1/models, and LM Studio's /api/v0/models with the same
        # records); None: those routes answer 404, as a server that lists none.
        self.models: list[dict[str, Any]] | None = None

    def next_reply(self) -> dict[str, Any]:
        with self.lock:
            if not self.replies:
                return dict(_DEFAULT_REPLY)
            reply = self.replies[0]
            repeat = int(reply.get("repeat", 1))
            if repeat > 1:
                self.replies[0] = {**reply, "repeat": repeat - 1}
            else:
                self.replies.pop(0)
            return dict(reply)


def _api_for(path: str) -> tuple[str | None, str]:
    route = path.split("?", 1)[0]
    for api, pattern in _ROUTES:
        match = pattern.search(route)
        if match:
            return api, match.groupdict().get("model") or ""
    return None, ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- CORS ----------------------------------------------------------------------------------

    def _cors_headers(self, force: bool = False) -> None:
        if not (force or self.server.state.cors):
            return
        origin = self.headers.get("Origin")
        self.send_header("Access-Control-Allow-Origin", origin or "*")
        if origin:
            self.send_header("Vary", "Origin")
        self.send_header("Access-Control-Expose-Headers", "*")

    def do_OPTIONS(self) -> None:
        control = self.path.startswith("/__mock__/")
        if not (control or self.server.state.cors):
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            return
        self.send_response(204)
        self._cors_headers(force=True)
        self.send_header("Access-Control-Allow-Methods", "POST, GET, OPTIONS")
        requested = self.headers.get("Access-Control-Request-Headers")
        self.send_header("Access-Control-Allow-Headers", requested or "*")
        self.send_header("Access-Control-Allow-Private-Network", "true")
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- control -------------------------------------------------------------------------------

    def _json(self, status: int, value: Any, control: bool = True, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(value).encode()
        self.send_response(status, _STATUS_TEXT.get(status))
        self._cors_headers(force=control)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value_ in (headers or {}).items():
            self.send_header(name, value_)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:
        state = self.server.state
        if self.path.startswith("/__mock__/requests"):
            with state.lock:
                self._json(200, list(state.requests))
        elif self.path.startswith("/__mock__/health"):
            self._json(200, {"ok": True})
        elif state.models is not None and self.path.split("?", 1)[0] in ("/v1/models", "/api/v0/models"):
            self._json(200, {"object": "list", "data": list(state.models)})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        state = self.server.state
        raw = self._read_body()
        if self.path.startswith("/__mock__/"):
            try:
                value = json.loads(raw or b"null")
            except ValueError:
                self._json(400, {"error": "invalid JSON"})
                return
            command = self.path.split("?", 1)[0].removeprefix("/__mock__/")
            with state.lock:
                if command in ("script", "append"):
                    replies = value.get("replies", []) if isinstance(value, dict) else value or []
                    if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
                        self._json(400, {"error": "replies must be a list of objects"})
                        return
                    if isinstance(value, dict) and "cors" in value:
                        state.cors = bool(value["cors"])
                    if command == "script":
                        state.replies = list(replies)
                    else:
                        state.replies.extend(replies)
                elif command == "reset":
                    state.replies = []
                    state.requests = []
                    state.cors = bool(value.get("cors", True)) if isinstance(value, dict) else True
                elif command == "config" and isinstance(value, dict):
                    state.cors = bool(value.get("cors", state.cors))
                else:
                    self._json(404, {"error": f"unknown command {command}"})
                    return
            self._json(200, {"ok": True})
            return
        api, model = _api_for(self.path)
        if api is None:
            self._json(404, {"error": {"message": f"No route for {self.path}"}}, control=False)
            return
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            model = body["model"]
        record: dict[str, Any] = {
            "method": "POST",
            "path": self.path,
            "api": api,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "body": body,
            "closed_early": False,
            "completed": False,
            "time": time.time(),
        }
        with state.lock:
            state.requests.append(record)
        reply = normalize_reply(state.next_reply())
        if reply["usage"].get("input") == "count":
            reply["usage"] = {**reply["usage"], "input": count_input_tokens(body)}
        self._respond(api, model or "mock-model", reply, record)

    # -- API replies ---------------------------------------------------------------------------

    def _client_gone(self, wait: float) -> bool:
        """Wait up to ``wait`` seconds; True if the client closed the connection meanwhile."""
        try:
            readable, _, _ = select.select([self.connection], [], [], max(0.0, wait))
            if readable:
                return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except (OSError, ValueError):
            return True
        return False

    def _mark_closed(self, record: dict[str, Any]) -> None:
        state = self.server.state
        with state.closed:
            record["closed_early"] = True
            state.closed.notify_all()

    def _respond(self, api: str, model: str, reply: dict[str, Any], record: dict[str, Any]) -> None:
        fault = reply.get("fault") or {}
        kind = fault.get("type")
        state = self.server.state
        if kind == "stall_headers":
            deadline = time.monotonic() + float(fault.get("seconds", state.stall_seconds))
            while time.monotonic() < deadline:
                if self._client_gone(0.05):
                    self._mark_closed(record)
                    break
            self.close_connection = True
            return
        if kind == "http":
            status = int(fault.get("status", 500))
            body = fault.get("body")
            if body is None:
                body = error_body(api, status, fault.get("message"))
            headers = {}
            if fault.get("retry_after") is not None:
                headers["Retry-After"] = str(fault["retry_after"])
            if isinstance(body, str):
                data = body.encode()
                self.send_response(status, _STATUS_TEXT.get(status))
                self._cors_headers()
                self.send_header("Content-Type", fault.get("content_type", "text/plain"))
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True
            else:
                self._json(status, body, control=False, headers=headers)
            with state.lock:
                record["completed"] = True
            return
        events = ENCODERS[api](reply, model)
        delay = float(reply.get("delay_ms") or 0) / 1000
        after = int(fault.get("after", 0)) if kind else -1
        self.send_response(200, "OK")
        self._cors_headers()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            self.wfile.flush()
            for index, event in enumerate(self._with_fault(events, api, kind, after)):
                if event is None:  # a fault point
                    if kind == "drop":
                        with contextlib.suppress(OSError):
                            self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if kind == "stall":
                        deadline = time.monotonic() + float(fault.get("seconds", state.stall_seconds))
                        while time.monotonic() < deadline:
                            if self._client_gone(0.05):
                                self._mark_closed(record)
                                return
                        return
                    if kind == "truncate":
                        self._write_chunk(b"")
                        return
                    continue
                if delay and index and self._client_gone(delay):
                    self._mark_closed(record)
                    return
                self._write_chunk(event.encode("utf-8"))
            self._write_chunk(b"")
            with state.lock:
                record["completed"] = True
        except (BrokenPipeError, ConnectionResetError, OSError):
            self._mark_closed(record)

    @staticmethod
    def _with_fault(events: Sequence[str], api: str, kind: str | None, after: int) -> Iterator[str | None]:
        for index, event in enumerate(events):
            if kind and index == after:
                if kind == "malformed":
                    yield _MALFORMED[api]
                else:
                    yield None
            yield event
        if kind and after >= len(events):
            yield None

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    state: _State


class MockProviderServer:
    """The server, usable as a context manager (``with MockProviderServer() as server: ...``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, cors: bool = True) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.state = _State(cors)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, api: str) -> str:
        """The ``base_url`` a model of ``api`` uses to reach this server."""
        descriptor = wire_api(api)
        if descriptor is None:
            raise ValueError(f"The mock server does not speak {api!r}")
        return f"{self.url}{descriptor.mock_base_path}"

    def start(self) -> MockProviderServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="mock-provider", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> MockProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -----------------------------------------------------------------------------

    @property
    def cors(self) -> bool:
        return self._server.state.cors

    @cors.setter
    def cors(self, value: bool) -> None:
        with self._server.state.lock:
            self._server.state.cors = value

    def script(self, replies: Sequence[Mapping[str, Any]]) -> None:
        """Replace the queue of replies."""
        with self._server.state.lock:
            self._server.state.replies = [dict(r) for r in replies]

    def append(self, *replies: Mapping[str, Any]) -> None:
        with self._server.state.lock:
            self._server.state.replies.extend(dict(r) for r in replies)

    def list_models(self, models: Sequence[Mapping[str, Any]] | None) -> None:
        """Models the server lists at ``GET /v1/models`` and ``GET /api/v0/models`` (records as
        LM Studio's REST API gives them: ``id``, ``type`` "llm"/"vlm", ``max_context_length``...);
        ``None``: no list (404)."""
        with self._server.state.lock:
            self._server.state.models = None if models is None else [dict(m) for m in models]

    def reset(self) -> None:
        with self._server.state.lock:
            self._server.state.replies = []
            self._server.state.requests = []

    @property
    def stall_seconds(self) -> float:
        return self._server.state.stall_seconds

    @stall_seconds.setter
    def stall_seconds(self, value: float) -> None:
        self._server.state.stall_seconds = value

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Recorded API requests (a snapshot)."""
        with self._server.state.lock:
            return [dict(r) for r in self._server.state.requests]

    def wait_closed(self, index: int = -1, timeout: float = 5.0) -> bool:
        """Wait until request ``index`` is seen closed by the client before completion."""
        state = self._server.state
        deadline = time.monotonic() + timeout
        with state.closed:
            while True:
                if state.requests and state.requests[index]["closed_early"]:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                state.closed.wait(remaining)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Mock LLM provider server (OpenAI, Anthropic, Gemini streaming formats)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--no-cors", action="store_true", help="refuse CORS (API paths only)")
    parser.add_argument("--script", help="a JSON file with a list of replies")
    args = parser.parse_args(argv)
    server = MockProviderServer(args.host, args.port, cors=not args.no_cors)
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            server.script(json.load(handle))
    print(f"mock provider listening on http://{args.host}:{server.port}", flush=True)
    server.start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
