"""The built-in wire APIs: ``openai-completions``, ``openai-responses``, ``anthropic-messages``,
``google-generative-ai``.

:func:`register_builtin_providers` puts them in the API registry; ``import py_agent.ai`` does it
once and calling it again is harmless. Each stream function serves as both ``stream`` and
``stream_simple`` (the unified ``reasoning`` option is mapped per API). Provider-specific extras
(``tool_choice``, ``reasoning_summary``, ``service_tier``) go in :class:`ProviderStreamOptions`.
"""

from __future__ import annotations

from ..registry import ApiProvider, register_api_provider
from ._common import ProviderStreamOptions, sanitize_surrogates, short_hash
from .anthropic import stream_anthropic
from .google import stream_google
from .openai_completions import stream_openai_completions
from .openai_responses import stream_openai_responses

SOURCE_ID = "py-agent-builtin"

BUILTIN_STREAM_FUNCTIONS = {
    "openai-completions": stream_openai_completions,
    "openai-responses": stream_openai_responses,
    "anthropic-messages": stream_anthropic,
    "google-generative-ai": stream_google,
}

__all__ = [
    "BUILTIN_STREAM_FUNCTIONS",
    "SOURCE_ID",
    "ProviderStreamOptions",
    "register_builtin_providers",
    "sanitize_surrogates",
    "short_hash",
    "stream_anthropic",
    "stream_google",
    "stream_openai_completions",
    "stream_openai_responses",
]


def register_builtin_providers() -> None:
    """Register the four built-in APIs (idempotent: re-registering replaces the same entries)."""
    for api, function in BUILTIN_STREAM_FUNCTIONS.items():
        register_api_provider(ApiProvider(api, function, function), SOURCE_ID)
