"""Token figures for compaction: pi-agent-core 0.79.10's estimate (``dist/harness/compaction/compaction.js``).

The estimate is pi's conservative heuristic: characters / 4, rounded up, an image counted as 4,800
characters. Characters are JavaScript's (UTF-16 code units, so an emoji counts 2), so the same
message gives the same figure here and in pi. Messages may be pydantic models or pi's JSON dicts
(read through ``get_field``, docs/port-decisions.md #20).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...ai._interop import get_field
from .._json import JsonError, stringify
from ..entries import Entry, MessageEntry

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "ESTIMATED_IMAGE_CHARS",
    "CompactionSettings",
    "ContextUsageEstimate",
    "calculate_context_tokens",
    "content_blocks",
    "estimate_context_tokens",
    "estimate_tokens",
    "get_last_assistant_usage",
    "js_length",
    "safe_json_stringify",
    "should_compact",
]

ESTIMATED_IMAGE_CHARS = 4800


@dataclass(frozen=True)
class CompactionSettings:
    """pi's ``CompactionSettings``: compact when the context passes ``context_window - reserve_tokens``,
    keeping about ``keep_recent_tokens`` of the latest messages."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


DEFAULT_COMPACTION_SETTINGS = CompactionSettings()


@dataclass(frozen=True)
class ContextUsageEstimate:
    """What :func:`estimate_context_tokens` returns (pi's field names in snake_case)."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (a character beyond U+FFFF counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_MISSING: Any = object()


def safe_json_stringify(value: Any) -> str:
    """pi's ``safeJsonStringify``: ``JSON.stringify(value)``, ``"undefined"`` for a missing value,
    ``"[unserializable]"`` when it cannot be written."""
    if value is _MISSING:
        return "undefined"
    try:
        return stringify(value)
    except JsonError:
        return "[unserializable]"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content_blocks(content):
        kind = get_field(block, "type")
        if kind == "text":
            chars += js_length(_text(get_field(block, "text")))
        elif kind == "image":
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def _arguments(block: Any) -> Any:
    if isinstance(block, Mapping):
        return block.get("arguments", _MISSING)
    return getattr(block, "arguments", _MISSING)


def content_blocks(content: Any) -> Sequence[Any]:
    """A message's content blocks (none when ``content`` is a string or not a list)."""
    return content if isinstance(content, Sequence) and not isinstance(content, str) else ()


def _ceil4(chars: int) -> int:
    return -(-chars // 4)


def estimate_tokens(message: Any) -> int:
    """pi's ``estimateTokens``: one message's tokens as characters / 4, rounded up (user, assistant,
    toolResult, custom, bashExecution, branchSummary and compactionSummary roles; others 0)."""
    role = get_field(message, "role")
    if role in ("user", "custom", "toolResult"):
        return _ceil4(_content_chars(get_field(message, "content")))
    if role == "assistant":
        chars = 0
        for block in content_blocks(get_field(message, "content")):
            kind = get_field(block, "type")
            if kind == "text":
                chars += js_length(_text(get_field(block, "text")))
            elif kind == "thinking":
                chars += js_length(_text(get_field(block, "thinking")))
            elif kind == "toolCall":
                chars += js_length(_text(get_field(block, "name")))
                chars += js_length(safe_json_stringify(_arguments(block)))
        return _ceil4(chars)
    if role == "bashExecution":
        return _ceil4(js_length(_text(get_field(message, "command"))) + js_length(_text(get_field(message, "output"))))
    if role in ("branchSummary", "compactionSummary"):
        return _ceil4(js_length(_text(get_field(message, "summary"))))
    return 0


def calculate_context_tokens(usage: Any) -> int:
    """pi's ``calculateContextTokens``: the usage's ``totalTokens``, or the sum of its parts when that is 0."""
    total = get_field(usage, "total_tokens")
    if total:
        return int(total)
    parts = (get_field(usage, name) or 0 for name in ("input", "output", "cache_read", "cache_write"))
    return int(sum(parts))


def _assistant_usage(message: Any) -> Any:
    if get_field(message, "role") != "assistant":
        return None
    if get_field(message, "stop_reason") in ("aborted", "error"):
        return None
    return get_field(message, "usage")


def get_last_assistant_usage(entries: Iterable[Entry]) -> Any:
    """pi's ``getLastAssistantUsage``: the usage of the last assistant message among ``entries`` that
    was not aborted and did not fail; ``None`` when there is none."""
    for entry in reversed(list(entries)):
        if isinstance(entry, MessageEntry):
            usage = _assistant_usage(entry.message)
            if usage is not None:
                return usage
    return None


def estimate_context_tokens(messages: Sequence[Any]) -> ContextUsageEstimate:
    """pi's ``estimateContextTokens``: the last usable assistant usage plus the estimate of every
    message after it; the estimate of all messages when no assistant reported usage."""
    for index in range(len(messages) - 1, -1, -1):
        usage = _assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(estimate_tokens(message) for message in messages[index + 1 :])
            return ContextUsageEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(message) for message in messages)
    return ContextUsageEstimate(estimated, 0, estimated, None)


def should_compact(context_tokens: float, context_window: float, settings: CompactionSettings | None = None) -> bool:
    """pi's ``shouldCompact``: enabled, and ``context_tokens > context_window - reserve_tokens``."""
    settings = settings or DEFAULT_COMPACTION_SETTINGS
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens
