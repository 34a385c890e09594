"""The web app's policy for failing providers: how often and how long it retries, what
the user is told meanwhile, and the stall (idle) timeout setting.

- Retries: the library retries connection errors, 408/409/429 and 5xx before any body byte
  (``py_agent.ai.providers.retry.send_with_retries``). The app allows :data:`MAX_RETRIES`
  retries and waits at most :data:`MAX_RETRY_DELAY_MS` for a server-requested delay (a longer
  ``Retry-After`` fails at once, with that reason); each retry is shown in the page as it happens
  (the ``retry`` event, see ``web/ui/reliability.js``).
- Stalls: a reply that sends no byte for the idle timeout (setting ``idleTimeoutMs``, default
  :data:`DEFAULT_IDLE_TIMEOUT_MS`; ``0`` turns it off) ends with ``Stream stalled: ...``; the same
  limit applies to waiting for the response headers.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..ai.types import RetryInfo, SimpleStreamOptions

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_MS",
    "MAX_IDLE_TIMEOUT_MS",
    "MAX_RETRIES",
    "MAX_RETRY_DELAY_MS",
    "MIN_IDLE_TIMEOUT_MS",
    "idle_timeout_setting",
    "retry_notice",
    "with_retry_policy",
]

MAX_RETRIES = 3
MAX_RETRY_DELAY_MS = 60_000
DEFAULT_IDLE_TIMEOUT_MS = 120_000
MIN_IDLE_TIMEOUT_MS = 1_000
MAX_IDLE_TIMEOUT_MS = 3_600_000


def with_retry_policy(options: SimpleStreamOptions, on_retry: Any) -> SimpleStreamOptions:
    """``options`` with the app's retry cap and hook (values a caller set are kept)."""
    changes: dict[str, Any] = {}
    if options.max_retries is None:
        changes["max_retries"] = MAX_RETRIES
    if options.max_retry_delay_ms is None:
        changes["max_retry_delay_ms"] = MAX_RETRY_DELAY_MS
    if options.on_retry is None and on_retry is not None:
        changes["on_retry"] = on_retry
    return replace(options, **changes) if changes else options


def _seconds(ms: int) -> str:
    seconds = ms / 1000
    if seconds < 1:
        return "under a second"
    whole = math.ceil(seconds)
    return f"{whole} second{'s' if whole != 1 else ''}"


def retry_notice(info: RetryInfo, provider_label: str) -> str:
    """What the page shows while a request waits to be sent again."""
    status = info.status
    if status == 429:
        why = f"{provider_label} is limiting requests (429 Too Many Requests)"
    elif status is not None and status >= 500:
        why = f"{provider_label} had a server error ({status})"
    elif status is not None:
        why = f"{provider_label} answered {status}"
    elif "timed out" in info.error.lower():
        why = f"{provider_label} did not answer in time"
    else:
        why = f"The connection to {provider_label} failed"
    asked = " as the server asked" if info.server_delay else ""
    return f"{why}. Retrying in {_seconds(info.delay_ms)}{asked} (attempt {info.attempt} of {info.max_retries})…"


def idle_timeout_setting(value: Any) -> int:
    """A valid ``idleTimeoutMs`` setting (milliseconds; 0 = no stall timeout) or ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("The stall timeout must be a number of milliseconds.")
    ms = int(value)
    if ms != 0 and not MIN_IDLE_TIMEOUT_MS <= ms <= MAX_IDLE_TIMEOUT_MS:
        raise ValueError(
            f"The stall timeout must be between {MIN_IDLE_TIMEOUT_MS // 1000} s and "
            f"{MAX_IDLE_TIMEOUT_MS // 60_000} minutes (or 0 for none)."
        )
    return ms
