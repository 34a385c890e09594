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

from ..ai._interop import get_field
from ..ai.types import tool_json_schema
from ..session.compaction import DEFAULT_COMPACTION_SETTINGS, estimate_context_tokens, estimate_tokens

__all__ = ["RESERVE_TOKENS", "context_meter"]

RESERVE_TOKENS = DEFAULT_COMPACTION_SETTINGS.reserve_tokens
"""pi 0.79.10's reserve: the context may grow to the window less this before pi compacts."""


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
    estimate = estimate_context_tokens(messages)
    last = estimate.last_usage_index
    # A reply before the latest cut measured the context before it.
    counted = last is not None and not any(get_field(m, "role") == "compactionSummary" for m in messages[last + 1 :])
    tokens = estimate.tokens
    if not counted:
        tokens = sum(estimate_tokens(message) for message in messages) + _prompt_tokens(system_prompt, tools)
    return {
        "tokens": tokens,
        "contextWindow": context_window,
        "threshold": max(context_window - RESERVE_TOKENS, 0),
        "fromUsage": counted,
    }
