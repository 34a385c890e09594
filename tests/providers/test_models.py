"""The built-in model catalogue, thinking levels, costs and registered models (py_agent.ai.models)."""

from __future__ import annotations

import importlib
import json
import sys
from importlib import resources

import pytest

from py_agent.ai import models as models_module
from py_agent.ai.models import (
    KNOWN_APIS,
    THINKING_LEVELS,
    calculate_cost,
    catalogue_source,
    clamp_thinking_level,
    get_model,
    get_models,
    get_providers,
    get_registered_models,
    get_supported_thinking_levels,
    model_requires_api_key,
    models_are_equal,
    register_model,
    register_models,
    supports_xhigh,
    unregister_model,
    unregister_models,
)
from py_agent.ai.types import Model, Usage

PROVIDER_API = {
    "anthropic": {"anthropic-messages"},
    "openai": {"openai-responses"},
    "google": {"google-generative-ai"},
    "openrouter": {"openai-completions"},
    "groq": {"openai-completions"},
    "xai": {"openai-completions"},
    "cerebras": {"openai-completions"},
    "mistral": {"openai-completions"},
    "deepseek": {"openai-completions"},
}
PROVIDER_BASE_URL = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "google": "https://generativelanguage.googleapis.com/v1beta",
    "openrouter": "https://openrouter.ai/api/v1",
    "groq": "https://api.groq.com/openai/v1",
    "xai": "https://api.x.ai/v1",
    "cerebras": "https://api.cerebras.ai/v1",
    "mistral": "https://api.mistral.ai/v1",
    "deepseek": "https://api.deepseek.com",
}
ALLOWED_FIELDS = {
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
    "headers",
    "compat",
    "thinkingLevelMap",
}


def _raw_catalogue() -> dict[str, list[dict[str, object]]]:
    text = resources.files("py_agent.ai").joinpath("models.json").read_text(encoding="utf-8")
    providers: dict[str, list[dict[str, object]]] = json.loads(text)["providers"]
    return providers


def _model(provider: str, model_id: str) -> Model:
    model = get_model(provider, model_id)
    assert model is not None, f"{provider}/{model_id} missing from the catalogue"
    return model


def _reasoning_model(**fields: object) -> Model:
    return Model.model_validate(
        {"id": "m", "api": "openai-completions", "provider": "test-provider", "reasoning": True, **fields}
    )


# ---------------------------------------------------------------------------------------------
# Catalogue


def test_providers_cover_the_supported_apis() -> None:
    providers = get_providers()
    assert list(PROVIDER_API) == [p for p in providers if p in PROVIDER_API]
    assert set(PROVIDER_API) <= set(providers)


def test_lookups() -> None:
    opus = _model("anthropic", "claude-opus-4-6")
    assert opus.name == "Claude Opus 4.6"
    assert opus.api == "anthropic-messages"
    assert opus.base_url == "https://api.anthropic.com"
    assert opus.reasoning is True
    assert opus.input == ["text", "image"]
    assert opus.context_window == 1000000
    assert opus.max_tokens == 128000

    gpt = _model("openai", "gpt-4o")
    assert (gpt.api, gpt.base_url, gpt.reasoning) == ("openai-responses", "https://api.openai.com/v1", False)
    assert gpt.cost.input == 2.5 and gpt.cost.output == 10 and gpt.cost.cache_read == 1.25

    gemini = _model("google", "gemini-2.5-flash")
    assert gemini.api == "google-generative-ai"
    assert gemini.context_window == 1048576

    assert get_model("anthropic", "no-such-model") is None
    assert get_model("no-such-provider", "gpt-4o") is None
    assert get_models("no-such-provider") == []


def test_lookups_return_the_same_object() -> None:
    assert get_model("openai", "gpt-5") is get_model("openai", "gpt-5")
    by_list = {m.id: m for m in get_models("openai")}
    assert by_list["gpt-5"] is get_model("openai", "gpt-5")


def test_every_provider_has_models_with_unique_ids() -> None:
    for provider in PROVIDER_API:
        models = get_models(provider)
        assert models, provider
        ids = [m.id for m in models]
        assert len(ids) == len(set(ids)), provider


def test_every_model_is_complete_and_valid() -> None:
    count = 0
    for provider, entries in _raw_catalogue().items():
        assert provider in PROVIDER_API, f"unexpected provider {provider}"
        for entry in entries:
            count += 1
            where = f"{provider}/{entry.get('id')}"
            assert set(entry) <= ALLOWED_FIELDS, where
            assert ALLOWED_FIELDS - {"headers", "compat", "thinkingLevelMap"} <= set(entry), where
            model = _model(provider, str(entry["id"]))
            assert model.id and model.name, where
            assert model.provider == provider, where
            assert model.api in KNOWN_APIS, where
            assert model.api in PROVIDER_API[provider], where
            assert model.base_url == PROVIDER_BASE_URL[provider], where
            assert "text" in model.input and set(model.input) <= {"text", "image"}, where
            assert isinstance(model.reasoning, bool), where
            assert model.context_window > 0 and model.max_tokens > 0, where
            for price in (model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write):
                assert price >= 0, where
            if model.thinking_level_map is not None:
                assert set(model.thinking_level_map) <= set(THINKING_LEVELS), where
            # The JSON form of the Model is exactly the catalogue entry (camelCase, nothing added).
            assert model.model_dump() == entry, where
    assert count > 300


