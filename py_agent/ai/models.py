"""The model catalogue and cost arithmetic (pi-ai's ``models.ts``).

The built-in catalogue is ``models.json`` next to this module (generated from pi-ai's
``models.generated.js`` by ``scripts/gen_models.mjs``). It is read and parsed once, on the first
lookup, not at import: page boot only pays for it when a model is needed. ``Model`` objects are
built per entry on demand and then reused, so a lookup returns the same object every time (as in
pi, where the registry hands out its own objects: copy before changing one).

Applications add their own models with :func:`register_model` (custom endpoints, see
:mod:`py_agent.ai.custom`); a registered model replaces a built-in one with the same provider and
id, and providers that only have registered models are listed after the built-in ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

from .providers.wire_apis import WIRE_APIS
from .types import Model, Usage, UsageCost

ModelThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
"""pi-ai's ``ModelThinkingLevel``: a reasoning level, or ``"off"``."""

THINKING_LEVELS: tuple[ModelThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
"""Every level, weakest first (pi's ``EXTENDED_THINKING_LEVELS``)."""

KNOWN_APIS: tuple[str, ...] = tuple(api.id for api in WIRE_APIS)
"""The wire APIs py-agent implements (``WIRE_APIS``); every built-in model uses one of them."""

REQUIRES_API_KEY_FIELD = "requiresApiKey"
"""Extra ``Model`` field: ``False`` marks a model that is called without an API key (local servers)."""

_CATALOGUE_RESOURCE = "models.json"

# provider -> model id -> raw JSON entry; None until the first lookup.
_raw: dict[str, dict[str, dict[str, Any]]] | None = None
_source: str = ""
# Built-in entries turned into Model objects, by provider and id.
_built: dict[str, dict[str, Model]] = {}
# Models added with register_model, by provider and id (they shadow built-in entries).
_registered: dict[str, dict[str, Model]] = {}


def _load() -> dict[str, dict[str, dict[str, Any]]]:
    global _raw, _source
    if _raw is None:
        import json
        from importlib import resources

        text = resources.files(__package__).joinpath(_CATALOGUE_RESOURCE).read_text(encoding="utf-8")
        data = json.loads(text)
        _source = str(data.get("source", ""))
        _raw = {provider: {entry["id"]: entry for entry in entries} for provider, entries in data["providers"].items()}
    return _raw


def catalogue_source() -> str:
    """Where the built-in catalogue came from (package and version of pi-ai)."""
    _load()
    return _source


def _builtin(provider: str, model_id: str) -> Model | None:
    cached = _built.get(provider, {}).get(model_id)
    if cached is not None:
        return cached
    entry = _load().get(provider, {}).get(model_id)
    if entry is None:
        return None
    model = Model.model_validate(entry)
    _built.setdefault(provider, {})[model_id] = model
    return model


def get_model(provider: str, model_id: str) -> Model | None:
    """The model ``model_id`` of ``provider`` (registered models first), or ``None``."""
    registered = _registered.get(provider, {}).get(model_id)
    if registered is not None:
        return registered
    return _builtin(provider, model_id)


def get_models(provider: str) -> list[Model]:
    """Every model of ``provider``: built-in ones in catalogue order, then registered ones."""
    registered = _registered.get(provider, {})
    models: list[Model] = []
    for model_id in _load().get(provider, {}):
        model = registered.get(model_id) or _builtin(provider, model_id)
        if model is not None:
            models.append(model)
    builtin_ids = _load().get(provider, {})
    models.extend(model for model_id, model in registered.items() if model_id not in builtin_ids)
    return models


def get_providers() -> list[str]:
    """Built-in providers in catalogue order, then providers that only have registered models."""
    providers = list(_load())
    providers.extend(p for p, models in _registered.items() if models and p not in providers)
    return providers


def get_builtin_providers() -> list[str]:
    """The providers of the built-in catalogue."""
    return list(_load())


def register_model(model: Model | Mapping[str, Any]) -> Model:
    """Add ``model`` (a ``Model`` or its JSON form) to the registry; it replaces any model with the
    same provider and id. Returns the registered ``Model``."""
    if not isinstance(model, Model):
        model = Model.model_validate(dict(model))
    if not model.provider:
        raise ValueError("A model needs a provider")
    if not model.id:
        raise ValueError("A model needs an id")
    if not model.api:
        raise ValueError(f"Model {model.provider}/{model.id} needs an api")
    _registered.setdefault(model.provider, {})[model.id] = model
    return model


def register_models(models: Iterable[Model | Mapping[str, Any]]) -> list[Model]:
    return [register_model(model) for model in models]


def unregister_model(provider: str, model_id: str) -> bool:
    """Remove a registered model (a built-in one it shadowed comes back). True if one was removed."""
    models = _registered.get(provider)
    if not models or model_id not in models:
        return False
    del models[model_id]
    if not models:
        del _registered[provider]
    return True


def unregister_models(provider: str) -> int:
    """Remove every registered model of ``provider``; returns how many were removed."""
    return len(_registered.pop(provider, {}))


def get_registered_models(provider: str | None = None) -> list[Model]:
    """Models added with :func:`register_model` (of one provider, or all)."""
    if provider is not None:
        return list(_registered.get(provider, {}).values())
    return [model for models in _registered.values() for model in models.values()]


def models_are_equal(a: Model | None, b: Model | None) -> bool:
    """Same ``id`` and ``provider`` (pi's ``modelsAreEqual``); False when either is missing."""
    if a is None or b is None:
        return False
    return a.id == b.id and a.provider == b.provider


def model_requires_api_key(model: Model) -> bool:
    """False for models marked keyless (``requiresApiKey: false``, e.g. local servers)."""
    extra = model.model_extra or {}
    return extra.get(REQUIRES_API_KEY_FIELD) is not False


def get_supported_thinking_levels(model: Model) -> list[ModelThinkingLevel]:
    """The levels ``model`` accepts (pi's ``getSupportedThinkingLevels``).

    Non-reasoning models: only ``"off"``. A level mapped to ``None`` in ``thinking_level_map`` is
    unsupported (``off: None``: reasoning cannot be switched off); ``"xhigh"`` needs an explicit
    mapping.
    """
    if not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels: list[ModelThinkingLevel] = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level == "xhigh" and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> ModelThinkingLevel:
    """The nearest supported level: ``level`` itself, else the next stronger one, else the next
    weaker one (pi's ``clampThinkingLevel``)."""
    available = get_supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def supports_xhigh(model: Model) -> bool:
    """True if ``model`` accepts the ``"xhigh"`` level.

    pi-ai 0.79.10 expresses this in the model data (a ``thinking_level_map`` entry for ``xhigh``:
    GPT-5.2 and later, Claude Opus 4.6 and later) instead of 0.58.3's id substrings.
    """
    return "xhigh" in get_supported_thinking_levels(model)


def calculate_cost(model: Model, usage: Usage) -> UsageCost:
    """Recompute ``usage.cost`` from the model's prices (USD per million tokens), in place.

    The operation order is pi's, so floats come out bit-identical.
    """
    cost = usage.cost
    cost.input = (model.cost.input / 1000000) * usage.input
    cost.output = (model.cost.output / 1000000) * usage.output
    cost.cache_read = (model.cost.cache_read / 1000000) * usage.cache_read
    # Anthropic charges twice the base input price for 1-hour cache writes.
    long_write = usage.cache_write_1h or 0
    short_write = usage.cache_write - long_write
    cost.cache_write = (model.cost.cache_write * short_write + model.cost.input * 2 * long_write) / 1000000
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost
