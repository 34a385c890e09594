"""OpenAI Responses (``openai-responses``), with pi 0.79.10's changes.

Requests set ``store: false``, so reasoning is replayed from the encrypted reasoning item kept as
the thinking block's signature.
"""

from __future__ import annotations

import json
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
    Usage,
    UserMessage,
)
from .content import sanitize_surrogates, short_hash, tool_spec
from .driver import StreamCall, stream_function
from .errors import ProviderError, openai_style_error, parse_json_data
from .openai_shared import OpenAIRequestBuilder
from .options import compat_value, mapped_level, option, reasoning_level
from .payload_cache import wire_items
from .wire_apis import OPENAI_RESPONSES

DESCRIPTOR = OPENAI_RESPONSES
API = DESCRIPTOR.id
OPENAI_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
_ID_SANITIZE = re.compile(r"[^A-Za-z0-9_-]")
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def _normalize_part(part: str) -> str:
    return _TRAILING_UNDERSCORES.sub("", _ID_SANITIZE.sub("_", part)[:64])


def tool_call_id_normalizer(model: Model) -> Any:
    def normalize(id: str, _model: Model, source: AssistantMessage) -> str:
        if model.provider not in OPENAI_TOOL_CALL_PROVIDERS or "|" not in id:
            return _normalize_part(id)
        call_id, item_id = id.split("|", 1)
        foreign = source.provider != model.provider or source.api != model.api
        normalized_item = f"fc_{short_hash(item_id)}"[:64] if foreign else _normalize_part(item_id)
        if not normalized_item.startswith("fc_"):
            normalized_item = _normalize_part(f"fc_{normalized_item}")
        return f"{_normalize_part(call_id)}|{normalized_item}"

    return normalize


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    items = _system_item(model, context)
    _convert_messages(model, transform_messages(context.messages, model, tool_call_id_normalizer(model)), items, 0)
    return items


def _system_item(model: Model, context: Context) -> list[dict[str, Any]]:
    if not context.system_prompt:
        return []
    developer = model.reasoning and compat_value(model, "supportsDeveloperRole", True) is not False
    return [{"role": "developer" if developer else "system", "content": sanitize_surrogates(context.system_prompt)}]


def _convert_messages(model: Model, messages: list[Any], items: list[dict[str, Any]], msg_index: int) -> int:
    """Append the items of transformed ``messages``; ``msg_index``: how many messages were written
    before them (fallback ids count them), returned after them (payload_cache.Convert)."""
    vision = "image" in model.input
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                items.append(
                    {"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(message.content)}]}
                )
            else:
                parts: list[dict[str, Any]] = []
                for block in message.content:
                    if isinstance(block, TextContent):
                        parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
                    elif isinstance(block, ImageContent) and vision:
                        parts.append(_image(block))
                if not parts:
                    continue
                items.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            output: list[dict[str, Any]] = []
            different_model = (
                message.model != model.id and message.provider == model.provider and message.api == model.api
            )
            text_index = 0
            for ablock in message.content:
                if isinstance(ablock, ThinkingContent):
                    if ablock.thinking_signature:
                        try:
                            item = json.loads(ablock.thinking_signature)
                        except ValueError:
                            continue
                        if isinstance(item, dict):
                            output.append(item)
                elif isinstance(ablock, TextContent):
                    parsed = parse_text_signature(ablock.text_signature)
                    fallback = f"msg_pi_{msg_index}" if text_index == 0 else f"msg_pi_{msg_index}_{text_index}"
                    text_index += 1
                    msg_id = parsed[0] if parsed else None
                    if not msg_id:
                        msg_id = fallback
                    elif len(msg_id) > 64:
                        msg_id = f"msg_{short_hash(msg_id)}"
                    entry: dict[str, Any] = {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {"type": "output_text", "text": sanitize_surrogates(ablock.text), "annotations": []}
                        ],
                        "status": "completed",
                        "id": msg_id,
                    }
                    if parsed and parsed[1]:
                        entry["phase"] = parsed[1]
                    output.append(entry)
                elif isinstance(ablock, ToolCall):
                    call_id, _, item_id = ablock.id.partition("|")
                    call: dict[str, Any] = {"type": "function_call"}
                    if item_id and not (different_model and item_id.startswith("fc_")):
                        call["id"] = item_id
                    call["call_id"] = call_id
                    call["name"] = ablock.name
                    call["arguments"] = json_stringify(ablock.arguments)
                    output.append(call)
            if not output:
                continue
            items.extend(output)
        else:
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            has_images = any(isinstance(b, ImageContent) for b in message.content)
            call_id = message.tool_call_id.split("|", 1)[0]
            result: Any
            if has_images and vision:
                result = []
                if text:
                    result.append({"type": "input_text", "text": sanitize_surrogates(text)})
                result.extend(_image(b) for b in message.content if isinstance(b, ImageContent))
            else:
                result = sanitize_surrogates(text if text else "(see attached image)")
            items.append({"type": "function_call_output", "call_id": call_id, "output": result})
        msg_index += 1
    return msg_index


