"""The built-in wire APIs: ``openai-completions``, ``openai-responses``, ``anthropic-messages``,
``google-generative-ai``. :func:`register_builtin_providers` puts them in the API registry
(``import py_agent.ai`` does it once; calling it again is harmless)."""

from __future__ import annotations

from ..registry import ApiProvider, register_api_provider
from ._common import ProviderStreamOptions
from .openai_completions import stream_openai_completions

SOURCE_ID = "py-agent-builtin"

__all__ = ["SOURCE_ID", "ProviderStreamOptions", "register_builtin_providers"]


def register_builtin_providers() -> None:
    """Register the four built-in APIs (idempotent: re-registering replaces the same entries)."""
    for api, function in (("openai-completions", stream_openai_completions),):
        register_api_provider(ApiProvider(api, function, function), SOURCE_ID)
