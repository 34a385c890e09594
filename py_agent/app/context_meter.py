"""The composer's context meter: how much of the model's window the next request will use.

As pi's CLI counts it (pi-coding-agent's ``getContextUsage``): the last reply's reported usage
(input, output and cache tokens: everything the provider saw and wrote) plus pi's estimate
(characters / 4) of the messages after it. The page adds its estimate of what is typed and attached
(web/ui/composer.js). Two differences, so that the figure is never "unknown" as pi's is: a reply
before the latest compaction does not count (its usage is the context before the cut), and without
a reply to count from, the system prompt and the tools' definitions are estimated too (they are in
every request, and a reply's usage includes them).

The threshold is where pi compacts: the window less pi's reserve (``DEFAULT_COMPACTION_SETTINGS``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ..ai.types import AssistantMessage, tool_json_schema
from ..session import message_to_json

__all__ = ["RESERVE_TOKENS", "context_meter"]

RESERVE_TOKENS = 16_384
"""pi 0.79.10's ``DEFAULT_COMPACTION_SETTINGS.reserveTokens``."""

_IMAGE_CHARS = 4800


def _text_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            chars += len(str(block.get("text") or ""))
        elif block.get("type") == "image":
            chars += _IMAGE_CHARS
    return chars


def estimate_tokens(message: Any) -> int:
    """pi's ``estimateTokens`` (pi-agent-core 0.79.10): characters / 4, rounded up; an image 1,200."""
    data = message_to_json(message)
    role = data.get("role")
    if role in ("user", "custom", "toolResult"):
        chars = _text_chars(data.get("content"))
    elif role == "assistant":
        chars = 0
        for block in data.get("content") or ():
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                chars += len(str(block.get("text") or ""))
            elif kind == "thinking":
                chars += len(str(block.get("thinking") or ""))
            elif kind == "toolCall":
                arguments = json.dumps(block.get("arguments"), ensure_ascii=False, separators=(",", ":"))
                chars += len(str(block.get("name") or "")) + len(arguments)
    elif role == "bashExecution":
        chars = len(str(data.get("command") or "")) + len(str(data.get("output") or ""))
    elif role in ("branchSummary", "compactionSummary"):
        chars = len(str(data.get("summary") or ""))
    else:
        return 0
    return math.ceil(chars / 4)


def _usage_tokens(message: Any) -> int:
    """pi's ``calculateContextTokens`` of a reply that counts (not failed or stopped), else 0."""
    if not isinstance(message, AssistantMessage) or message.stop_reason in ("aborted", "error"):
        return 0
    usage = message.usage
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else getattr(message, "role", None)


def _prompt_tokens(system_prompt: str, tools: Sequence[Any]) -> int:
    chars = len(system_prompt)
    for tool in tools:
        try:
            schema = tool_json_schema(getattr(tool, "parameters", None))
        except TypeError:
            schema = {}
        chars += len(str(getattr(tool, "name", ""))) + len(str(getattr(tool, "description", "")))
        chars += len(json.dumps(schema, separators=(",", ":"), default=str))
    return math.ceil(chars / 4)


def context_meter(
    messages: Sequence[Any], *, system_prompt: str, tools: Sequence[Any], context_window: int
) -> dict[str, Any]:
    """``{"tokens", "contextWindow", "threshold", "fromUsage"}`` for the composer (JSON)."""
    tokens = 0
    counted = False
    for message in reversed(messages):
        role = _role(message)
        if role == "compactionSummary":
            break  # a reply before the cut measured the context before it
        usage = _usage_tokens(message) if role == "assistant" else 0
        if usage:
            tokens += usage
            counted = True
            break
        tokens += estimate_tokens(message)
    if not counted:
        tokens = sum(estimate_tokens(message) for message in messages) + _prompt_tokens(system_prompt, tools)
    return {
        "tokens": tokens,
        "contextWindow": context_window,
        "threshold": max(context_window - RESERVE_TOKENS, 0),
        "fromUsage": counted,
    }
