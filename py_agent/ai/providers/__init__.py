"""The built-in wire APIs, listed in :data:`~.wire_apis.WIRE_APIS` (``docs/providers.md``).

:func:`register_builtin_providers` puts them in the API registry; ``import py_agent.ai`` does it
once and calling it again is harmless. Each stream function serves as both ``stream`` and
``stream_simple`` (the unified ``reasoning`` option is mapped per API). Provider-specific extras
(``tool_choice``, ``reasoning_summary``, ``service_tier``) go in :class:`ProviderStreamOptions`.

A provider module is imported on its first request, not at start-up: importing all four is a
noticeable part of the page's boot in Pyodide. Their descriptors live in the light
:mod:`.wire_apis` module for that reason.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..registry import ApiProvider, StreamFunction, register_api_provider
from .descriptor import WireApi
from .wire_apis import WIRE_APIS, wire_api

if TYPE_CHECKING:
    from .anthropic import stream_anthropic
    from .content import sanitize_surrogates, short_hash
    from .google import stream_google
    from .openai_completions import stream_openai_completions
    from .openai_responses import stream_openai_responses
    from .options import ProviderStreamOptions

SOURCE_ID = "py-agent-builtin"

_EXPORTS = {
    "ProviderStreamOptions": "options",
    "sanitize_surrogates": "content",
    "short_hash": "content",
    **{api.stream_function: api.module for api in WIRE_APIS},
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    if name == "BUILTIN_STREAM_FUNCTIONS":
        return {api.id: _load(api) for api in WIRE_APIS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load(api: WireApi) -> StreamFunction:
    loaded: StreamFunction = getattr(importlib.import_module(f".{api.module}", __name__), api.stream_function)
    return loaded


def _lazy(api: WireApi) -> StreamFunction:
    def stream(model: Any, context: Any, options: Any = None) -> Any:
        return _load(api)(model, context, options)

    stream.__name__ = api.stream_function
    return stream


def register_builtin_providers() -> None:
    """Register every wire API of :data:`WIRE_APIS` (idempotent: re-registering replaces the same entries)."""
    for api in WIRE_APIS:
        function = _lazy(api)
        register_api_provider(ApiProvider(api.id, function, function), SOURCE_ID)


__all__ = [
    "BUILTIN_STREAM_FUNCTIONS",
    "SOURCE_ID",
    "WIRE_APIS",
    "ProviderStreamOptions",
    "WireApi",
    "register_builtin_providers",
    "sanitize_surrogates",
    "short_hash",
    "stream_anthropic",
    "stream_google",
    "stream_openai_completions",
    "stream_openai_responses",
    "wire_api",
]