def build_payload(model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
    retention = options.cache_retention or "short"
    items, _ = wire_items(
        API,
        model,
        context.messages,
        tool_call_id_normalizer(model),
        partial(_convert_messages, model),
        _system_item(model, context),
        0,
        use_cache=options.on_payload is None,
    )
    params: dict[str, Any] = {"model": model.id, "input": items, "stream": True}
    if retention != "none" and options.session_id:
        params["prompt_cache_key"] = options.session_id[:64]
    long_ok = compat_value(model, "supportsLongCacheRetention", "api.openai.com" in model.base_url)
    if retention == "long" and long_ok:
        params["prompt_cache_retention"] = "24h"
    params["store"] = False
    if options.max_tokens:
        params["max_output_tokens"] = options.max_tokens
    if options.temperature is not None:
        params["temperature"] = options.temperature
    service_tier = option(options, "service_tier")
    if service_tier is not None:
        params["service_tier"] = service_tier
    if context.tools:
        tools = []
        for tool in context.tools:
            name, description, schema = tool_spec(tool)
            tools.append(
                {"type": "function", "name": name, "description": description, "parameters": schema, "strict": False}
            )
        params["tools"] = tools
    if model.reasoning:
        effort = reasoning_level(model, options)
        summary = option(options, "reasoning_summary")
        level_map = model.thinking_level_map or {}
        if effort or summary:
            params["reasoning"] = {
                "effort": mapped_level(model, effort) if effort else "medium",
                "summary": summary or "auto",
            }
            params["include"] = ["reasoning.encrypted_content"]
        elif model.provider != "github-copilot" and not ("off" in level_map and level_map["off"] is None):
            params["reasoning"] = {"effort": level_map.get("off") or "none"}
    return params


def _tier_multiplier(model: Model, tier: Any) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model.id == "gpt-5.5" else 2.0
    return 1.0


def _status_stop_reason(status: Any) -> str:
    if status in ("failed", "cancelled"):
        return "error"
    if status == "incomplete":
        return "length"
    return "stop"


class OpenAIResponsesAdapter(OpenAIRequestBuilder):
    descriptor = DESCRIPTOR
    api: ClassVar[str] = API
    completion_marker: ClassVar[str] = "response.completed"

    def build_payload(self, model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
        return build_payload(model, context, options)

    def format_http_error(self, status: int, status_text: str, headers: Mapping[str, str], text: str) -> str:
        message = openai_style_error(status, text)
        prefix = f"{status} "
        if message.startswith(prefix):
            message = message[len(prefix) :]
        return f"OpenAI API error ({status}): {message}"

    async def process(self, call: StreamCall) -> None:
        model = call.model
        asm = call.asm
        out = call.out
        item: dict[str, Any] | None = None
        index: int | None = None
        async for sse in call.events():
            event = parse_json_data(sse.data)
            if not isinstance(event, dict):
                continue
            kind = event.get("type") or sse.event
            if kind == "response.created":
                response = event.get("response") or {}
                if isinstance(response.get("id"), str):
                    out.response_id = response["id"]
            elif kind == "response.output_item.added":
                added = event.get("item") or {}
                itype = added.get("type")
                if itype == "reasoning":
                    item = {"type": "reasoning", "parts": 0}
                    index = asm.open_thinking()
                elif itype == "message":
                    item = {"type": "message", "parts": []}
                    index = asm.open_text()
                elif itype == "function_call":
                    item = {"type": "function_call"}
                    index = asm.open_tool_call(
                        f"{added.get('call_id')}|{added.get('id')}",
                        str(added.get("name") or ""),
                        raw=str(added.get("arguments") or ""),
                    )
                else:
                    item, index = None, None
            elif kind == "response.reasoning_summary_part.added":
                if item is not None and item["type"] == "reasoning" and index is not None:
                    if item["parts"] > 0:
                        asm.thinking_delta("\n\n", index)  # the separator comes with the next part, not after the last
                    item["parts"] += 1
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                if item is not None and item["type"] == "reasoning" and index is not None:
                    if kind == "response.reasoning_summary_text.delta" and item["parts"] == 0:
                        item["parts"] = 1
                    asm.thinking_delta(str(event.get("delta") or ""), index)
            elif kind == "response.content_part.added":
                if item is not None and item["type"] == "message":
                    part = event.get("part") or {}
                    if part.get("type") in ("output_text", "refusal"):
                        item["parts"].append(part.get("type"))
            elif kind in ("response.output_text.delta", "response.refusal.delta"):
                if item is not None and item["type"] == "message" and index is not None:
                    if not item["parts"]:
                        item["parts"].append("output_text")  # a delta without content_part.added opens an implicit part
                    asm.text_delta(str(event.get("delta") or ""), index)
            elif kind == "response.function_call_arguments.delta":
                if item is not None and item["type"] == "function_call" and index is not None:
                    asm.tool_delta(index, str(event.get("delta") or ""))
            elif kind == "response.function_call_arguments.done":
                if item is not None and item["type"] == "function_call" and index is not None:
                    previous = asm.tool_raw(index)
                    arguments = str(event.get("arguments") or "")
                    if arguments.startswith(previous) and len(arguments) > len(previous):
                        asm.tool_delta(index, arguments[len(previous) :])
                    else:
                        asm.set_tool_raw(index, arguments)
            elif kind == "response.output_item.done":
                done = event.get("item") or {}
                self._item_done(call, done, index)
                item, index = None, None
            elif kind in ("response.completed", "response.incomplete"):
                response = event.get("response") or {}
                self._complete(call, response, model)
                call.completed = True
                return
            elif kind == "error":
                raise ProviderError(f"Error Code {event.get('code')}: {event.get('message')}")
            elif kind == "response.failed":
                response = event.get("response") or {}
                error = response.get("error")
                details = response.get("incomplete_details")
                if isinstance(error, dict) and error:
                    message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
                elif isinstance(details, dict) and details.get("reason"):
                    message = f"incomplete: {details['reason']}"
                else:
                    message = "Unknown error (no error details in response)"
                raise ProviderError(message)

    @staticmethod
    def _item_done(call: StreamCall, done: dict[str, Any], index: int | None) -> None:
        asm = call.asm
        out = call.out
        dtype = done.get("type")
        block = out.content[index] if index is not None else None
        if dtype == "reasoning" and isinstance(block, ThinkingContent):
            summary = "\n\n".join(str(s.get("text") or "") for s in done.get("summary") or [] if isinstance(s, dict))
            content = "\n\n".join(str(c.get("text") or "") for c in done.get("content") or [] if isinstance(c, dict))
            block.thinking = summary or content or block.thinking
            block.thinking_signature = json_stringify(done)
            asm.close()
        elif dtype == "message" and isinstance(block, TextContent):
            parts = done.get("content")
            if isinstance(parts, list) and parts:
                block.text = "".join(
                    str((p.get("text") if p.get("type") == "output_text" else p.get("refusal")) or "")
                    for p in parts
                    if isinstance(p, dict)
                )
            signature: dict[str, Any] = {"v": 1, "id": done.get("id")}
            if done.get("phase"):
                signature["phase"] = done["phase"]
            block.text_signature = json_stringify(signature)
            asm.close()
        elif dtype == "function_call":
            if isinstance(block, ToolCall) and index is not None:
                raw = asm.tool_raw(index)
                if not raw:
                    asm.set_tool_raw(index, str(done.get("arguments") or "{}"))
                asm.close()
            else:
                arguments = str(done.get("arguments") or "{}")
                new_index = asm.open_tool_call(
                    f"{done.get('call_id')}|{done.get('id')}", str(done.get("name") or ""), raw=arguments
                )
                asm.set_tool_raw(new_index, arguments)
                asm.close()

    @staticmethod
    def _complete(call: StreamCall, response: dict[str, Any], model: Model) -> None:
        out = call.out
        if isinstance(response.get("id"), str):
            out.response_id = response["id"]
        raw = response.get("usage")
        usage = out.usage
        if isinstance(raw, dict):
            cached = (raw.get("input_tokens_details") or {}).get("cached_tokens") or 0
            usage = Usage(
                input=(raw.get("input_tokens") or 0) - cached,
                output=raw.get("output_tokens") or 0,
                cache_read=cached,
                cache_write=0,
                total_tokens=raw.get("total_tokens") or 0,
            )
        call.asm.update_usage(usage)
        tier = response.get("service_tier") or option(call.options, "service_tier")
        multiplier = _tier_multiplier(model, tier)
        if multiplier != 1.0:
            cost = usage.cost
            cost.input *= multiplier
            cost.output *= multiplier
            cost.cache_read *= multiplier
            cost.cache_write *= multiplier
            cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
        status = response.get("status")
        reason = _status_stop_reason(status)
        details = response.get("incomplete_details")
        if status == "incomplete" and isinstance(details, dict) and details.get("reason") == "content_filter":
            call.set_stop_reason("error", "Provider stop reason: content_filter")
            return
        if reason == "error":
            call.set_stop_reason("error", f"Provider stop reason: {status}")
            return
        if reason == "stop" and call.asm.has_tool_calls():
            reason = "toolUse"
        call.set_stop_reason(reason)


stream_openai_responses = stream_function(
    OpenAIResponsesAdapter(),
    "stream_openai_responses",
    "Stream an OpenAI Responses reply (also the ``stream_simple`` entry).",
)


stream_simple_openai_responses = stream_openai_responses

__all__ = ["DESCRIPTOR", "OpenAIResponsesAdapter", "build_payload", "convert_input", "stream_openai_responses"]
