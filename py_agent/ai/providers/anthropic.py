"""Anthropic Messages (``anthropic-messages``), with pi 0.79.10's request changes.

Browser calls work because every request carries ``anthropic-dangerous-direct-browser-access:
true``; the key travels in ``x-api-key``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

from .._util import json_stringify
from ..transform import transform_messages
from ..types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .content import sanitize_surrogates, tool_spec
from .driver import BuiltRequest, StreamCall, stream_function
from .errors import ProviderError, parse_json_data, truncate_body, try_json
from .headers import join_url, merge_headers
from .options import compat_value, option, reasoning_level
from .payload_cache import wire_items
from .wire_apis import ANTHROPIC_MESSAGES

DESCRIPTOR = ANTHROPIC_MESSAGES
API = DESCRIPTOR.id
ANTHROPIC_VERSION = "2023-06-01"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
DEFAULT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_ID_SANITIZE = re.compile(r"[^A-Za-z0-9_-]")


def normalize_tool_call_id(id: str, _model: Model, _source: AssistantMessage) -> str:
    return _ID_SANITIZE.sub("_", id)[:64]


def _cache_control(model: Model, options: SimpleStreamOptions) -> dict[str, Any] | None:
    retention = options.cache_retention or "short"
    if retention == "none":
        return None
    long_ok = compat_value(model, "supportsLongCacheRetention", "api.anthropic.com" in model.base_url)
    if retention == "long" and long_ok:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _tool_result_content(content: list[Any]) -> Any:
    if not any(isinstance(block, ImageContent) for block in content):
        return sanitize_surrogates("\n".join(b.text for b in content if isinstance(b, TextContent)))
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block))
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def convert_messages(model: Model, context: Context, cache_control: dict[str, Any] | None) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    _convert_messages(model, transform_messages(context.messages, model, normalize_tool_call_id), params, None)
    _mark_last(params, cache_control)
    return params


def _convert_messages(model: Model, messages: list[Any], params: list[dict[str, Any]], state: None) -> None:
    """Append the params of transformed ``messages`` (payload_cache.Convert: no state)."""
    allow_empty_signature = bool(compat_value(model, "allowEmptySignature", False))
    vision = "image" in model.input
    index = 0
    while index < len(messages):
        message = messages[index]
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                if message.content.strip():
                    params.append({"role": "user", "content": sanitize_surrogates(message.content)})
            else:
                blocks: list[dict[str, Any]] = []
                for block in message.content:
                    if isinstance(block, TextContent):
                        if block.text.strip():
                            blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
                    elif isinstance(block, ImageContent) and vision:
                        blocks.append(_image(block))
                if blocks:
                    params.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = []
            for ablock in message.content:
                if isinstance(ablock, TextContent):
                    if ablock.text.strip():
                        blocks.append({"type": "text", "text": sanitize_surrogates(ablock.text)})
                elif isinstance(ablock, ThinkingContent):
                    if ablock.redacted:
                        blocks.append({"type": "redacted_thinking", "data": ablock.thinking_signature or ""})
                        continue
                    if not ablock.thinking.strip():
                        continue
                    signature = ablock.thinking_signature
                    if not signature or not signature.strip():
                        if allow_empty_signature:
                            blocks.append(
                                {"type": "thinking", "thinking": sanitize_surrogates(ablock.thinking), "signature": ""}
                            )
                        else:
                            blocks.append({"type": "text", "text": sanitize_surrogates(ablock.thinking)})
                    else:
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": sanitize_surrogates(ablock.thinking),
                                "signature": signature,
                            }
                        )
                elif isinstance(ablock, ToolCall):
                    blocks.append(
                        {"type": "tool_use", "id": ablock.id, "name": ablock.name, "input": ablock.arguments or {}}
                    )
            if blocks:
                params.append({"role": "assistant", "content": blocks})
        else:
            results: list[dict[str, Any]] = []
            while index < len(messages) and isinstance(messages[index], ToolResultMessage):
                result = messages[index]
                assert isinstance(result, ToolResultMessage)
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": _tool_result_content(list(result.content)),
                        "is_error": result.is_error,
                    }
                )
                index += 1
            index -= 1
            params.append({"role": "user", "content": results})
        index += 1


def _mark_last(params: list[dict[str, Any]], cache_control: dict[str, Any] | None) -> None:
    """Mark the last user message's last block for prompt caching, in a copy: the message may be
    the cached one of earlier requests (payload_cache.py), never changed in place."""
    if cache_control is None or not params:
        return
    last = params[-1]
    if last["role"] == "user":
        content = last["content"]
        if isinstance(content, list):
            if content and content[-1].get("type") in ("text", "image", "tool_result"):
                params[-1] = {**last, "content": [*content[:-1], {**content[-1], "cache_control": cache_control}]}
        elif isinstance(content, str):
            params[-1] = {**last, "content": [{"type": "text", "text": content, "cache_control": cache_control}]}


def _adaptive(model: Model) -> bool:
    return compat_value(model, "forceAdaptiveThinking", False) is True


def _effort(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


def build_payload(model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
    cache_control = _cache_control(model, options)
    level = reasoning_level(model, options)
    max_tokens = options.max_tokens or model.max_tokens
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    thinking_enabled = False
    if model.reasoning:
        level_map = model.thinking_level_map or {}
        if level is not None:
            thinking_enabled = True
            if _adaptive(model):
                thinking = {"type": "adaptive", "display": "summarized"}
                output_config = {"effort": _effort(model, level)}
            else:
                budgets = dict(DEFAULT_BUDGETS)
                custom = options.thinking_budgets
                if custom is not None:
                    values = custom if isinstance(custom, Mapping) else custom.model_dump(by_alias=False)
                    budgets.update({k: v for k, v in values.items() if v is not None})
                clamped = "high" if level == "xhigh" else level
                budget = budgets[clamped]
                if options.max_tokens:
                    max_tokens = min(options.max_tokens + budget, model.max_tokens)
                else:
                    max_tokens = model.max_tokens
                if max_tokens <= budget:
                    budget = max(0, max_tokens - 1024)
                thinking = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
        elif not ("off" in level_map and level_map["off"] is None):
            thinking = {"type": "disabled"}
    messages, _ = wire_items(
        API,
        model,
        context.messages,
        normalize_tool_call_id,
        partial(_convert_messages, model),
        [],
        None,
        use_cache=options.on_payload is None,
    )
    _mark_last(messages, cache_control)
    params: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
    }
    if context.system_prompt:
        system: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(context.system_prompt)}
        if cache_control is not None:
            system["cache_control"] = cache_control
        params["system"] = [system]
    if options.temperature is not None and not thinking_enabled and compat_value(model, "supportsTemperature", True):
        params["temperature"] = options.temperature
    if context.tools:
        eager = compat_value(model, "supportsEagerToolInputStreaming", model.provider != "fireworks")
        tools = []
        for tool in context.tools:
            name, description, schema = tool_spec(tool)
            entry: dict[str, Any] = {"name": name, "description": description}
            if eager:
                entry["eager_input_streaming"] = True
            input_schema: dict[str, Any] = {
                "type": "object",
                "properties": schema.get("properties") or {},
                "required": schema.get("required") or [],
            }
            if schema.get("$defs"):  # pydantic-model parameters refer to their nested models
                input_schema["$defs"] = schema["$defs"]
            entry["input_schema"] = input_schema
            tools.append(entry)
        params["tools"] = tools
    if thinking is not None:
        params["thinking"] = thinking
    if output_config is not None:
        params["output_config"] = output_config
    metadata = options.metadata or {}
    if isinstance(metadata.get("user_id"), str):
        params["metadata"] = {"user_id": metadata["user_id"]}
    tool_choice = option(options, "tool_choice")
    if tool_choice:
        params["tool_choice"] = {"type": tool_choice} if isinstance(tool_choice, str) else tool_choice
    return params


def build_headers(model: Model, context: Context, options: SimpleStreamOptions, api_key: str | None) -> dict[str, str]:
    betas: list[str] = []
    eager = compat_value(model, "supportsEagerToolInputStreaming", model.provider != "fireworks")
    if context.tools and not eager:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if option(options, "interleaved_thinking", True) is not False and not _adaptive(model):
        betas.append(INTERLEAVED_THINKING_BETA)
    defaults: dict[str, str | None] = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": ANTHROPIC_VERSION,
        "anthropic-dangerous-direct-browser-access": "true",
    }
    if api_key:
        defaults["x-api-key"] = api_key
    if betas:
        defaults["anthropic-beta"] = ",".join(betas)
    return merge_headers(defaults, model.headers, options.headers)


def map_stop_reason(reason: str, details: Any) -> tuple[str, str | None]:
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", f"Provider stop reason: {reason}"
    raise ProviderError(f"Unhandled stop reason: {reason}")


_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


class AnthropicAdapter:
    api: ClassVar[str] = API
    completion_marker: ClassVar[str] = "stop_reason"

    def build_request(
        self, model: Model, context: Context, options: SimpleStreamOptions, api_key: str | None
    ) -> BuiltRequest:
        return BuiltRequest(
            url=join_url(model.base_url, DESCRIPTOR.request_path),
            headers=build_headers(model, context, options, api_key),
            payload=build_payload(model, context, options),
        )

    def format_http_error(self, status: int, status_text: str, headers: Mapping[str, str], text: str) -> str:
        if not text.strip():
            return f"{status} status code (no body)"
        body = try_json(text)
        if body is None:
            return f"{status} {truncate_body(text)}"
        return f"{status} {json_stringify(body)}"

    async def process(self, call: StreamCall) -> None:
        asm = call.asm
        out = call.out
        usage = out.usage
        by_wire: dict[int, int] = {}
        started = False
        async for sse in call.events():
            name = sse.event or ""
            if name == "error":
                data = try_json(sse.data)
                raise ProviderError(json_stringify(data) if data is not None else sse.data)
            if name not in _MESSAGE_EVENTS:
                continue
            event = parse_json_data(sse.data)
            if not isinstance(event, dict):
                continue
            kind = event.get("type") or name
            if kind == "message_start":
                started = True
                message = event.get("message") or {}
                if isinstance(message.get("id"), str):
                    out.response_id = message["id"]
                raw = message.get("usage") or {}
                usage = Usage(
                    input=raw.get("input_tokens") or 0,
                    output=raw.get("output_tokens") or 0,
                    cache_read=raw.get("cache_read_input_tokens") or 0,
                    cache_write=raw.get("cache_creation_input_tokens") or 0,
                )
                one_hour = (raw.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
                if one_hour:
                    usage.cache_write_1h = one_hour
                usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
                asm.update_usage(usage)
                continue
            if not started:
                raise ProviderError(f'Unexpected event order, got {kind} before "message_start"')
            if kind == "content_block_start":
                block = event.get("content_block") or {}
                wire = event.get("index")
                btype = block.get("type")
                if btype == "text":
                    index = asm.open_text()
                elif btype == "thinking":
                    index = asm.open_thinking("")
                elif btype == "redacted_thinking":
                    index = asm.open_thinking(block.get("data") or "", "[Reasoning redacted]", True)
                elif btype == "tool_use":
                    index = asm.open_tool_call(
                        str(block.get("id") or ""),
                        str(block.get("name") or ""),
                        block.get("input") if isinstance(block.get("input"), dict) else None,
                    )
                else:
                    continue
                if isinstance(wire, int):
                    by_wire[wire] = index
            elif kind == "content_block_delta":
                index_or_none = by_wire.get(event.get("index"))  # type: ignore[arg-type]
                if index_or_none is None:
                    continue
                index = index_or_none
                delta = event.get("delta") or {}
                dtype = delta.get("type")
                target = out.content[index]
                if dtype == "text_delta" and isinstance(target, TextContent):
                    asm.text_delta(str(delta.get("text") or ""), index)
                elif dtype == "thinking_delta" and isinstance(target, ThinkingContent):
                    asm.thinking_delta(str(delta.get("thinking") or ""), index)
                elif dtype == "input_json_delta" and isinstance(target, ToolCall):
                    asm.tool_delta(index, str(delta.get("partial_json") or ""))
                elif dtype == "signature_delta" and isinstance(target, ThinkingContent):
                    target.thinking_signature = (target.thinking_signature or "") + str(delta.get("signature") or "")
            elif kind == "content_block_stop":
                index_or_none = by_wire.pop(event.get("index"), None)  # type: ignore[arg-type]
                if index_or_none is not None and index_or_none == asm.current_index:
                    asm.close()
            elif kind == "message_delta":
                delta = event.get("delta") or {}
                reason = delta.get("stop_reason")
                if reason:
                    stop, message = map_stop_reason(str(reason), delta.get("stop_details"))
                    call.set_stop_reason(stop, message)
                    call.completed = True
                raw = event.get("usage") or {}
                usage = out.usage
                if raw.get("input_tokens") is not None:
                    usage.input = raw["input_tokens"]
                if raw.get("output_tokens") is not None:
                    usage.output = raw["output_tokens"]
                if raw.get("cache_read_input_tokens") is not None:
                    usage.cache_read = raw["cache_read_input_tokens"]
                if raw.get("cache_creation_input_tokens") is not None:
                    usage.cache_write = raw["cache_creation_input_tokens"]
                usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
                asm.update_usage(usage)
            elif kind == "message_stop":
                call.completed = True
                return


stream_anthropic = stream_function(
    AnthropicAdapter(), "stream_anthropic", "Stream an Anthropic Messages reply (also the ``stream_simple`` entry)."
)


stream_simple_anthropic = stream_anthropic

__all__ = ["DESCRIPTOR", "AnthropicAdapter", "build_headers", "build_payload", "convert_messages", "stream_anthropic"]
