"""Google Generative AI / Gemini (``google-generative-ai``), mapped as pi 0.79.10 does.

The key travels in the ``x-goog-api-key`` header, never in the URL.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

from .._util import json_stringify
from ..transform import NormalizeToolCallId, transform_messages
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
    now_ms,
)
from .content import sanitize_surrogates, tool_spec
from .driver import BuiltRequest, StreamCall, stream_function
from .errors import ProviderError, parse_json_data, truncate_body, try_json
from .headers import join_url, merge_headers
from .options import option, reasoning_level
from .payload_cache import wire_items
from .wire_apis import GOOGLE_GENERATIVE_AI

DESCRIPTOR = GOOGLE_GENERATIVE_AI
API = DESCRIPTOR.id
SKIP_SIGNATURE = "skip_thought_signature_validator"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_ID_SANITIZE = re.compile(r"[^A-Za-z0-9_-]")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_tool_call_counter = itertools.count(1)


def requires_tool_call_id(model_id: str) -> bool:
    return model_id.startswith("claude-") or model_id.startswith("gpt-oss-")


def _gemini_major(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def _is_gemini3(model_id: str) -> bool:
    major = _gemini_major(model_id)
    return major is not None and major >= 3


def _multimodal_function_response(model_id: str) -> bool:
    major = _gemini_major(model_id)
    return major is None or major >= 3


def _valid_signature(signature: str | None) -> bool:
    return bool(signature) and len(signature or "") % 4 == 0 and _BASE64.match(signature or "") is not None


def _inline(block: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def _normalizer(model: Model) -> NormalizeToolCallId:
    def normalize(id: str, _model: Model, _source: AssistantMessage) -> str:
        return _ID_SANITIZE.sub("_", id)[:64] if requires_tool_call_id(model.id) else id

    return normalize


def convert_contents(model: Model, context: Context) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    _convert_messages(model, transform_messages(context.messages, model, _normalizer(model)), contents, None)
    return contents


def _convert_messages(model: Model, messages: list[Any], contents: list[dict[str, Any]], state: None) -> None:
    """Append the contents of transformed ``messages`` (payload_cache.Convert: no state; a tool
    result joins the function responses of the last content, which a cut never leaves last)."""
    vision = "image" in model.input
    include_id = requires_tool_call_id(model.id)
    gemini3 = _is_gemini3(model.id)
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(message.content)}]})
                continue
            parts: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    parts.append({"text": sanitize_surrogates(block.text)})
                elif isinstance(block, ImageContent) and vision:
                    parts.append(_inline(block))
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif isinstance(message, AssistantMessage):
            same = message.provider == model.provider and message.model == model.id
            parts = []
            for ablock in message.content:
                if isinstance(ablock, TextContent):
                    if not ablock.text.strip():
                        continue
                    part: dict[str, Any] = {"text": sanitize_surrogates(ablock.text)}
                    if same and _valid_signature(ablock.text_signature):
                        part["thoughtSignature"] = ablock.text_signature
                    parts.append(part)
                elif isinstance(ablock, ThinkingContent):
                    if not ablock.thinking.strip():
                        continue
                    if same:
                        part = {"thought": True, "text": sanitize_surrogates(ablock.thinking)}
                        if _valid_signature(ablock.thinking_signature):
                            part["thoughtSignature"] = ablock.thinking_signature
                    else:
                        part = {"text": sanitize_surrogates(ablock.thinking)}
                    parts.append(part)
                elif isinstance(ablock, ToolCall):
                    function_call: dict[str, Any] = {"name": ablock.name, "args": ablock.arguments or {}}
                    if include_id:
                        function_call["id"] = ablock.id
                    part = {"functionCall": function_call}
                    if same and _valid_signature(ablock.thought_signature):
                        part["thoughtSignature"] = ablock.thought_signature
                    elif gemini3:
                        part["thoughtSignature"] = SKIP_SIGNATURE
                    parts.append(part)
            if parts:
                contents.append({"role": "model", "parts": parts})
        else:
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = [b for b in message.content if isinstance(b, ImageContent)] if vision else []
            value = sanitize_surrogates(text) if text else ("(see attached image)" if images else "")
            response: dict[str, Any] = {
                "name": message.tool_name,
                "response": {"error": value} if message.is_error else {"output": value},
            }
            nested = bool(images) and _multimodal_function_response(model.id)
            if nested:
                response["parts"] = [_inline(b) for b in images]
            if include_id:
                response["id"] = message.tool_call_id
            part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images and not nested:
                contents.append(
                    {"role": "user", "parts": [{"text": "Tool result image:"}, *[_inline(b) for b in images]]}
                )


def _thinking_level(model_id: str, effort: str) -> str:
    lowered = model_id.lower()
    if re.search(r"gemini-3(?:\.\d+)?-pro", lowered):
        return "LOW" if effort in ("minimal", "low") else "HIGH"
    if re.search(r"gemma-?4", lowered):
        return "MINIMAL" if effort in ("minimal", "low") else "HIGH"
    return {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM"}.get(effort, "HIGH")


def _uses_thinking_level(model_id: str) -> bool:
    lowered = model_id.lower()
    return bool(
        re.search(r"gemini-3(?:\.\d+)?-(pro|flash)", lowered)
        or lowered in ("gemini-flash-latest", "gemini-flash-lite-latest")
        or re.search(r"gemma-?4", lowered)
    )


def _budget(model: Model, effort: str, options: SimpleStreamOptions) -> int:
    custom = options.thinking_budgets
    if custom is not None:
        values = custom if isinstance(custom, Mapping) else custom.model_dump(by_alias=False)
        if values.get(effort) is not None:
            return int(values[effort])
    if "2.5-pro" in model.id:
        return {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}[effort]
    if "2.5-flash-lite" in model.id:
        return {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}[effort]
    if "2.5-flash" in model.id:
        return {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}[effort]
    return -1


_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "any": "ANY"}


def build_payload(model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
    contents, _ = wire_items(
        API,
        model,
        context.messages,
        _normalizer(model),
        partial(_convert_messages, model),
        [],
        None,
        use_cache=options.on_payload is None,
    )
    params: dict[str, Any] = {"contents": contents}
    if context.system_prompt:
        params["systemInstruction"] = {"role": "user", "parts": [{"text": sanitize_surrogates(context.system_prompt)}]}
    if context.tools:
        declarations = []
        for tool in context.tools:
            name, description, schema = tool_spec(tool)
            declarations.append({"name": name, "description": description, "parametersJsonSchema": schema})
        params["tools"] = [{"functionDeclarations": declarations}]
        tool_choice = option(options, "tool_choice")
        if tool_choice:
            mode = _TOOL_MODES.get(str(tool_choice).lower(), "AUTO")
            params["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    if options.max_tokens:
        generation["maxOutputTokens"] = options.max_tokens
    effort = reasoning_level(model, options)
    if effort is not None:
        effort = "high" if effort == "xhigh" else effort
        thinking: dict[str, Any] = {"includeThoughts": True}
        if _uses_thinking_level(model.id):
            thinking["thinkingLevel"] = _thinking_level(model.id, effort)
        else:
            thinking["thinkingBudget"] = _budget(model, effort, options)
        generation["thinkingConfig"] = thinking
    if generation:
        params["generationConfig"] = generation
    return params


def build_headers(model: Model, options: SimpleStreamOptions, api_key: str | None) -> dict[str, str]:
    defaults: dict[str, str | None] = {"Content-Type": "application/json"}
    if api_key:
        defaults["x-goog-api-key"] = api_key
    return merge_headers(defaults, model.headers, options.headers)


def model_path(model_id: str) -> str:
    name = model_id if model_id.startswith(("models/", "tunedModels/")) else f"models/{model_id}"
    return DESCRIPTOR.request_path.format(model=name)


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    if reason == "STOP":
        return "stop", None
    if reason == "MAX_TOKENS":
        return "length", None
    return "error", f"Provider stop reason: {reason}"


class GoogleAdapter:
    api: ClassVar[str] = API
    completion_marker: ClassVar[str] = "finishReason"

    def build_request(
        self, model: Model, context: Context, options: SimpleStreamOptions, api_key: str | None
    ) -> BuiltRequest:
        return BuiltRequest(
            url=join_url(model.base_url, model_path(model.id)),
            headers=build_headers(model, options, api_key),
            payload=build_payload(model, context, options),
        )

    def format_http_error(self, status: int, status_text: str, headers: Mapping[str, str], text: str) -> str:
        if "json" in headers.get("content-type", ""):
            body = try_json(text)
            if body is not None:
                return json_stringify(body)
        return json_stringify({"error": {"message": truncate_body(text), "code": status, "status": status_text}})

    async def process(self, call: StreamCall) -> None:
        asm = call.asm
        out = call.out
        async for sse in call.events():
            chunk = parse_json_data(sse.data)
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise ProviderError(json_stringify({"error": chunk["error"]}))
            if out.response_id is None and isinstance(chunk.get("responseId"), str) and chunk["responseId"]:
                out.response_id = chunk["responseId"]
            candidates = chunk.get("candidates")
            candidate = candidates[0] if isinstance(candidates, list) and candidates else None
            if isinstance(candidate, dict):
                content = candidate.get("content") or {}
                for part in content.get("parts") or []:
                    if isinstance(part, dict):
                        self._part(call, part)
            usage = chunk.get("usageMetadata")
            if isinstance(usage, dict):
                cached = usage.get("cachedContentTokenCount") or 0
                asm.update_usage(
                    Usage(
                        input=(usage.get("promptTokenCount") or 0) - cached,
                        output=(usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0),
                        cache_read=cached,
                        cache_write=0,
                        total_tokens=usage.get("totalTokenCount") or 0,
                    )
                )
            if isinstance(candidate, dict) and candidate.get("finishReason"):
                reason, message = map_finish_reason(str(candidate["finishReason"]))
                if asm.has_tool_calls():
                    reason, message = "toolUse", None
                call.set_stop_reason(reason, message)
                call.completed = True
            feedback = chunk.get("promptFeedback")
            if not candidates and isinstance(feedback, dict) and feedback.get("blockReason"):
                raise ProviderError(f"Prompt blocked: {feedback['blockReason']}")

    @staticmethod
    def _part(call: StreamCall, part: dict[str, Any]) -> None:
        asm = call.asm
        signature = part.get("thoughtSignature") if isinstance(part.get("thoughtSignature"), str) else None
        text = part.get("text")
        if isinstance(text, str) and (text or signature):  # an empty unsigned part opens no block
            current = asm.current
            if part.get("thought") is True:
                if not isinstance(current, ThinkingContent):
                    asm.open_thinking()
                block = asm.current
                assert isinstance(block, ThinkingContent)
                if signature:
                    block.thinking_signature = signature
                asm.thinking_delta(text)
            else:
                if not isinstance(current, TextContent):
                    asm.open_text()
                block_t = asm.current
                assert isinstance(block_t, TextContent)
                if signature:
                    block_t.text_signature = signature
                asm.text_delta(text)
        function_call = part.get("functionCall")
        if isinstance(function_call, dict):
            asm.close()
            name = str(function_call.get("name") or "")
            provided = function_call.get("id")
            used = any(isinstance(b, ToolCall) and b.id == provided for b in call.out.content)
            call_id = f"{name}_{now_ms()}_{next(_tool_call_counter)}" if not provided or used else str(provided)
            args = function_call.get("args") if isinstance(function_call.get("args"), dict) else {}
            index = asm.open_tool_call(call_id, name, args, thought_signature=signature)
            asm.tool_delta(index, json_stringify(args))
            asm.close()


stream_google = stream_function(
    GoogleAdapter(), "stream_google", "Stream a Gemini reply (also the ``stream_simple`` entry)."
)


stream_simple_google = stream_google

__all__ = ["DESCRIPTOR", "GoogleAdapter", "build_payload", "convert_contents", "stream_google"]