def test_catalogue_source_names_pi_ai() -> None:
    assert catalogue_source().startswith("@earendil-works/pi-ai@")


def test_mistral_uses_chat_completions_with_its_compat_flags() -> None:
    for model in get_models("mistral"):
        assert model.api == "openai-completions"
        assert model.base_url == "https://api.mistral.ai/v1"
        compat = model.compat or {}
        assert compat["maxTokensField"] == "max_tokens"
        assert compat["requiresToolResultName"] is True
        assert compat["requiresMistralToolIds"] is True
        assert compat["supportsStore"] is False
        assert compat["supportsDeveloperRole"] is False
    small = _model("mistral", "mistral-small-2603")
    assert (small.compat or {})["supportsReasoningEffort"] is True
    magistral = _model("mistral", "magistral-small")
    assert magistral.reasoning is True
    assert (magistral.compat or {})["supportsReasoningEffort"] is False


def test_deepseek_and_groq_keep_pis_flags() -> None:
    for model in get_models("deepseek"):
        assert (model.compat or {}).get("thinkingFormat") == "deepseek"
    qwen = _model("groq", "qwen/qwen3-32b")
    assert qwen.thinking_level_map == {"minimal": None, "low": None, "medium": None, "high": "default"}


def test_catalogue_is_loaded_lazily() -> None:
    module = importlib.reload(models_module)
    try:
        assert module._raw is None  # importing does not read models.json
        assert module.get_model("openai", "gpt-4o") is not None
        assert module._raw is not None
        assert len(module._built) == 1  # only the model asked for was built
    finally:
        importlib.reload(models_module)


