"""The wire APIs py-agent speaks: ONE list, :data:`WIRE_APIS`, that everything reads.

The provider registry loads ``module.stream_function`` on a model's first request; the catalogue
labels models by API; custom providers take their base-URL shape, model discovery and form entry
from here; the mock server routes requests by :attr:`WireApi.route`. Adding a wire API means
a provider module, an entry here and its tests (``docs/providers.md``).
"""

from __future__ import annotations

from typing import Any

from .descriptor import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    CustomProviderForm,
    ModelDiscovery,
    ModelFacts,
    WireApi,
    dig,
    first_number,
    json_number,
)


def _openai_model_entry(entry: dict[str, Any]) -> ModelFacts:
    # OpenAI lists no limits; OpenRouter, vLLM, llama.cpp, LiteLLM and others each name them differently.
    context = (
        first_number(
            entry.get("context_length"),
            entry.get("context_window"),
            entry.get("max_context_length"),
            entry.get("max_model_len"),
            entry.get("max_input_tokens"),
            dig(entry, "top_provider", "context_length"),
            dig(entry, "meta", "n_ctx_train"),
        )
        or DEFAULT_CONTEXT_WINDOW
    )
    max_tokens = first_number(
        entry.get("max_completion_tokens"),
        entry.get("max_output_tokens"),
        dig(entry, "top_provider", "max_completion_tokens"),
    )
    name = entry.get("name") or entry.get("display_name")
    return ModelFacts(
        name=name if isinstance(name, str) else None,
        context_window=context,
        max_tokens=min(max_tokens or DEFAULT_MAX_TOKENS, context),
    )


def _anthropic_model_entry(entry: dict[str, Any]) -> ModelFacts:
    name = entry.get("display_name")
    context = json_number(entry.get("max_input_tokens")) or 200000
    return ModelFacts(
        name=name if isinstance(name, str) else None,
        context_window=context,
        max_tokens=json_number(entry.get("max_tokens")) or min(context, 32000),
    )


_OPENAI_MODELS = ModelDiscovery(path="/models", read_entry=_openai_model_entry)

OPENAI_COMPLETIONS = WireApi(
    id="openai-completions",
    label="OpenAI Chat Completions",
    module="openai_completions",
    stream_function="stream_openai_completions",
    default_base_url="https://api.openai.com/v1",
    version_path="/v1",
    version_in_base_url=True,
    request_path="/chat/completions",
    key_header="Authorization",
    key_prefix="Bearer ",
    discovery=_OPENAI_MODELS,
    custom_form=CustomProviderForm("openai-compatible", "OpenAI-compatible API", "https://api.example.com/v1"),
)

OPENAI_RESPONSES = WireApi(
    id="openai-responses",
    label="OpenAI Responses",
    module="openai_responses",
    stream_function="stream_openai_responses",
    default_base_url="https://api.openai.com/v1",
    version_path="/v1",
    version_in_base_url=True,
    request_path="/responses",
    key_header="Authorization",
    key_prefix="Bearer ",
    discovery=_OPENAI_MODELS,
    custom_form=CustomProviderForm("openai-responses", "OpenAI Responses-compatible API", "https://api.example.com/v1"),
)

ANTHROPIC_MESSAGES = WireApi(
    id="anthropic-messages",
    label="Anthropic Messages",
    module="anthropic",
    stream_function="stream_anthropic",
    default_base_url="https://api.anthropic.com",
    version_path="/v1",
    version_in_base_url=False,
    request_path="/v1/messages",
    key_header="x-api-key",
    discovery=ModelDiscovery(
        path="/v1/models?limit=1000",
        read_entry=_anthropic_model_entry,
        # The same headers as a request: Anthropic refuses browser calls without the opt-in one.
        headers=(("anthropic-version", "2023-06-01"), ("anthropic-dangerous-direct-browser-access", "true")),
    ),
    custom_form=CustomProviderForm("anthropic-compatible", "Anthropic-compatible API", "https://api.example.com"),
)

GOOGLE_GENERATIVE_AI = WireApi(
    id="google-generative-ai",
    label="Google Gemini",
    module="google",
    stream_function="stream_google",
    default_base_url="https://generativelanguage.googleapis.com/v1beta",
    version_path="/v1beta",
    version_in_base_url=True,
    request_path="/{model}:streamGenerateContent?alt=sse",
    key_header="x-goog-api-key",
)

WIRE_APIS: tuple[WireApi, ...] = (OPENAI_COMPLETIONS, OPENAI_RESPONSES, ANTHROPIC_MESSAGES, GOOGLE_GENERATIVE_AI)
"""Every wire API, in the order the app lists them."""

_BY_ID = {api.id: api for api in WIRE_APIS}


def wire_api(api_id: str) -> WireApi | None:
    """The descriptor of ``api_id`` (``None`` for an unknown id, e.g. the faux provider's)."""
    return _BY_ID.get(api_id)


def custom_wire_apis() -> tuple[WireApi, ...]:
    """The wire APIs a custom provider may use (those with a form entry)."""
    return tuple(api for api in WIRE_APIS if api.custom_form is not None)


__all__ = [
    "ANTHROPIC_MESSAGES",
    "GOOGLE_GENERATIVE_AI",
    "OPENAI_COMPLETIONS",
    "OPENAI_RESPONSES",
    "WIRE_APIS",
    "custom_wire_apis",
    "wire_api",
]
