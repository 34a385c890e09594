"""The built-in wire APIs: ``openai-completions``, ``openai-responses``, ``anthropic-messages``,
``google-generative-ai``.

:func:`register_builtin_providers` puts them in the API registry; ``import py_agent.ai`` does it
once and calling it again is harmless. Each stream function serves as both ``stream`` and
``stream_simple`` (the unified ``reasoning`` option is mapped per API). Provider-specific extras
(``tool_choice``, ``reasoning_summary``, ``service_tier``) go in :class:`ProviderStreamOptions`.

A provider module is imported on its first request, not at start-up: importing all four is a
noticeable part of the page's boot in Pyodide.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..registry import ApiProvider, StreamFunction, register_api_provider

if TYPE_CHECKING:
    from ._common import ProviderStreamOptions, sanitize_surrogates, short_hash
    from .anthropic import stream_anthropic
    from .google import stream_google
    from .openai_completions import stream_openai_completions
    from .openai_responses import stream_openai_responses

SOURCE_ID = "py-agent-builtin"

_FUNCTIONS = {
    "openai-completions": ("openai_completions", "stream_openai_completions"),
    "openai-responses": ("openai_responses", "stream_openai_responses"),
    "anthropic-messages": ("anthropic", "stream_anthropic"),
    "google-generative-ai": ("google", "stream_google"),
}
_EXPORTS = {
    "ProviderStreamOptions": "_common",
    "sanitize_surrogates": "_common",
    "short_hash": "_common",
    **{function: module for module, function in _FUNCTIONS.values()},
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    if name == "BUILTIN_STREAM_FUNCTIONS":
        return {api: _load(api) for api in _FUNCTIONS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load(api: str) -> StreamFunction:
    module, function = _FUNCTIONS[api]
    loaded: StreamFunction = getattr(importlib.import_module(f".{module}", __name__), function)
    return loaded


def _lazy(api: str) -> StreamFunction:
    def stream(model: Any, context: Any, options: Any = None) -> Any:
        return _load(api)(model, context, options)

    stream.__name__ = _FUNCTIONS[api][1]
    return stream


def register_builtin_providers() -> None:
    """Register the four built-in APIs (idempotent: re-registering replaces the same entries)."""
    for api in _FUNCTIONS:
        function = _lazy(api)
        register_api_provider(ApiProvider(api, function, function), SOURCE_ID)


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
