"""OpenAI Chat Completions (``openai-completions``) and the OpenAI-compatible servers.

One mapping serves OpenAI, OpenRouter, Groq, Mistral's compatible endpoint, DeepSeek, xAI,
Cerebras, Ollama, LM Studio, llama.cpp and vLLM; their differences are compat flags, detected
from the provider name or base URL and overridden by ``model.compat`` (:func:`get_compat`).
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
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .content import sanitize_surrogates, tool_spec
from .driver import StreamCall, stream_function
from .errors import ProviderError, openai_style_error, parse_json_data
from .openai_shared import OpenAIRequestBuilder
from .options import mapped_level, option, reasoning_level
from .payload_cache import wire_items
from .wire_apis import OPENAI_COMPLETIONS

DESCRIPTOR = OPENAI_COMPLETIONS
API = DESCRIPTOR.id

_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ID_SANITIZE = re.compile(r"[^A-Za-z0-9_-]")


# ---------------------------------------------------------------------------------------------
# Compat flags


def detect_compat(model: Model) -> dict[str, Any]:
    """Flags detected from the provider name or base URL (as pi 0.79.10 detects them)."""
    provider = model.provider
    base = model.base_url
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base or "open.bigmodel.cn" in base
    is_together = provider == "together" or "api.together.ai" in base or "api.together.xyz" in base
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base
    is_openrouter = provider == "openrouter" or "openrouter.ai" in base
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base
    is_grok = provider == "xai" or "api.x.ai" in base
    is_deepseek = provider == "deepseek" or "deepseek.com" in base
    is_chutes = "chutes.ai" in base
    non_standard = (
        is_nvidia
        or provider == "cerebras"
        or "cerebras.ai" in base
        or is_grok
        or is_together
        or is_chutes
        or "deepseek.com" in base
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in base
    )
    openrouter_developer = is_openrouter and (model.id.startswith("anthropic/") or model.id.startswith("openai/"))
    effort_map: dict[str, str] = {}
    if (provider == "groq" or "api.groq.com" in base) and model.id == "qwen/qwen3-32b":
        effort_map = dict.fromkeys(("minimal", "low", "medium", "high", "xhigh"), "default")
    thinking_format = "openai"
    if is_zai:
        thinking_format = "zai"
    elif is_together:
        thinking_format = "together"
    elif is_openrouter:
        thinking_format = "openrouter"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": openrouter_developer or (not non_standard and not is_openrouter),
        "supportsReasoningEffort": not (is_grok or is_zai or is_moonshot or is_together or is_nvidia),
        "reasoningEffortMap": effort_map,
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens"
        if (is_chutes or is_moonshot or is_together or is_nvidia)
        else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking_format,
        "supportsStrictMode": not (is_moonshot or is_together or is_nvidia),
        "reasoningTokensIncludedInCompletion": True,
        "replayReasoningField": True,
        "openRouterRouting": None,
        "vercelGatewayRouting": None,
        "cacheControlFormat": None,
        "openRouterAnthropicCache": provider == "openrouter" and model.id.startswith("anthropic/"),
        "zaiToolStream": False,
        "chatTemplateKwargs": None,
    }


def get_compat(model: Model) -> dict[str, Any]:
    """Detected flags, each overridden by an explicitly set ``model.compat`` field."""
    compat = detect_compat(model)
    for key, value in (model.compat or {}).items():
        if value is not None:
            compat[key] = value
    return compat


# ---------------------------------------------------------------------------------------------
# Request


def normalize_tool_call_id(model: Model) -> Any:
    def normalize(id: str, _model: Model, _source: AssistantMessage) -> str:
        if "|" in id:
            return _ID_SANITIZE.sub("_", id.split("|", 1)[0])[:40]
        if model.provider == "openai":
            return id[:40]
        return id

    return normalize


def _image_url(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _has_tool_history(messages: list[Any]) -> bool:
    for message in messages:
        if isinstance(message, ToolResultMessage):
            return True
        if isinstance(message, AssistantMessage) and any(isinstance(b, ToolCall) for b in message.content):
            return True
    return False


def convert_messages(
    model: Model, context: Context, compat: Mapping[str, Any], messages: list[Any] | None = None
) -> list[dict[str, Any]]:
    if messages is None:
        messages = transform_messages(context.messages, model, normalize_tool_call_id(model))
    params = _system_message(model, context, compat)
    _convert_messages(model, compat, messages, params, (None, False))
    return params


def _system_message(model: Model, context: Context, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not context.system_prompt:
        return []
    role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
    return [{"role": role, "content": sanitize_surrogates(context.system_prompt)}]


def _convert_messages(
    model: Model,
    compat: Mapping[str, Any],
    messages: list[Any],
    params: list[dict[str, Any]],
    state: tuple[str | None, bool],
) -> tuple[str | None, bool]:
    """Append the params of transformed ``messages``; ``state`` (before them and returned after
    them): the role of the last message written, whether a tool was used (payload_cache.Convert)."""
    last_role, tool_history = state
    vision = "image" in model.input
    bridge = {"role": "assistant", "content": "I have processed the tool results."}
    index = 0
    while index < len(messages):
        message = messages[index]
        if (
            compat["requiresAssistantAfterToolResult"]
            and last_role == "toolResult"
            and isinstance(message, UserMessage)
        ):
            params.append(dict(bridge))
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                params.append({"role": "user", "content": sanitize_surrogates(message.content)})
            else:
                parts: list[dict[str, Any]] = []
                for block in message.content:
                    if isinstance(block, TextContent):
                        parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                    elif isinstance(block, ImageContent) and vision:
                        parts.append(_image_url(block))
                if not parts:
                    index += 1
                    continue
                params.append({"role": "user", "content": parts})
            last_role = "user"
        elif isinstance(message, AssistantMessage):
            converted = _convert_assistant(model, message, compat)
            if converted is not None:
                params.append(converted)
            last_role = "assistant"
        else:
            images: list[dict[str, Any]] = []
            while index < len(messages) and isinstance(messages[index], ToolResultMessage):
                result = messages[index]
                assert isinstance(result, ToolResultMessage)
                text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                entry: dict[str, Any] = {
                    "role": "tool",
                    "content": sanitize_surrogates(text if text else "(see attached image)"),
                    "tool_call_id": result.tool_call_id,
                }
                if compat["requiresToolResultName"] and result.tool_name:
                    entry["name"] = result.tool_name
                params.append(entry)
                if vision:
                    images.extend(_image_url(b) for b in result.content if isinstance(b, ImageContent))
                index += 1
            index -= 1
            if images:
                if compat["requiresAssistantAfterToolResult"]:
                    params.append(dict(bridge))
                params.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
        index += 1
    return last_role, tool_history or _has_tool_history(messages)


def _convert_assistant(model: Model, message: AssistantMessage, compat: Mapping[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant", "content": "" if compat["requiresAssistantAfterToolResult"] else None}
    text = "".join(
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent) and b.text.strip()
    )
    thinking_blocks = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    if text:
        out["content"] = text
    if thinking_blocks:
        if compat["requiresThinkingAsText"]:
            thinking = "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking_blocks)
            out["content"] = f"{thinking}\n\n{text}" if text else thinking
        elif compat["replayReasoningField"]:
            signature = thinking_blocks[0].thinking_signature
            if model.provider == "opencode-go" and signature == "reasoning":
                signature = "reasoning_content"
            if signature and _FIELD_NAME.match(signature):
                out[signature] = "\n".join(sanitize_surrogates(b.thinking) for b in thinking_blocks)
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json_stringify(call.arguments)},
            }
            for call in calls
        ]
        details = []
        for call in calls:
            if call.thought_signature:
                try:
                    detail = json.loads(call.thought_signature)
                except ValueError:
                    continue
                if detail:
                    details.append(detail)
        if details:
            out["reasoning_details"] = details
    if compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning and "reasoning_content" not in out:
        out["reasoning_content"] = ""
    content = out["content"]
    if not content and not calls:
        return None
    return out


def _with_cache_control(message: dict[str, Any], cache_control: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ``message`` with its last text marked (``None`` when it has none): the message
    may be the cached one of earlier requests (payload_cache.py), never changed in place."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": cache_control}]}
    if isinstance(content, list):
        for index in range(len(content) - 1, -1, -1):
            part = content[index]
            if isinstance(part, dict) and part.get("type") == "text":
                parts = list(content)
                parts[index] = {**part, "cache_control": cache_control}
                return {**message, "content": parts}
    return None


def _apply_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, cache_control: dict[str, Any], full: bool
) -> None:
    if full:
        for index, message in enumerate(messages):
            if message["role"] in ("system", "developer"):
                marked = _with_cache_control(message, cache_control)
                if marked is not None:
                    messages[index] = marked
                break
        if tools:
            tools[-1]["cache_control"] = cache_control
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] in ("user", "assistant"):
            marked = _with_cache_control(messages[index], cache_control)
            if marked is not None:
                messages[index] = marked
                return


def build_payload(model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
    compat = get_compat(model)
    retention = options.cache_retention or "short"
    messages, (_, tool_history) = wire_items(
        API,
        model,
        context.messages,
        normalize_tool_call_id(model),
        partial(_convert_messages, model, compat),
        _system_message(model, context, compat),
        (None, False),
        use_cache=options.on_payload is None,
    )
    params: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    if options.session_id and retention != "none" and "api.openai.com" in model.base_url:
        params["prompt_cache_key"] = options.session_id[:64]
    if compat["supportsUsageInStreaming"] is not False:
        params["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        params["store"] = False
    if options.max_tokens:
        params[compat["maxTokensField"]] = options.max_tokens
    if options.temperature is not None:
        params["temperature"] = options.temperature
    tools: list[dict[str, Any]] | None = None
    if context.tools:
        tools = []
        for tool in context.tools:
            name, description, schema = tool_spec(tool)
            function: dict[str, Any] = {"name": name, "description": description, "parameters": schema}
            if compat["supportsStrictMode"] is not False:
                function["strict"] = False
            tools.append({"type": "function", "function": function})
        params["tools"] = tools
        if compat["zaiToolStream"]:
            params["tool_stream"] = True
    elif tool_history:
        params["tools"] = []
    if retention != "none":
        if compat["cacheControlFormat"] == "anthropic":
            _apply_cache_control(messages, tools, {"type": "ephemeral"}, full=True)
        elif compat["openRouterAnthropicCache"]:
            _apply_cache_control(messages, None, {"type": "ephemeral"}, full=False)
    tool_choice = option(options, "tool_choice")
    if tool_choice:
        params["tool_choice"] = tool_choice
    _apply_thinking(params, model, options, compat)
    if compat.get("openRouterRouting"):
        params["provider"] = compat["openRouterRouting"]
    routing = compat.get("vercelGatewayRouting")
    if "ai-gateway.vercel.sh" in model.base_url and isinstance(routing, dict):
        gateway = {key: routing[key] for key in ("only", "order") if routing.get(key)}
        if gateway:
            params["providerOptions"] = {"gateway": gateway}
    return params


def _apply_thinking(
    params: dict[str, Any], model: Model, options: SimpleStreamOptions, compat: Mapping[str, Any]
) -> None:
    if not model.reasoning:
        return
    effort = reasoning_level(model, options)
    level_map = model.thinking_level_map or {}
    fmt = compat["thinkingFormat"]
    supports_effort = compat["supportsReasoningEffort"]
    if fmt == "zai":
        params["thinking"] = {"type": "enabled" if effort else "disabled"}
        if effort and supports_effort:
            value = mapped_level(model, effort)
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "qwen":
        params["enable_thinking"] = bool(effort)
    elif fmt == "qwen-chat-template":
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "chat-template":
        kwargs: dict[str, Any] = {}
        for key, value in (compat.get("chatTemplateKwargs") or {}).items():
            if isinstance(value, dict):
                if not effort and value.get("omitWhenOff"):
                    continue
                if value.get("$var") == "thinking.enabled":
                    kwargs[key] = bool(effort)
                    continue
                mapped = level_map.get(effort) if effort else level_map.get("off")
                resolved = effort if mapped is None and (effort or "off" not in level_map) else mapped
                if resolved is not None:
                    kwargs[key] = resolved
            else:
                kwargs[key] = value
        if kwargs:
            params["chat_template_kwargs"] = kwargs
    elif fmt == "deepseek":
        if effort:
            params["thinking"] = {"type": "enabled"}
        elif not ("off" in level_map and level_map["off"] is None):
            params["thinking"] = {"type": "disabled"}
        if effort and supports_effort:
            params["reasoning_effort"] = mapped_level(model, effort)
    elif fmt == "openrouter":
        if effort:
            params["reasoning"] = {"effort": mapped_level(model, effort)}
        elif not ("off" in level_map and level_map["off"] is None):
            params["reasoning"] = {"effort": level_map.get("off") or "none"}
    elif fmt == "together":
        params["reasoning"] = {"enabled": bool(effort)}
        if effort and supports_effort:
            params["reasoning_effort"] = mapped_level(model, effort)
    elif fmt == "string-thinking":
        if effort:
            params["thinking"] = mapped_level(model, effort)
        elif not ("off" in level_map and level_map["off"] is None):
            params["thinking"] = level_map.get("off") or "none"
    elif fmt == "ant-ling":
        value = level_map.get(effort) if effort else None
        if isinstance(value, str):
            params["reasoning"] = {"effort": value}
    elif effort and supports_effort:
        effort_map = compat.get("reasoningEffortMap") or {}
        params["reasoning_effort"] = effort_map.get(effort) or mapped_level(model, effort)
    elif not effort and supports_effort:
        off = level_map.get("off")
        if isinstance(off, str):
            params["reasoning_effort"] = off


# ---------------------------------------------------------------------------------------------
# Stream


def parse_usage(raw: Mapping[str, Any], model: Model, compat: Mapping[str, Any]) -> Usage:
    prompt = raw.get("prompt_tokens") or 0
    details = raw.get("prompt_tokens_details") or {}
    cache_read = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens")
    cache_read = cache_read or 0
    cache_write = details.get("cache_write_tokens") or 0
    output = raw.get("completion_tokens") or 0
    if not compat["reasoningTokensIncludedInCompletion"]:
        output += (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    input_tokens = max(0, prompt - cache_read - cache_write)
    return Usage(
        input=input_tokens,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        total_tokens=input_tokens + output + cache_read + cache_write,
    )


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def _error_chunk_message(error: Any) -> str:
    if isinstance(error, dict):
        message = error.get("message")
        text = message if isinstance(message, str) and message else json_stringify(error)
        metadata = error.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        if raw:
            text = f"{text}\n{raw if isinstance(raw, str) else json_stringify(raw)}"
        return text
    return error if isinstance(error, str) else json_stringify(error)


class OpenAICompletionsAdapter(OpenAIRequestBuilder):
    descriptor = DESCRIPTOR
    api: ClassVar[str] = API
    completion_marker: ClassVar[str] = "finish_reason"

    def build_payload(self, model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
        return build_payload(model, context, options)

    def format_http_error(self, status: int, status_text: str, headers: Mapping[str, str], text: str) -> str:
        return openai_style_error(status, text)

    async def process(self, call: StreamCall) -> None:
        model = call.model
        compat = get_compat(model)
        asm = call.asm
        out = call.out
        by_index: dict[Any, int] = {}
        by_id: dict[str, int] = {}
        pending_details: dict[str, str] = {}
        async for sse in call.events():
            data = sse.data
            if data[:6] == "[DONE]":
                call.completed = True
                return
            chunk = parse_json_data(data)
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise ProviderError(_error_chunk_message(chunk["error"]))
            if out.response_id is None and isinstance(chunk.get("id"), str) and chunk["id"]:
                out.response_id = chunk["id"]
            chunk_model = chunk.get("model")
            if isinstance(chunk_model, str) and chunk_model and chunk_model != model.id and out.response_model is None:
                out.response_model = chunk_model
            usage = chunk.get("usage")
            if isinstance(usage, dict):
                asm.update_usage(parse_usage(usage, model, compat))
            choices = chunk.get("choices")
            choice = choices[0] if isinstance(choices, list) and choices else None
            if not isinstance(choice, dict):
                continue
            if not isinstance(usage, dict) and isinstance(choice.get("usage"), dict):
                asm.update_usage(parse_usage(choice["usage"], model, compat))
            finish = choice.get("finish_reason")
            if finish:
                reason, message = map_finish_reason(str(finish))
                call.set_stop_reason(reason, message)
                call.completed = True
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            content = delta.get("content")
            if isinstance(content, list):  # some servers stream content as a list of text parts
                content = "".join(
                    part.get("text", "")
                    for part in content
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                )
            if isinstance(content, str) and content:
                asm.text_delta(content)
            for field in _REASONING_FIELDS:
                value = delta.get(field)
                if isinstance(value, str) and value:
                    signature = (
                        "reasoning_content" if model.provider == "opencode-go" and field == "reasoning" else field
                    )
                    asm.thinking_delta(value, signature=signature)
                    break
            tool_calls = delta.get("tool_calls")
            if isinstance(tool_calls, list):
                for entry in tool_calls:
                    if isinstance(entry, dict):
                        self._tool_call(call, entry, by_index, by_id, pending_details)
            details = delta.get("reasoning_details")
            if isinstance(details, list):
                for detail in details:
                    if (
                        isinstance(detail, dict)
                        and detail.get("type") == "reasoning.encrypted"
                        and isinstance(detail.get("id"), str)
                        and detail["id"]
                        and isinstance(detail.get("data"), str)
                        and detail["data"]
                    ):
                        serialized = json_stringify(detail)
                        index = by_id.get(detail["id"])
                        if index is not None:
                            asm.tool_block(index).thought_signature = serialized
                        else:
                            pending_details[detail["id"]] = serialized

    @staticmethod
    def _tool_call(
        call: StreamCall,
        entry: dict[str, Any],
        by_index: dict[Any, int],
        by_id: dict[str, int],
        pending_details: dict[str, str],
    ) -> None:
        asm = call.asm
        stream_index = entry.get("index")
        if not isinstance(stream_index, int) or isinstance(stream_index, bool):
            stream_index = None
        call_id = entry.get("id") if isinstance(entry.get("id"), str) and entry.get("id") else None
        raw_function = entry.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else None
        index: int | None = None
        if stream_index is not None:
            index = by_index.get(stream_index)
        if index is None and call_id is not None:
            index = by_id.get(call_id)
        if index is None and stream_index is None and call_id is None:
            current = asm.current
            if isinstance(current, ToolCall):
                index = asm.current_index
        if index is None:
            index = asm.open_tool_call(call_id or "", name or "")
            if stream_index is not None:
                by_index[stream_index] = index
        block = asm.tool_block(index)
        if call_id is not None:
            if not block.id:
                block.id = call_id
            by_id[call_id] = index
        if name and not block.name:
            block.name = name
        if block.id and block.id in pending_details:
            block.thought_signature = pending_details.pop(block.id)
        arguments = function.get("arguments")
        asm.tool_delta(index, arguments if isinstance(arguments, str) else "")


stream_openai_completions = stream_function(
    OpenAICompletionsAdapter(),
    "stream_openai_completions",
    "Stream a Chat Completions reply (also the ``stream_simple`` entry: ``reasoning`` is mapped).",
)


stream_simple_openai_completions = stream_openai_completions

__all__ = [
    "DESCRIPTOR",
    "OpenAICompletionsAdapter",
    "build_payload",
    "convert_messages",
    "detect_compat",
    "get_compat",
    "parse_usage",
    "stream_openai_completions",
    "stream_simple_openai_completions",
]
