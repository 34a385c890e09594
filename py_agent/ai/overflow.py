"""Context-overflow detection (pi-ai's ``isContextOverflow``, 0.79.10 patterns).

The provider error strings (``py_agent/ai/providers/``) keep each provider's wording so these patterns match.
"""

from __future__ import annotations

import re
from typing import Any

from ._interop import get_field

__all__ = ["OVERFLOW_PATTERNS", "is_context_overflow"]

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    )
)
_NON_OVERFLOW = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
)


def is_context_overflow(message: Any, context_window: int | None = None) -> bool:
    """True if the assistant message reports (or silently shows) a context overflow."""
    stop = get_field(message, "stop_reason")
    error = get_field(message, "error_message")
    if (
        stop == "error"
        and error
        and not any(p.search(error) for p in _NON_OVERFLOW)
        and any(p.search(error) for p in OVERFLOW_PATTERNS)
    ):
        return True
    usage = get_field(message, "usage")
    if context_window and usage is not None:
        tokens = (get_field(usage, "input") or 0) + (get_field(usage, "cache_read") or 0)
        output = get_field(usage, "output") or 0
        if stop == "stop" and tokens > context_window:
            return True
        if stop == "length" and output == 0 and tokens >= context_window * 0.99:
            return True
    return False
