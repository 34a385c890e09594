"""Custom providers exported to a JSON file and imported back (Settings → Custom providers).

The file holds each provider's settings and a description of each of its models (takes images,
context window, reasons, max output), never an API key unless the user asks for them. Reading a
file checks everything before anything is saved: a broken or hostile file is refused with the
reason, and the providers already saved stay as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..ai.custom import CustomModelSpec, CustomProvider
from ..ai.types import Model
from .errors import clean_text

FORMAT = "py-agent-providers"
VERSION = 1
MAX_FILE_CHARS = 2_000_000
MAX_PROVIDERS = 200
MAX_MODELS = 5_000
# What the file says of a model: the fields the form describes (web/ui/settings.js).
MODEL_FIELDS = ("id", "name", "input", "reasoning", "contextWindow", "maxTokens")


class ProviderFileError(ValueError):
    """The file cannot be imported; the message says why, for the user."""


@dataclass
class ImportedProvider:
    provider: CustomProvider
    models: list[CustomModelSpec]
    api_key: str | None = None

    def to_models(self) -> list[Model]:
        """The provider's models as the file describes them (base URL and API from the provider)."""
        return [self.provider.model_from_spec(spec) for spec in self.models] or self.provider.to_models()


@dataclass
class ImportPlan:
    add: list[ImportedProvider] = field(default_factory=list)
    replace: list[ImportedProvider] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"Imported providers: {len(self.add)} added, {len(self.replace)} replaced, {len(self.skipped)} skipped"
            + (f" ({', '.join(self.skipped)} kept as they were)." if self.skipped else ".")
        )


def _model_description(model: Model) -> dict[str, Any]:
    return {
        "id": model.id,
        "name": model.name,
        "input": list(model.input),
        "reasoning": model.reasoning,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    }


def export_providers(
    providers: Sequence[tuple[CustomProvider, Sequence[Model]]], keys: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The file's content: each provider (without its key) and its models' descriptions; with
    ``keys``, each provider's key as ``apiKey`` and its custom headers (which may carry a token)."""
    # Without keys, headers stay out too: an Authorization header is a key by another name.
    secret: dict[str, Any] = {"api_key": True}
    if keys is None:
        secret |= {"headers": True, "models": {"__all__": {"headers": True}}}
    entries = []
    for provider, models in providers:
        entry: dict[str, Any] = {
            "provider": provider.model_dump(mode="json", exclude=secret, exclude_none=True),
            "models": [_model_description(m) for m in models],
        }
        if keys is not None and keys.get(provider.name):
            entry["apiKey"] = keys[provider.name]
        entries.append(entry)
    return {"format": FORMAT, "version": VERSION, "keysIncluded": keys is not None, "providers": entries}


def _problem(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "; ".join(clean_text(str(e.get("msg", ""))).removeprefix("Value error, ") for e in error.errors())
    return clean_text(str(error))


def _model_spec(raw: Any, where: str) -> CustomModelSpec:
    if not isinstance(raw, Mapping):
        raise ProviderFileError(f"{where}: a model must be an object with an id.")
    unknown = sorted(set(raw) - set(MODEL_FIELDS))
    if unknown:
        raise ProviderFileError(f"{where}: unknown model field {unknown[0]!r}.")
    data = {k: v for k, v in raw.items() if v is not None}
    for key in ("contextWindow", "maxTokens"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ProviderFileError(f"{where}: {key} must be a positive whole number.")
    if not isinstance(data.get("id"), str) or not data["id"].strip():
        raise ProviderFileError(f"{where}: a model needs an id.")
    try:
        return CustomModelSpec.model_validate(data)
    except ValidationError as error:
        raise ProviderFileError(f"{where}: {_problem(error)}") from None


def parse_provider_file(
    text: str,
    *,
    make_provider: Callable[[dict[str, Any]], CustomProvider] = CustomProvider.model_validate,
    reserved: Collection[str] = (),
) -> list[ImportedProvider]:
    """The providers of an exported file, every one checked (``make_provider`` validates a
    provider's settings as the form does); ``ProviderFileError`` says what is wrong."""
    if len(text) > MAX_FILE_CHARS:
        raise ProviderFileError("This file is too large to be a providers file (over 2 MB).")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        detail = f" (line {error.lineno})" if isinstance(error, json.JSONDecodeError) else ""
        raise ProviderFileError(f"This file is not valid JSON{detail}.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProviderFileError("This is not a providers file exported by this app (its format is not marked).")
    if data.get("version") != VERSION:
        raise ProviderFileError(f"This providers file has version {data.get('version')!r}; this app reads {VERSION}.")
    entries = data.get("providers")
    if not isinstance(entries, list) or not entries:
        raise ProviderFileError("This providers file lists no provider.")
    if len(entries) > MAX_PROVIDERS:
        raise ProviderFileError(f"This file lists {len(entries)} providers; at most {MAX_PROVIDERS} can be imported.")
    found: list[ImportedProvider] = []
    names: set[str] = set()
    for i, entry in enumerate(entries, 1):
        where = f"Provider {i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("provider"), dict):
            raise ProviderFileError(f"{where}: its settings are missing.")
        settings = {k: v for k, v in entry["provider"].items() if k not in ("apiKey", "api_key")}
        try:
            provider = make_provider(settings)
        except (ValidationError, ValueError) as error:
            raise ProviderFileError(f"{where}: {_problem(error)}") from None
        where = f"Provider {provider.name!r}"
        if provider.name in reserved:
            raise ProviderFileError(f"{where}: this is the name of a built-in provider.")
        if provider.name in names:
            raise ProviderFileError(f"{where} is listed twice.")
        names.add(provider.name)
        raw_models = entry.get("models", [])
        if not isinstance(raw_models, list):
            raise ProviderFileError(f"{where}: its models must be a list.")
        if len(raw_models) > MAX_MODELS:
            raise ProviderFileError(f"{where}: more than {MAX_MODELS} models.")
        models = [_model_spec(raw, where) for raw in raw_models]
        if not models and not provider.models:
            raise ProviderFileError(f"{where}: no model is listed.")
        key = entry.get("apiKey")
        if key is not None and (not isinstance(key, str) or not key.strip() or len(key) > 4096):
            raise ProviderFileError(f"{where}: its API key is not text.")
        found.append(ImportedProvider(provider, models, key.strip() if key else None))
    return found


def plan_import(found: Sequence[ImportedProvider], existing: Collection[str], *, replace: bool) -> ImportPlan:
    """What importing ``found`` does: providers not saved yet are added; one with the name of a
    saved provider replaces it when ``replace``, and is skipped (the saved one kept) otherwise."""
    plan = ImportPlan()
    for item in found:
        if item.provider.name not in existing:
            plan.add.append(item)
        elif replace:
            plan.replace.append(item)
        else:
            plan.skipped.append(item.provider.name)
    return plan
