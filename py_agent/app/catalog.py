"""What the model picker shows: built-in, custom and demo models, searched as pi's picker does.

Also the facts the key dialog needs per provider (label, where to get a key) and the model each
provider starts with when a newcomer picks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..ai.custom import LOCAL_SERVER_KINDS, CustomProvider, get_custom_provider
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
from .network import is_loopback_host

__all__ = [
    "PROVIDER_INFO",
    "ProviderInfo",
    "all_models",
    "api_label",
    "default_model_for",
    "is_local_model",
    "is_local_provider",
    "model_summary",
    "provider_info",
    "recency",
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


_WORD_SPLIT = re.compile(r"[^a-z0-9.]+")
_VERSION = re.compile(r"(?<![\d.])(\d{1,2}(?:\.\d{1,2})*)(?![\d.]|[bkm]\b)", re.IGNORECASE)
_ID_VERSION = re.compile(r"(?<=-)(\d)-(\d)(?=-|$)")
_DATE = re.compile(r"(20\d{2})-?([01]\d)-?([0-3]\d)")
LOCAL_WORD = "local"


def is_local_model(model: Model) -> bool:
    """A model served on this computer: a custom local server, or a custom provider at a loopback address."""
    custom = get_custom_provider(model.provider)
    return custom is not None and is_local_provider(custom)


def is_local_provider(custom: CustomProvider) -> bool:
    """A custom provider on this computer: a local server's kind, or a loopback address."""
    if custom.kind in LOCAL_SERVER_KINDS:
        return True
    host = (urlsplit(custom.base_url).hostname or "") if "://" in custom.base_url else ""
    return is_loopback_host(host)


def recency(model: Model) -> tuple[tuple[int, ...], int]:
    """How new a model looks: the highest version number in its name (or id), then a date in its id.

    The catalogue has no release dates; names carry versions ("Claude Opus 4.5", "Gemini 2.5 Pro").
    """
    found = _VERSION.findall(_DATE.sub(" ", model.name or ""))
    if not found:  # ids write versions with hyphens: claude-opus-4-5
        found = _VERSION.findall(_ID_VERSION.sub(r"\1.\2", _DATE.sub(" ", model.id)))
    versions = [tuple(int(part) for part in text.split(".")) for text in found]
    date = _DATE.search(model.id)
    return (max(versions) if versions else (), int("".join(date.groups())) if date else 0)


def _words(*texts: str) -> list[str]:
    return [word for text in texts for word in _WORD_SPLIT.split(text.lower()) if word]


def _tier(query: str, words: list[str], model: Model, local: bool) -> int | None:
    """How well ``query`` matches: 0 exact id or name, 1 their prefix, 2 a prefix of their words,
    3 of any word (provider, "local"), 4 a substring anywhere; ``None``: not by words."""
    ident, name = model.id.lower(), (model.name or "").lower()
    if query in (ident, name):
        return 0
    if ident.startswith(query) or name.startswith(query):
        return 1
    own = _words(ident, name)
    if all(any(token.startswith(word) for token in own) for word in words):
        return 2
    label = provider_label(model.provider)
    tags = [LOCAL_WORD] if local else []
    every = own + _words(model.provider, label) + tags
    if all(any(token.startswith(word) for token in every) for word in words):
        return 3
    haystack = " ".join((ident, name, model.provider.lower(), label.lower(), *tags))
    if all(word in haystack for word in words):
        return 4
    return None


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
    """Models matching ``query``, best first: exact, then prefix matches on the id or name, then
    word matches (also on the provider's name and "local" for models on this computer), then
    substrings; pi's fuzzy subsequence match only when nothing matches by words. Ties: the newest
    first. "local" finds only local models. Without a query: the current model, then models whose
    provider is usable now, each provider's newest first."""
    pool = list(models) if models is not None else all_models()
    if reasoning:
        pool = [m for m in pool if m.reasoning]
    if vision:
        pool = [m for m in pool if "image" in m.input]

    def usable(model: Model) -> bool:
        if not model_requires_api_key(model):
            return True
        return bool(has_key and has_key(model.provider))

    text = " ".join(query.lower().split())
    if text:
        words = text.split()
        ranked: list[tuple[int, tuple[float, ...], Model]] = []
        fuzzy: list[tuple[int, tuple[float, ...], Model]] = []
        for index, model in enumerate(pool):
            local = is_local_model(model)
            if LOCAL_WORD in words and not local:
                continue
            tier = _tier(text, words, model, local)
            version, date = recency(model)
            newest = tuple(-v for v in version) + (0.0,) * (4 - len(version))
            if tier is not None:
                ranked.append((tier, (*newest[:4], -date, index), model))
                continue
            label = f"{model.provider} {provider_label(model.provider)} {model.id} {model.name}"
            score = subsequence_score(text, label + (f" {LOCAL_WORD}" if local else ""))
            if score is not None:
                fuzzy.append((0, (-score, index), model))
        chosen = ranked or fuzzy
        chosen.sort(key=lambda item: (item[0], item[1]))
        result = [model for _, _, model in chosen]
    else:
        order = {provider: i for i, provider in enumerate(dict.fromkeys(m.provider for m in pool))}

        def key(item: tuple[int, Model]) -> tuple[Any, ...]:
            index, model = item
            version, date = recency(model)
            newest = tuple(-v for v in version) + (0,) * (4 - len(version))
            return (0 if usable(model) else 1, order[model.provider], *newest[:4], -date, index)

        result = [model for _, model in sorted(enumerate(pool), key=key)]
    if current is not None and not text:
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
        "local": is_local_model(model),
    }
