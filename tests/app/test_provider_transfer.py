"""Custom providers exported to a file and imported back (py_agent/app/provider_transfer.py), and
the page commands that do it: models keep their descriptions, keys stay out unless asked, a broken
or hostile file is refused whole, and a provider of the same name is replaced or kept as asked."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from app_helpers import call

from py_agent.ai.custom import CustomProvider, get_custom_providers, unregister_custom_provider
from py_agent.ai.models import get_registered_models
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.provider_transfer import ProviderFileError, parse_provider_file, plan_import
from py_agent.app.storage import MemoryBackend

VISION = {"id": "gw-vision", "input": ["text", "image"], "contextWindow": 131072, "reasoning": True, "maxTokens": 8192}
PROVIDER = {
    "name": "Gateway",
    "kind": "openai-compatible",
    "api": "openai-completions",
    "baseUrl": "https://gateway.example/v1",
    "models": [VISION, "gw-text"],
}


async def make_app(backend: MemoryBackend) -> WebApp:
    app = WebApp(backend, MemoryTabStore(), lambda kind, payload: None, demo_tokens_per_second=0, plugins=[])
    await app.start()
    return app


def clear_custom_providers() -> None:
    for provider in get_custom_providers():
        unregister_custom_provider(provider.name)


@pytest.fixture
async def app() -> AsyncIterator[WebApp]:
    # The registry is the process's: earlier tests in this process may have left theirs (an import
    # then meets "conflicts"), and these leave none.
    clear_custom_providers()
    yield await make_app(MemoryBackend())
    clear_custom_providers()


def details(name: str) -> dict[str, Any]:
    return {m.id: (m.input, m.context_window, m.reasoning, m.max_tokens) for m in get_registered_models(name)}


def exported(**changes: Any) -> str:
    entry = {"provider": {k: v for k, v in PROVIDER.items() if k != "models"}, "models": [VISION]}
    data = {"format": "py-agent-providers", "version": 1, "providers": [entry]}
    data.update(changes)
    return json.dumps(data)


async def test_export_then_import_brings_back_each_model_description_without_the_key(app: WebApp) -> None:
    await call(app, "save_custom_provider", provider=PROVIDER, key="sk-gateway-SECRET-1", discover=False)
    before = details("Gateway")
    assert before["gw-vision"] == (["text", "image"], 131072, True, 8192)
    text = (await call(app, "export_custom_providers"))["json"]
    assert "sk-gateway-SECRET-1" not in text and json.loads(text)["keysIncluded"] is False

    await call(app, "delete_custom_provider", name="Gateway")
    assert get_registered_models("Gateway") == []
    backend = MemoryBackend()  # a fresh browser: nothing saved
    fresh = await make_app(backend)
    result = await call(fresh, "import_custom_providers", text=text)
    assert result["ok"] is True and result["added"] == ["Gateway"]
    assert result["summary"] == "Imported providers: 1 added, 0 replaced, 0 skipped."
    assert details("Gateway") == before
    assert not fresh.keys.has("Gateway")
    # Saved, not only registered: a reload has them.
    unregister_custom_provider("Gateway")
    await make_app(backend)
    assert details("Gateway") == before
    # The form still tells the user's own descriptions from the server's.
    listed = (await call(fresh, "custom_providers"))["providers"][0]
    assert listed["manualModels"] == ["gw-vision", "gw-text"]


async def test_keys_and_headers_are_exported_only_when_asked_and_imported_with_them(app: WebApp) -> None:
    headers = {"Authorization": "Bearer tok-HEADER-SECRET"}
    with_headers = {**PROVIDER, "headers": headers, "models": [{**VISION, "headers": headers}]}
    await call(app, "save_custom_provider", provider=with_headers, key="sk-gateway-SECRET-2", discover=False)
    plain = (await call(app, "export_custom_providers"))["json"]
    assert "SECRET" not in plain and "gw-vision" in plain
    text = (await call(app, "export_custom_providers", include_keys=True))["json"]
    entry = json.loads(text)["providers"][0]
    assert entry["apiKey"] == "sk-gateway-SECRET-2" and entry["provider"]["headers"] == headers
    fresh = await make_app(MemoryBackend())
    await call(fresh, "import_custom_providers", text=text, replace=True)
    assert fresh.keys.get("Gateway") == "sk-gateway-SECRET-2"
    assert get_custom_providers()[0].headers == headers


async def test_a_provider_of_the_same_name_is_asked_about_then_replaced_or_kept(app: WebApp) -> None:
    await call(app, "save_custom_provider", provider={**PROVIDER, "models": ["old-model"]}, discover=False)
    asked = await call(app, "import_custom_providers", text=exported())
    assert asked == {"ok": False, "conflicts": ["Gateway"], "count": 1}
    assert list(details("Gateway")) == ["old-model"]  # nothing changed while asking

    kept = await call(app, "import_custom_providers", text=exported(), replace=False)
    assert kept["skipped"] == ["Gateway"] and list(details("Gateway")) == ["old-model"]
    assert kept["summary"] == "Imported providers: 0 added, 0 replaced, 1 skipped (Gateway kept as they were)."

    replaced = await call(app, "import_custom_providers", text=exported(), replace=True)
    assert replaced["replaced"] == ["Gateway"] and list(details("Gateway")) == ["gw-vision"]


BROKEN = [
    ("{not json", "not valid JSON"),
    ("[]", "not a providers file"),
    (json.dumps({"format": "py-agent-providers", "version": 9, "providers": []}), "version 9"),
    (exported(providers=[]), "lists no provider"),
    (exported(providers=[{"provider": {**PROVIDER, "baseUrl": "javascript:alert(1)"}}]), "start with http"),
    (exported(providers=[{"provider": {**PROVIDER, "name": "anthropic"}, "models": [VISION]}]), "built-in"),
    (exported(providers=[{"provider": PROVIDER, "models": [{**VISION, "contextWindow": -5}]}]), "positive"),
    (
        exported(providers=[{"provider": PROVIDER, "models": [{**VISION, "baseUrl": "https://evil.example"}]}]),
        "baseUrl",
    ),
    (exported(providers=[{"provider": PROVIDER, "apiKey": 42}]), "API key"),
    (exported(providers=[{"provider": PROVIDER}, {"provider": PROVIDER}]), "listed twice"),
    ("[" * 100_000, "not valid JSON"),
    ("x" * 2_000_001, "too large"),
]


@pytest.mark.parametrize(("text", "reason"), BROKEN, ids=[reason for _, reason in BROKEN])
async def test_a_broken_or_hostile_file_is_refused_whole_with_the_reason(app: WebApp, text: str, reason: str) -> None:
    await call(app, "save_custom_provider", provider={**PROVIDER, "name": "Mine", "models": ["m1"]}, discover=False)
    # A good provider before the bad one is not saved either.
    if text.startswith("{") and '"providers": [{' in text:
        data = json.loads(text)
        data["providers"].insert(0, {"provider": {**PROVIDER, "name": "Other"}, "models": [VISION]})
        text = json.dumps(data)
    result = await call(app, "import_custom_providers", text=text, replace=True)
    assert result["ok"] is False and reason in result["problem"], result
    assert result["problem"].startswith("Nothing was imported: ")
    assert [p.name for p in get_custom_providers()] == ["Mine"] and list(details("Mine")) == ["m1"]


def test_parse_and_plan_without_the_app() -> None:
    found = parse_provider_file(exported(), reserved={"openai"})
    assert [(f.provider.name, [m.id for m in f.models]) for f in found] == [("Gateway", ["gw-vision"])]
    model = found[0].to_models()[0]
    assert model.base_url == "https://gateway.example/v1" and model.input == ["text", "image"]
    assert isinstance(found[0].provider, CustomProvider) and found[0].api_key is None
    plan = plan_import(found, {"Gateway"}, replace=False)
    assert plan.skipped == ["Gateway"] and not plan.add and not plan.replace
    assert plan_import(found, set(), replace=False).add == found
    with pytest.raises(ProviderFileError, match="unknown model field 'headers'"):
        parse_provider_file(exported(providers=[{"provider": PROVIDER, "models": [{"id": "x", "headers": {}}]}]))
