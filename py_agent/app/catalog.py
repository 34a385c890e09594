"""What the model picker shows: built-in, custom and demo models, searched as pi's picker does.

Also the facts the key dialog needs per provider (label, where to get a key) and the model each
provider starts with when a newcomer picks it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..ai.custom import get_custom_provider
from ..ai.models import (
    get_builtin_providers,
    get_model,
    get_models,
    get_providers,
    get_supported_thinking_levels,
    model_requires_api_key,
)
from ..ai.providers.wire_apis import wire_api
from ..ai.types import Model
from .demo import DEMO_PROVIDER

__all__ = [
    "PROVIDER_INFO",
    "ProviderInfo",
    "all_models",
    "api_label",
    "default_model_for",
    "model_summary",
    "provider_info",
    "search_models",
    "subsequence_score",
]


@dataclass(frozen=True)
class ProviderInfo:
    label: str
    key_url: str = ""
    default_model: str = ""
    key_hint: str = ""


PROVIDER_INFO: dict[str, ProviderInfo] = {
    "demo": ProviderInfo("Demo", "", "demo-scripted"),
    "anthropic": ProviderInfo(
        "Anthropic", "https://console.anthropic.com/settings/keys", "claude-sonnet-4-5", "sk-ant-…"
    ),
    "openai": ProviderInfo("OpenAI", "https://platform.openai.com/api-keys", "gpt-5-mini", "sk-…"),
    "google": ProviderInfo("Google Gemini", "https://aistudio.google.com/apikey", "gemini-2.5-flash", "AIza…"),
    "openrouter": ProviderInfo(
        "OpenRouter", "https://openrouter.ai/settings/keys", "anthropic/claude-sonnet-4.5", "sk-or-…"
    ),
    "groq": ProviderInfo("Groq", "https://console.groq.com/keys", "openai/gpt-oss-120b", "gsk_…"),
    "xai": ProviderInfo("xAI", "https://console.x.ai", "grok-code-fast-1", "xai-…"),
    "cerebras": ProviderInfo("Cerebras", "https://cloud.cerebras.ai", "gpt-oss-120b", "csk-…"),
    "mistral": ProviderInfo("Mistral", "https://console.mistral.ai/api-keys", "mistral-medium-latest"),
    "deepseek": ProviderInfo("DeepSeek", "https://platform.deepseek.com/api_keys", "deepseek-v4-flash", "sk-…"),
}


def provider_info(provider: str) -> ProviderInfo:
    info = PROVIDER_INFO.get(provider)
    if info is not None:
        return info
    custom = get_custom_provider(provider)
    if custom is not None:
        return ProviderInfo(provider, "", "")
    return ProviderInfo(provider)


def provider_label(provider: str) -> str:
    return provider_info(provider).label


def api_label(api: str) -> str:
    """The human name of a wire API (``WIRE_APIS``); other APIs (the demo's) by their id."""
    descriptor = wire_api(api)
    return descriptor.label if descriptor is not None else api


def default_model_for(provider: str) -> Model | None:
    """The model a provider starts with: its recommended one, else its first."""
    info = PROVIDER_INFO.get(provider)
    if info and info.default_model:
        model = get_model(provider, info.default_model)
        if model is not None:
            return model
    models = get_models(provider)
    return models[0] if models else None


def all_models() -> list[Model]:
    """The demo first, then every built-in provider's models, then custom providers' models."""
    providers = get_providers()
    ordered = [p for p in providers if p == DEMO_PROVIDER]
    ordered += [p for p in get_builtin_providers() if p in providers]
    ordered += [p for p in providers if p not in ordered]
    return [model for provider in ordered for model in get_models(provider)]


def subsequence_score(query: str, text: str) -> float | None:
    """pi's fuzzy match: every character of ``query`` in order in ``text`` (both lower-cased,
    query without whitespace); score = len(query) / (len(query) + gaps between matches)."""
    query = "".join(query.lower().split())
    if not query:
        return 1.0
    text = text.lower()
    position = -1
    gaps = 0
    for char in query:
        found = text.find(char, position + 1)
        if found < 0:
            return None
        if position >= 0:
            gaps += found - position - 1
        position = found
    return len(query) / (len(query) + gaps)


def search_models(
    query: str,
    *,
    current: Model | None = None,
    reasoning: bool = False,
    vision: bool = False,
    has_key: Callable[[str], bool] | None = None,
    limit: int = 200,
    models: Iterable[Model] | None = None,
) -> list[Model]:
    """Models matching ``query`` (subsequence over "provider id name"), best first; without a
    query the current model first, then models whose provider is usable now, in catalogue order."""
    pool = list(models) if models is not None else all_models()
    if reasoning:
        pool = [m for m in pool if m.reasoning]
    if vision:
        pool = [m for m in pool if "image" in m.input]
    if "".join(query.split()):
        scored: list[tuple[float, int, Model]] = []
        for index, model in enumerate(pool):
            score = subsequence_score(
                query, f"{model.provider} {provider_label(model.provider)} {model.id} {model.name}"
            )
            if score is not None:
                scored.append((score, index, model))
        scored.sort(key=lambda item: (-item[0], item[1]))
        result = [model for _, _, model in scored]
    else:

        def usable(model: Model) -> bool:
            if not model_requires_api_key(model):
                return True
            return bool(has_key and has_key(model.provider))

        result = sorted(pool, key=lambda m: 0 if usable(m) else 1)
    if current is not None and not "".join(query.split()):
        same = [m for m in result if m.provider == current.provider and m.id == current.id]
        if same:
            result = same + [m for m in result if m is not same[0]]
    return result[:limit]


def model_summary(model: Model, *, has_key: bool) -> dict[str, Any]:
    """The picker's and the composer's view of a model."""
    return {
        "provider": model.provider,
        "providerLabel": provider_label(model.provider),
        "id": model.id,
        "name": model.name or model.id,
        "api": model.api,
        "apiLabel": api_label(model.api),
        "reasoning": model.reasoning,
        "vision": "image" in model.input,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "cost": {"input": model.cost.input, "output": model.cost.output},
        "requiresKey": model_requires_api_key(model),
        "hasKey": has_key,
        "thinkingLevels": list(get_supported_thinking_levels(model)),
        "demo": model.provider == DEMO_PROVIDER,
    }