def test_the_wheel_ships_the_catalogue() -> None:
    import importlib.util
    import pathlib
    import subprocess
    import tempfile
    import zipfile

    root = pathlib.Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("_py_agent_build", root / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build  # dataclasses look their module up there
    try:
        spec.loader.exec_module(build)
    finally:
        del sys.modules[spec.name]
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build.build_py_agent_wheel(pathlib.Path(tmp))
        assert "py_agent/ai/models.json" in zipfile.ZipFile(wheel).namelist()
        # Import from the wheel itself (zipimport): importlib.resources must find the JSON there.
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); import py_agent.ai.models as m; "
            "assert m.__file__.startswith(sys.argv[1]), m.__file__; "
            "print(m.get_model('anthropic', 'claude-opus-4-6').name, len(m.get_providers()))"
        )
        result = subprocess.run(
            [sys.executable, "-I", "-c", code, str(wheel)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split()[:3] == ["Claude", "Opus", "4.6"]


# ---------------------------------------------------------------------------------------------
# Thinking levels


def test_non_reasoning_models_only_support_off() -> None:
    gpt4o = _model("openai", "gpt-4o")
    assert get_supported_thinking_levels(gpt4o) == ["off"]
    assert clamp_thinking_level(gpt4o, "high") == "off"
    assert supports_xhigh(gpt4o) is False


def test_default_levels_without_a_map() -> None:
    sonnet = _model("anthropic", "claude-sonnet-4-5")
    assert get_supported_thinking_levels(sonnet) == ["off", "minimal", "low", "medium", "high"]
    assert supports_xhigh(sonnet) is False
    assert clamp_thinking_level(sonnet, "xhigh") == "high"
    assert clamp_thinking_level(sonnet, "medium") == "medium"


def test_levels_mapped_to_none_are_unsupported() -> None:
    gpt5 = _model("openai", "gpt-5")  # {"off": None}: reasoning cannot be switched off
    assert get_supported_thinking_levels(gpt5) == ["minimal", "low", "medium", "high"]
    assert clamp_thinking_level(gpt5, "off") == "minimal"

    gemini = _model("google", "gemini-3-pro-preview")  # only LOW and HIGH
    assert get_supported_thinking_levels(gemini) == ["low", "high"]
    assert clamp_thinking_level(gemini, "minimal") == "low"
    assert clamp_thinking_level(gemini, "medium") == "high"
    assert clamp_thinking_level(gemini, "xhigh") == "high"
    assert clamp_thinking_level(gemini, "off") == "low"

    qwen = _model("groq", "qwen/qwen3-32b")
    assert get_supported_thinking_levels(qwen) == ["off", "high"]
    assert clamp_thinking_level(qwen, "low") == "high"


def test_xhigh_needs_an_explicit_mapping() -> None:
    assert supports_xhigh(_model("openai", "gpt-5.2")) is True
    assert supports_xhigh(_model("anthropic", "claude-opus-4-6")) is True
    assert supports_xhigh(_model("openai", "gpt-5")) is False
    gpt52 = _model("openai", "gpt-5.2")
    assert get_supported_thinking_levels(gpt52) == list(THINKING_LEVELS)
    assert clamp_thinking_level(gpt52, "xhigh") == "xhigh"
    assert supports_xhigh(_reasoning_model(thinkingLevelMap={"xhigh": None})) is False


def test_clamp_unknown_level_gives_the_first_supported() -> None:
    assert clamp_thinking_level(_model("openai", "gpt-5"), "extreme") == "minimal"
    assert clamp_thinking_level(_reasoning_model(), "extreme") == "off"


# ---------------------------------------------------------------------------------------------
# Costs and equality


def test_calculate_cost_uses_prices_per_million() -> None:
    sonnet = _model("anthropic", "claude-sonnet-4-5")  # 3 / 15 / 0.3 / 3.75
    usage = Usage(input=1000, output=500, cache_read=2000, cache_write=4000)
    cost = calculate_cost(sonnet, usage)
    assert cost is usage.cost
    assert cost.input == pytest.approx(0.003)
    assert cost.output == pytest.approx(0.0075)
    assert cost.cache_read == pytest.approx(0.0006)
    assert cost.cache_write == pytest.approx(0.015)
    assert cost.total == pytest.approx(0.003 + 0.0075 + 0.0006 + 0.015)


def test_calculate_cost_charges_long_cache_writes_twice_the_input_price() -> None:
    sonnet = _model("anthropic", "claude-sonnet-4-5")
    usage = Usage(cache_write=3000, cache_write_1h=1000)
    calculate_cost(sonnet, usage)
    assert usage.cost.cache_write == pytest.approx((3.75 * 2000 + 3 * 2 * 1000) / 1e6)


def test_models_are_equal_compares_id_and_provider() -> None:
    a = _model("openai", "gpt-4o")
    copy = a.model_copy(update={"name": "renamed"})
    assert models_are_equal(a, copy)
    assert not models_are_equal(a, _model("openai", "gpt-5"))
    assert not models_are_equal(a, _model("openrouter", "openai/gpt-4o"))
    other_provider = a.model_copy(update={"provider": "azure"})
    assert not models_are_equal(a, other_provider)
    assert not models_are_equal(a, None)
    assert not models_are_equal(None, None)


# ---------------------------------------------------------------------------------------------
# Registered models


def test_register_model_adds_a_provider() -> None:
    try:
        model = register_model(
            {
                "id": "llama3",
                "name": "Llama 3",
                "api": "openai-completions",
                "provider": "my-server",
                "baseUrl": "http://localhost:8080/v1",
                "contextWindow": 8192,
                "maxTokens": 4096,
            }
        )
        assert isinstance(model, Model)
        assert get_model("my-server", "llama3") is model
        assert get_models("my-server") == [model]
        assert get_providers()[-1] == "my-server"
        assert get_registered_models("my-server") == [model]
        assert model in get_registered_models()
    finally:
        unregister_models("my-server")
    assert get_model("my-server", "llama3") is None
    assert "my-server" not in get_providers()


def test_registered_model_shadows_a_builtin_one_until_unregistered() -> None:
    builtin = _model("openai", "gpt-4o")
    position = [m.id for m in get_models("openai")].index("gpt-4o")
    override = builtin.model_copy(update={"base_url": "http://localhost:9999/v1"})
    try:
        register_model(override)
        assert get_model("openai", "gpt-4o") is override
        assert get_models("openai")[position] is override
        assert len(get_models("openai")) == len(_raw_catalogue()["openai"])
    finally:
        assert unregister_model("openai", "gpt-4o") is True
    assert get_model("openai", "gpt-4o") is builtin
    assert unregister_model("openai", "gpt-4o") is False


def test_register_models_appends_new_ids_after_the_catalogue() -> None:
    try:
        added = register_models(
            [
                Model(id="extra-1", api="openai-responses", provider="openai"),
                Model(id="extra-2", api="openai-responses", provider="openai"),
            ]
        )
        assert [m.id for m in get_models("openai")[-2:]] == ["extra-1", "extra-2"]
        assert get_models("openai")[-2:] == added
    finally:
        assert unregister_models("openai") == 2


def test_register_model_rejects_incomplete_models() -> None:
    with pytest.raises(ValueError, match="provider"):
        register_model(Model(id="x", api="openai-completions", provider=""))
    with pytest.raises(ValueError, match="id"):
        register_model(Model(id="", api="openai-completions", provider="p"))
    with pytest.raises(ValueError, match="api"):
        register_model(Model(id="x", api="", provider="p"))
    with pytest.raises(ValueError):
        register_model({"id": "x"})  # no api / provider: pydantic's validation error


def test_model_requires_api_key_flag() -> None:
    assert model_requires_api_key(_model("openai", "gpt-4o")) is True
    keyless = Model.model_validate(
        {"id": "m", "api": "openai-completions", "provider": "local", "requiresApiKey": False}
    )
    assert model_requires_api_key(keyless) is False
    assert keyless.model_dump()["requiresApiKey"] is False
    assert model_requires_api_key(Model.model_validate(keyless.model_dump())) is False
