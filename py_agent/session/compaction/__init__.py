"""Compaction, as pi-agent-core 0.79.10 does it (``dist/harness/compaction/``): token estimates,
when to compact, where to cut, and the summary that replaces what is cut.

It lives in the session layer because it reads session entries and asks a model (``ai``) for the
summary; nothing here touches storage or the page (the app drives it: ``py_agent/app/chat.py``).
"""

from .tokens import (
    DEFAULT_COMPACTION_SETTINGS,
    ESTIMATED_IMAGE_CHARS,
    CompactionSettings,
    ContextUsageEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "ESTIMATED_IMAGE_CHARS",
    "CompactionSettings",
    "ContextUsageEstimate",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_tokens",
    "get_last_assistant_usage",
    "should_compact",
]
