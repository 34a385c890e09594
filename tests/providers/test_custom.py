"""Custom endpoints and model discovery (py_agent.ai.custom), against recorded-style server answers."""

from __future__ import annotations

import json as json_module
from collections.abc import Callable
from typing import Any

import pytest
from provider_helpers import FakeTransport, Reply

from py_agent.ai.abort import AbortController, AbortError
from py_agent.ai.custom import (
    LOCAL_SERVER_COMPAT,
    CustomModelSpec,
    CustomProvider,
    DiscoveryError,
    api_base_url,
    cors_help,
    custom_provider_api_key,
    discover_models,
    get_custom_provider,
    get_custom_providers,
    register_custom_provider,
    server_url,
    unregister_custom_provider,
)
from py_agent.ai.models import get_model, get_models, get_providers, model_requires_api_key
from py_agent.ai.transport import HttpRequest, TransportError, set_default_transport
from py_agent.ai.types import Model, ModelCost

OLLAMA = "http://localhost:11434"
LMSTUDIO = "http://localhost:1234"
LLAMA_CPP = "http://localhost:8080"
VLLM = "http://localhost:8000"


# ---------------------------------------------------------------------------------------------
# provider_helpers' FakeTransport replays one reply (here a callable) for every request; Server
# answers that callable by method and URL, like a server with several endpoints (404 for others).

_REASONS = {200: "OK", 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}


class Server(FakeTransport):
    def __init__(self) -> None:
        super().__init__([self._answer])
        self.routes: dict[tuple[str, str], Callable[[HttpRequest], Reply | BaseException]] = {}

    def add(
        self,
        method: str,
        url: str,
        *,
        status: int = 200,
        json: Any = None,
        body: bytes | str | None = None,
        error: BaseException | None = None,
    ) -> Server:
        """Script ``method url`` (exact URL); ``json`` may be a callable of the request."""

        def reply(request: HttpRequest) -> Reply | BaseException:
            if error is not None:
                return error
            if json is not None:
                data = json(request) if callable(json) else json
                return _reply(status, json_module.dumps(data), "application/json")
            return _reply(status, body or b"", "text/plain")

        self.routes[(method, url)] = reply
        return self

    def _answer(self, request: HttpRequest) -> Reply | BaseException:
        route = self.routes.get((request.method, request.url))
        if route is None:
            return _reply(404, "404 page not found", "text/plain")
        return route(request)

    @property
    def urls(self) -> list[str]:
        return [f"{r.method} {r.url}" for r in self.requests]

    def requests_to(self, url: str, method: str | None = None) -> list[HttpRequest]:
        return [r for r in self.requests if r.url == url and (method is None or r.method == method)]


def _reply(status: int, body: bytes | str, content_type: str) -> Reply:
    return Reply(
        status=status,
        status_text=_REASONS.get(status, ""),
        headers={"content-type": content_type},
        chunks=[body] if body else [],
    )


def server() -> Server:
    return Server()


def request_json(request: HttpRequest) -> Any:
    assert request.body is not None, f"{request.method} {request.url} has no body"
    return json_module.loads(request.body)


def _by_id(models: list[Model]) -> dict[str, Model]:
    return {model.id: model for model in models}


async def _discovery_error(provider: CustomProvider, transport: FakeTransport) -> DiscoveryError:
    with pytest.raises(DiscoveryError) as info:
        await discover_models(provider, transport)
    return info.value


# ---------------------------------------------------------------------------------------------
# Base URLs


def test_server_and_api_base_urls_are_normalised() -> None:
    cases = [
        # (typed URL, kind, api, server URL, model base URL)
        ("http://localhost:11434", "ollama", "openai-completions", OLLAMA, f"{OLLAMA}/v1"),
        ("http://localhost:11434/", "ollama", "openai-completions", OLLAMA, f"{OLLAMA}/v1"),
        ("http://localhost:11434/v1/", "ollama", "openai-completions", OLLAMA, f"{OLLAMA}/v1"),
        ("localhost:11434//", "ollama", "openai-completions", OLLAMA, f"{OLLAMA}/v1"),
        ("  http://localhost:11434/api/tags ", "ollama", "openai-completions", OLLAMA, f"{OLLAMA}/v1"),
        ("http://localhost:1234/api/v0", "lmstudio", "openai-completions", LMSTUDIO, f"{LMSTUDIO}/v1"),
        ("http://localhost:1234/v1/models", "lmstudio", "openai-completions", LMSTUDIO, f"{LMSTUDIO}/v1"),
        (
            "http://box.lan:8080/v1/chat/completions",
            "llama.cpp",
            "openai-completions",
            "http://box.lan:8080",
            "http://box.lan:8080/v1",
        ),
        ("HTTP://localhost:8000/V1", "vllm", "openai-completions", VLLM, f"{VLLM}/v1"),
        # Hosted OpenAI-compatible APIs keep their path; a bare host gets /v1.
        (
            "https://api.together.ai/v1/",
            "openai-compatible",
            "openai-completions",
            "https://api.together.ai/v1",
            "https://api.together.ai/v1",
        ),
        (
            "https://api.z.ai/api/coding/paas/v4",
            "openai-compatible",
            "openai-completions",
            "https://api.z.ai/api/coding/paas/v4",
            "https://api.z.ai/api/coding/paas/v4",
        ),
        (
            "https://llm.example",
            "openai-compatible",
            "openai-responses",
            "https://llm.example/v1",
            "https://llm.example/v1",
        ),
        (
            "https://api.deepseek.com/chat/completions",
            "openai-compatible",
            "openai-completions",
            "https://api.deepseek.com/v1",
            "https://api.deepseek.com/v1",
        ),
        # Anthropic-compatible: no version in the base URL (the provider adds /v1/messages).
        (
            "https://api.minimax.io/anthropic/v1/messages",
            "openai-compatible",
            "anthropic-messages",
            "https://api.minimax.io/anthropic",
            "https://api.minimax.io/anthropic",
        ),
        (
            "https://gw.example/v1/",
            "openai-compatible",
            "anthropic-messages",
            "https://gw.example",
            "https://gw.example",
        ),
    ]
    for typed, kind, api, expected_server, expected_base in cases:
        assert server_url(typed, kind, api) == expected_server, typed
        assert api_base_url(typed, kind, api) == expected_base, typed


def test_invalid_base_urls_are_rejected() -> None:
    for bad in ("", "   ", "ftp://host/v1", "http://", "file:///etc/passwd"):
        with pytest.raises(ValueError):
            server_url(bad)
        with pytest.raises(ValueError):
            CustomProvider(name="x", base_url=bad)


# ---------------------------------------------------------------------------------------------
# Configuration and models


def test_provider_defaults() -> None:
    provider = CustomProvider(name=" My server ", base_url="https://llm.example/v1")
    assert provider.name == "My server"
    assert provider.kind == "openai-compatible"
    assert provider.api == "openai-completions"
    assert provider.needs_api_key is True
    ollama = CustomProvider(name="o", kind="ollama", base_url=OLLAMA)
    assert ollama.needs_api_key is False
    assert CustomProvider(name="o", kind="ollama", base_url=OLLAMA, requires_api_key=True).needs_api_key is True
    assert CustomProvider(name="g", base_url="http://x", requires_api_key=False).needs_api_key is False


def test_provider_validation() -> None:
    with pytest.raises(ValueError, match="name"):
        CustomProvider(name="  ", base_url=OLLAMA)
    with pytest.raises(ValueError, match="openai-completions"):
        CustomProvider(name="o", kind="ollama", api="anthropic-messages", base_url=OLLAMA)
    with pytest.raises(ValueError):
        CustomProvider.model_validate({"name": "x", "baseUrl": OLLAMA, "kind": "koboldcpp"})


def test_provider_json_round_trip_and_web_ui_records() -> None:
    provider = CustomProvider(
        name="Box",
        kind="vllm",
        base_url=VLLM,
        api_key="sk-1",
        models=[CustomModelSpec(id="qwen", context_window=32768)],
    )
    data = provider.model_dump()
    assert data["baseUrl"] == VLLM and data["apiKey"] == "sk-1"
    assert data["models"][0]["contextWindow"] == 32768
    assert CustomProvider.model_validate(data) == provider

    # pi web-ui's CustomProvider record: {id, name, type, baseUrl, apiKey?, models?}
    ollama = CustomProvider.model_validate({"id": "uuid-1", "name": "Ollama", "type": "ollama", "baseUrl": OLLAMA})
    assert (ollama.kind, ollama.api) == ("ollama", "openai-completions")
    manual = CustomProvider.model_validate(
        {"id": "uuid-2", "name": "Gateway", "type": "anthropic-messages", "baseUrl": "https://gw.example"}
    )
    assert (manual.kind, manual.api) == ("openai-compatible", "anthropic-messages")


def test_configured_models_of_local_servers_get_local_compat_and_no_key() -> None:
    for kind in ("ollama", "lmstudio", "llama.cpp", "vllm"):
        provider = CustomProvider(name=f"My {kind}", kind=kind, base_url="http://localhost:9999", models=["m1"])
        (model,) = provider.to_models()
        assert model.id == "m1" and model.name == "m1"
        assert model.provider == f"My {kind}"
        assert model.api == "openai-completions"
        assert model.base_url == "http://localhost:9999/v1"
        assert model.compat == LOCAL_SERVER_COMPAT
        assert model.compat["supportsStore"] is False
        assert model.compat["supportsDeveloperRole"] is False
        assert model.compat["supportsReasoningEffort"] is False
        assert model.compat["maxTokensField"] == "max_tokens"
        assert model.compat["supportsStrictMode"] is False
        assert model.cost == ModelCost()
        assert model_requires_api_key(model) is False


def test_configured_models_of_generic_servers() -> None:
    provider = CustomProvider(
        name="Together",
        base_url="https://api.together.ai/v1",
        api_key="tg-key",
        headers={"X-Team": "a"},
        compat={"supportsStore": False},
        models=[
            "meta-llama/Llama-3.3-70B",
            {
                "id": "deepseek-r1",
                "name": "DeepSeek R1",
                "reasoning": True,
                "input": ["text", "image"],
                "contextWindow": 64000,
                "maxTokens": 8000,
                "cost": {"input": 3, "output": 7},
                "headers": {"X-Model": "r1"},
                "compat": {"thinkingFormat": "deepseek"},
                "thinkingLevelMap": {"off": None},
            },
        ],
    )
    plain, r1 = provider.to_models()
    # Generic endpoints: only the configured flags (the provider detects the rest from the URL).
    assert plain.compat == {"supportsStore": False}
    assert plain.headers == {"X-Team": "a"}
    assert (plain.context_window, plain.max_tokens) == (128000, 16384)
    assert model_requires_api_key(plain) is True
    assert "apiKey" not in plain.model_dump() and "tg-key" not in plain.model_dump_json()

    assert r1.name == "DeepSeek R1" and r1.reasoning is True and r1.input == ["text", "image"]
    assert (r1.context_window, r1.max_tokens) == (64000, 8000)
    assert r1.cost.input == 3 and r1.cost.output == 7
    assert r1.headers == {"X-Team": "a", "X-Model": "r1"}
    assert r1.compat == {"supportsStore": False, "thinkingFormat": "deepseek"}
    assert r1.thinking_level_map == {"off": None}


def test_model_compat_overrides_the_kind_defaults() -> None:
    provider = CustomProvider(
        name="vllm box",
        kind="vllm",
        base_url=VLLM,
        compat={"maxTokensField": "max_completion_tokens"},
        models=[{"id": "gpt-oss", "compat": {"supportsReasoningEffort": True}}],
    )
    (model,) = provider.to_models()
    assert model.compat == {
        **LOCAL_SERVER_COMPAT,
        "maxTokensField": "max_completion_tokens",
        "supportsReasoningEffort": True,
    }


def test_anthropic_compatible_models() -> None:
    provider = CustomProvider(
        name="Gateway", api="anthropic-messages", base_url="https://gw.example/v1", models=["claude-x"]
    )
    (model,) = provider.to_models()
    assert model.api == "anthropic-messages"
    assert model.base_url == "https://gw.example"
    assert model.compat is None


# ---------------------------------------------------------------------------------------------
# Ollama


def _ollama_show(request: HttpRequest) -> dict[str, Any]:
    name = request_json(request)["model"]
    shows: dict[str, dict[str, Any]] = {
        "qwen3:8b": {
            "parameters": "temperature 0.6\nnum_ctx                        32768",
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
            "capabilities": ["completion", "tools", "thinking"],
        },
        "llama3.2:3b": {
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
            "capabilities": ["completion", "tools"],
        },
        "gemma3:4b": {  # no tool calling: left out
            "model_info": {"general.architecture": "gemma3", "gemma3.context_length": 131072},
            "capabilities": ["completion", "vision"],
        },
        "qwen2.5vl:7b": {
            "model_info": {"general.architecture": "qwen25vl", "qwen25vl.context_length": 128000},
            "capabilities": ["completion", "tools", "vision"],
        },
        "nomic-embed-text:latest": {
            "model_info": {"general.architecture": "nomic-bert", "nomic-bert.context_length": 2048},
            "capabilities": ["embedding"],
        },
    }
    return shows[name]


def _ollama_transport() -> Server:
    transport = server()
    tags = {
        "models": [
            {
                "name": name,
                "model": name,
                "modified_at": "2026-05-01T10:00:00Z",
                "size": 5_000_000_000,
                "digest": "abc",
                "details": {"format": "gguf", "family": "x", "parameter_size": "8B", "quantization_level": "Q4_K_M"},
            }
            for name in ("qwen3:8b", "llama3.2:3b", "gemma3:4b", "qwen2.5vl:7b", "nomic-embed-text:latest")
        ]
    }
    transport.add("GET", f"{OLLAMA}/api/tags", json=tags)
    transport.add("POST", f"{OLLAMA}/api/show", json=_ollama_show)
    return transport


async def test_ollama_discovery() -> None:
    transport = _ollama_transport()
    provider = CustomProvider(name="Ollama", kind="ollama", base_url=f"{OLLAMA}/v1/")
    models = await discover_models(provider, transport)
    assert [m.id for m in models] == ["qwen3:8b", "llama3.2:3b", "qwen2.5vl:7b"]
    found = _by_id(models)

    qwen = found["qwen3:8b"]
    assert qwen.reasoning is True
    assert qwen.input == ["text"]
    assert qwen.context_window == 32768  # the Modelfile's num_ctx wins over the trained length
    assert qwen.max_tokens == 32768
    assert qwen.api == "openai-completions" and qwen.base_url == f"{OLLAMA}/v1"
    assert qwen.provider == "Ollama"
    assert qwen.compat == LOCAL_SERVER_COMPAT
    assert qwen.cost == ModelCost()
    assert model_requires_api_key(qwen) is False

    llama = found["llama3.2:3b"]
    assert (llama.reasoning, llama.context_window) == (False, 131072)
    assert found["qwen2.5vl:7b"].input == ["text", "image"]

    tags_request = transport.requests_to(f"{OLLAMA}/api/tags")[0]
    assert tags_request.method == "GET" and tags_request.body is None
    # No Content-Type and no Authorization: a simple CORS request, no preflight.
    assert {k.lower() for k in tags_request.headers} == {"accept"}
    shows = transport.requests_to(f"{OLLAMA}/api/show", "POST")
    assert sorted(request_json(r)["model"] for r in shows) == sorted(
        ["qwen3:8b", "llama3.2:3b", "gemma3:4b", "qwen2.5vl:7b", "nomic-embed-text:latest"]
    )
    assert all(r.headers["Content-Type"] == "application/json" for r in shows)


async def test_ollama_models_without_details_are_kept_with_defaults() -> None:
    transport = server()
    transport.add("GET", f"{OLLAMA}/api/tags", json={"models": [{"name": "old:7b"}, {"model": "other:1b"}, {"x": 1}]})
    transport.add("POST", f"{OLLAMA}/api/show", status=500, json={"error": "boom"})
    models = await discover_models(CustomProvider(name="o", kind="ollama", base_url=OLLAMA), transport)
    assert [(m.id, m.context_window, m.reasoning) for m in models] == [
        ("old:7b", 8192, False),
        ("other:1b", 8192, False),
    ]


async def test_ollama_sends_the_key_when_there_is_one() -> None:
    transport = _ollama_transport()
    provider = CustomProvider(name="o", kind="ollama", base_url="https://ollama.example", api_key="secret")
    transport.routes.clear()
    transport.add("GET", "https://ollama.example/api/tags", json={"models": []})
    assert await discover_models(provider, transport) == []
    assert transport.requests[0].headers["Authorization"] == "Bearer secret"


async def test_ollama_empty_list() -> None:
    transport = server().add("GET", f"{OLLAMA}/api/tags", json={"models": []})
    assert await discover_models(CustomProvider(name="o", kind="ollama", base_url=OLLAMA), transport) == []


# ---------------------------------------------------------------------------------------------
# LM Studio

LMSTUDIO_V0 = {
    "object": "list",
    "data": [
        {
            "id": "qwen2-vl-7b-instruct",
            "object": "model",
            "type": "vlm",
            "publisher": "mlx-community",
            "arch": "qwen2_vl",
            "compatibility_type": "mlx",
            "quantization": "4bit",
            "state": "not-loaded",
            "max_context_length": 32768,
        },
        {
            "id": "meta-llama-3.1-8b-instruct",
            "object": "model",
            "type": "llm",
            "publisher": "lmstudio-community",
            "arch": "llama",
            "compatibility_type": "gguf",
            "quantization": "Q4_K_M",
            "state": "loaded",
            "max_context_length": 131072,
            "loaded_context_length": 4096,
            "capabilities": ["tool_use"],
        },
        {
            "id": "text-embedding-nomic-embed-text-v1.5",
            "object": "model",
            "type": "embeddings",
            "publisher": "nomic-ai",
            "arch": "nomic-bert",
            "compatibility_type": "gguf",
            "quantization": "Q4_0",
            "state": "not-loaded",
            "max_context_length": 2048,
        },
    ],
}


async def test_lmstudio_discovery_with_the_rest_api() -> None:
    transport = server().add("GET", f"{LMSTUDIO}/api/v0/models", json=LMSTUDIO_V0)
    provider = CustomProvider(name="LM Studio", kind="lmstudio", base_url=f"{LMSTUDIO}/v1")
    models = await discover_models(provider, transport)
    assert [m.id for m in models] == ["qwen2-vl-7b-instruct", "meta-llama-3.1-8b-instruct"]
    vl, llama = models
    assert vl.input == ["text", "image"] and vl.context_window == 32768
    assert llama.input == ["text"]
    assert llama.context_window == 4096  # the loaded context, not the maximum
    assert llama.reasoning is False  # pi's "trained for tool use" is not reasoning
    assert llama.base_url == f"{LMSTUDIO}/v1" and llama.compat == LOCAL_SERVER_COMPAT
    assert transport.urls == [f"GET {LMSTUDIO}/api/v0/models"]


async def test_lmstudio_falls_back_to_the_openai_list() -> None:
    transport = server().add(
        "GET",
        f"{LMSTUDIO}/v1/models",
        json={
            "object": "list",
            "data": [
                {"id": "openai/gpt-oss-20b", "object": "model", "owned_by": "organization_owner"},
                {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "owned_by": "organization_owner"},
            ],
        },
    )  # /api/v0/models is not scripted: 404, as on LM Studio before 0.3.6
    models = await discover_models(CustomProvider(name="lms", kind="lmstudio", base_url=LMSTUDIO), transport)
    assert [(m.id, m.context_window) for m in models] == [("openai/gpt-oss-20b", 8192)]
    assert transport.urls == [f"GET {LMSTUDIO}/api/v0/models", f"GET {LMSTUDIO}/v1/models"]


async def test_lmstudio_v1_rest_shape_is_understood() -> None:
    v1 = {
        "models": [
            {
                "type": "llm",
                "publisher": "qwen",
                "key": "qwen/qwen3.5-9b",
                "display_name": "Qwen3.5 9B",
                "loaded_instances": [{"id": "qwen/qwen3.5-9b", "config": {"context_length": 16384}}],
                "max_context_length": 262144,
                "capabilities": {"vision": True, "trained_for_tool_use": True},
            },
            {"type": "embedding", "key": "nomic", "max_context_length": 2048},
        ]
    }
    transport = server().add("GET", f"{LMSTUDIO}/api/v0/models", json=v1)
    (model,) = await discover_models(CustomProvider(name="lms", kind="lmstudio", base_url=LMSTUDIO), transport)
    assert (model.id, model.name, model.context_window) == ("qwen/qwen3.5-9b", "Qwen3.5 9B", 16384)
    assert model.input == ["text", "image"] and model.reasoning is False


async def test_lmstudio_does_not_fall_back_on_auth_errors() -> None:
    transport = server().add(
        "GET", f"{LMSTUDIO}/api/v0/models", status=401, json={"error": "Invalid or missing API token"}
    )
    error = await _discovery_error(CustomProvider(name="lms", kind="lmstudio", base_url=LMSTUDIO), transport)
    assert error.status == 401
    assert "Invalid or missing API token" in str(error) and "API key" in str(error)
    assert len(transport.requests) == 1


# ---------------------------------------------------------------------------------------------
# llama.cpp

LLAMA_MODELS = {
    "models": [{"name": "Qwen3-8B-Q4_K_M.gguf", "model": "Qwen3-8B-Q4_K_M.gguf", "type": "model"}],
    "object": "list",
    "data": [
        {
            "id": "Qwen3-8B-Q4_K_M.gguf",
            "object": "model",
            "created": 1760000000,
            "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 40960, "n_embd": 4096, "n_params": 8190735360},
        }
    ],
}


async def test_llama_cpp_discovery_reads_the_runtime_context_from_props() -> None:
    transport = server()
    transport.add("GET", f"{LLAMA_CPP}/v1/models", json=LLAMA_MODELS)
    transport.add(
        "GET",
        f"{LLAMA_CPP}/props",
        json={
            "default_generation_settings": {"n_ctx": 16384, "params": {"n_predict": -1}},
            "total_slots": 1,
            "model_path": "/models/Qwen3-8B-Q4_K_M.gguf",
            "modalities": {"vision": True, "audio": False},
        },
    )
    provider = CustomProvider(name="llama", kind="llama.cpp", base_url=f"{LLAMA_CPP}/v1")
    (model,) = await discover_models(provider, transport)
    assert model.id == "Qwen3-8B-Q4_K_M.gguf"
    assert (model.context_window, model.max_tokens) == (16384, 4096)
    assert model.input == ["text", "image"]
    assert model.reasoning is False
    assert model.base_url == f"{LLAMA_CPP}/v1"
    assert model.compat == LOCAL_SERVER_COMPAT


async def test_llama_cpp_without_props_uses_the_trained_context() -> None:
    transport = server().add("GET", f"{LLAMA_CPP}/v1/models", json=LLAMA_MODELS)
    (model,) = await discover_models(CustomProvider(name="l", kind="llama.cpp", base_url=LLAMA_CPP), transport)
    assert model.context_window == 40960 and model.input == ["text"]


async def test_llama_cpp_router_with_several_models_skips_props() -> None:
    listing = {"object": "list", "data": [{"id": "a.gguf"}, {"id": "b.gguf", "context_length": 2048}]}
    transport = server().add("GET", f"{LLAMA_CPP}/v1/models", json=listing)
    models = await discover_models(CustomProvider(name="l", kind="llama.cpp", base_url=LLAMA_CPP), transport)
    assert [(m.id, m.context_window, m.max_tokens) for m in models] == [("a.gguf", 8192, 4096), ("b.gguf", 2048, 2048)]
    assert transport.urls == [f"GET {LLAMA_CPP}/v1/models"]


# ---------------------------------------------------------------------------------------------
# vLLM


async def test_vllm_discovery() -> None:
    listing = {
        "object": "list",
        "data": [
            {
                "id": "Qwen/Qwen3-32B",
                "object": "model",
                "created": 1760000000,
                "owned_by": "vllm",
                "root": "Qwen/Qwen3-32B",
                "parent": None,
                "max_model_len": 32768,
                "permission": [{"id": "modelperm-1", "object": "model_permission"}],
            },
            {"id": "small-lora", "object": "model", "owned_by": "vllm", "parent": "Qwen/Qwen3-32B"},
        ],
    }
    transport = server().add("GET", f"{VLLM}/v1/models", json=listing)
    provider = CustomProvider(name="vLLM", kind="vllm", base_url=f"{VLLM}/v1/", api_key="token-abc")
    qwen, lora = await discover_models(provider, transport)
    assert (qwen.id, qwen.context_window, qwen.max_tokens) == ("Qwen/Qwen3-32B", 32768, 4096)
    assert (lora.context_window, lora.max_tokens) == (8192, 4096)
    assert qwen.base_url == f"{VLLM}/v1"
    assert transport.requests[0].headers["Authorization"] == "Bearer token-abc"
    # The key stays on the provider, not on the models.
    assert "token-abc" not in qwen.model_dump_json()
    assert model_requires_api_key(qwen) is False


# ---------------------------------------------------------------------------------------------
# Generic OpenAI- and Anthropic-compatible servers


async def test_generic_openai_compatible_discovery() -> None:
    listing = {
        "object": "list",
        "data": [
            {
                "id": "llama-3.3-70b-versatile",
                "object": "model",
                "owned_by": "Meta",
                "context_window": 131072,
                "max_completion_tokens": 32768,
            },
            {
                "id": "vendor/model",
                "name": "Vendor Model",
                "context_length": 65536,
                "top_provider": {"max_completion_tokens": 8192},
            },
            {"id": "bare"},
        ],
    }
    transport = server().add("GET", "https://api.groq.example/openai/v1/models", json=listing)
    provider = CustomProvider(
        name="Groq proxy",
        base_url="https://api.groq.example/openai/v1",
        api_key="gsk",
        models=[{"id": "bare", "name": "Bare (configured)", "contextWindow": 4096}],
    )
    versatile, vendor, bare = await discover_models(provider, transport)
    assert (versatile.context_window, versatile.max_tokens) == (131072, 32768)
    assert (vendor.name, vendor.context_window, vendor.max_tokens) == ("Vendor Model", 65536, 8192)
    # A configured entry overrides what the server reports for the same id.
    assert (bare.name, bare.context_window, bare.max_tokens) == ("Bare (configured)", 4096, 4096)
    assert versatile.compat is None and model_requires_api_key(versatile) is True
    assert transport.requests[0].headers["Authorization"] == "Bearer gsk"


async def test_anthropic_compatible_discovery() -> None:
    listing = {
        "data": [
            {
                "type": "model",
                "id": "claude-sonnet-4-5",
                "display_name": "Claude Sonnet 4.5",
                "created_at": "2025-09-29",
            }
        ],
        "has_more": False,
        "first_id": "claude-sonnet-4-5",
        "last_id": "claude-sonnet-4-5",
    }
    transport = server().add("GET", "https://gw.example/v1/models?limit=1000", json=listing)
    provider = CustomProvider(name="gw", api="anthropic-messages", base_url="https://gw.example", api_key="sk-ant")
    (model,) = await discover_models(provider, transport)
    assert (model.id, model.name, model.api, model.base_url) == (
        "claude-sonnet-4-5",
        "Claude Sonnet 4.5",
        "anthropic-messages",
        "https://gw.example",
    )
    headers = transport.requests[0].headers
    assert headers["x-api-key"] == "sk-ant" and "Authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"


async def test_provider_method_and_default_transport() -> None:
    transport = server().add("GET", f"{VLLM}/v1/models", json={"data": [{"id": "m"}]})
    set_default_transport(transport)
    try:
        (model,) = await CustomProvider(name="v", kind="vllm", base_url=VLLM).discover_models()
    finally:
        set_default_transport(None)
    assert model.id == "m"


# ---------------------------------------------------------------------------------------------
# Errors


async def test_cors_errors_explain_the_fix_for_each_server() -> None:
    expected = {
        "ollama": ("OLLAMA_ORIGINS", OLLAMA, f"{OLLAMA}/api/tags"),
        "lmstudio": ("Enable CORS", LMSTUDIO, f"{LMSTUDIO}/api/v0/models"),
        "llama.cpp": ("--cors-origins", LLAMA_CPP, f"{LLAMA_CPP}/v1/models"),
        "vllm": ("--allowed-origins", VLLM, f"{VLLM}/v1/models"),
        "openai-compatible": ("Access-Control-Allow-Origin", "https://llm.example/v1", "https://llm.example/v1/models"),
    }
    for kind, (fix, base, url) in expected.items():
        transport = server().add("GET", url, error=TransportError("TypeError: Failed to fetch", cors_suspected=True))
        error = await _discovery_error(CustomProvider(name="p", kind=kind, base_url=base), transport)
        message = str(error)
        assert error.cors_suspected is True and error.kind == kind and error.url == url
        assert fix in message, (kind, message)
        assert "proxy" in message, kind
        assert url in message and "Failed to fetch" in message
        assert "running" in message
        assert "mixed content" not in message  # localhost / https: no mixed-content problem
    lms = cors_help("lmstudio", LMSTUDIO)
    assert "lms server start --cors" in lms


async def test_cors_error_for_a_lan_address_mentions_mixed_content() -> None:
    url = "http://192.168.1.20:11434/api/tags"
    transport = server().add("GET", url, error=TransportError("Failed to fetch", cors_suspected=True))
    error = await _discovery_error(
        CustomProvider(name="o", kind="ollama", base_url="http://192.168.1.20:11434"), transport
    )
    assert "mixed content" in str(error) and "OLLAMA_ORIGINS" in str(error)


async def test_connection_errors_without_cors_say_the_server_is_unreachable() -> None:
    transport = server().add("GET", f"{VLLM}/v1/models", error=TransportError("Connection refused"))
    error = await _discovery_error(CustomProvider(name="v", kind="vllm", base_url=VLLM), transport)
    assert error.cors_suspected is False
    assert str(error).startswith("vLLM model discovery failed: could not connect")
    assert "Connection refused" in str(error) and "running" in str(error)
    assert "proxy" not in str(error)


async def test_non_json_answers_give_clear_errors() -> None:
    transport = server().add(
        "GET", f"{OLLAMA}/api/tags", body="<!doctype html><html><body>Welcome to nginx</body></html>"
    )
    error = await _discovery_error(CustomProvider(name="o", kind="ollama", base_url=OLLAMA), transport)
    assert "did not answer with JSON" in str(error)
    assert "Welcome to nginx" in str(error)
    assert f"Ollama is what runs at {OLLAMA}" in str(error)


async def test_wrong_shapes_give_clear_errors() -> None:
    cases = [
        ("ollama", OLLAMA, f"{OLLAMA}/api/tags", {"data": []}, "'models' list"),
        ("ollama", OLLAMA, f"{OLLAMA}/api/tags", [1, 2], "'models' list"),
        ("vllm", VLLM, f"{VLLM}/v1/models", {"object": "list"}, "'data' list"),
        ("vllm", VLLM, f"{VLLM}/v1/models", {"data": {"id": "m"}}, "'data' list"),
        ("llama.cpp", LLAMA_CPP, f"{LLAMA_CPP}/v1/models", {"data": [{"name": "m"}, 3]}, 'string "id"'),
        ("lmstudio", LMSTUDIO, f"{LMSTUDIO}/api/v0/models", "just a string", "'data' list"),
        ("openai-compatible", "https://x.example", "https://x.example/v1/models", None, "'data' list"),
    ]
    for kind, base, url, answer, expected in cases:
        transport = server()
        if answer is None:
            transport.add("GET", url, body="null")
        else:
            transport.add("GET", url, json=answer)
        error = await _discovery_error(CustomProvider(name="p", kind=kind, base_url=base), transport)
        assert expected in str(error), (kind, str(error))
        assert "unexpected answer from " + url in str(error)


async def test_http_errors_carry_the_server_message() -> None:
    # llama.cpp / OpenAI style
    transport = server().add(
        "GET",
        f"{LLAMA_CPP}/v1/models",
        status=503,
        json={"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
    )
    error = await _discovery_error(CustomProvider(name="l", kind="llama.cpp", base_url=LLAMA_CPP), transport)
    assert error.status == 503
    assert str(error) == f"llama.cpp model discovery failed: {LLAMA_CPP}/v1/models answered HTTP 503: Loading model."

    # vLLM style: top-level message
    transport = server().add(
        "GET", f"{VLLM}/v1/models", status=401, json={"object": "error", "message": "Unauthorized", "code": 401}
    )
    error = await _discovery_error(CustomProvider(name="v", kind="vllm", base_url=VLLM), transport)
    assert "HTTP 401: Unauthorized" in str(error) and "set one for this provider" in str(error)

    # Unknown path on something that is not Ollama
    error = await _discovery_error(CustomProvider(name="o", kind="ollama", base_url=OLLAMA), server())
    assert error.status == 404
    assert "HTTP 404: 404 page not found" in str(error) and "Ollama is what runs at" in str(error)

    # Generic server, empty body
    transport = server().add("GET", "https://x.example/v1/models", status=500, body=b"")
    error = await _discovery_error(CustomProvider(name="Mine", base_url="https://x.example"), transport)
    assert str(error).startswith("Model discovery for Mine failed: https://x.example/v1/models answered HTTP 500")
    assert "Internal Server Error" in str(error)


async def test_aborted_discovery_raises_abort_error() -> None:
    controller = AbortController()
    controller.abort()
    transport = _ollama_transport()
    with pytest.raises(AbortError):
        await discover_models(CustomProvider(name="o", kind="ollama", base_url=OLLAMA), transport, controller.signal)


# ---------------------------------------------------------------------------------------------
# Registry


async def test_register_custom_provider_makes_models_available() -> None:
    provider = CustomProvider(name="My Ollama", kind="ollama", base_url=OLLAMA, api_key="k")
    try:
        models = await discover_models(provider, _ollama_transport())
        registered = register_custom_provider(provider, models)
        assert [m.id for m in registered] == ["qwen3:8b", "llama3.2:3b", "qwen2.5vl:7b"]
        assert get_model("My Ollama", "qwen3:8b") is registered[0]
        assert "My Ollama" in get_providers()
        assert get_custom_provider("My Ollama") is provider
        assert provider in get_custom_providers()
        assert custom_provider_api_key("My Ollama") == "k"

        # Registering again (after a refresh) replaces the models.
        register_custom_provider(provider, models[:1])
        assert [m.id for m in get_models("My Ollama")] == ["qwen3:8b"]
    finally:
        assert unregister_custom_provider("My Ollama") is True
    assert get_models("My Ollama") == []
    assert get_custom_provider("My Ollama") is None
    assert custom_provider_api_key("My Ollama") is None
    assert unregister_custom_provider("My Ollama") is False


def test_register_custom_provider_with_configured_models() -> None:
    provider = CustomProvider(name="Manual", base_url="https://llm.example/v1", models=["a", "b"])
    try:
        register_custom_provider(provider)
        assert [m.id for m in get_models("Manual")] == ["a", "b"]
        assert custom_provider_api_key("Manual") is None
    finally:
        unregister_custom_provider("Manual")


def test_register_custom_provider_rejects_clashes() -> None:
    with pytest.raises(ValueError, match="built-in provider"):
        register_custom_provider(CustomProvider(name="openai", base_url="https://x.example", models=["m"]))
    provider = CustomProvider(name="Mine", base_url="https://x.example")
    stranger = Model(id="m", api="openai-completions", provider="someone-else")
    with pytest.raises(ValueError, match="belongs to provider"):
        register_custom_provider(provider, [stranger])
    assert get_custom_provider("Mine") is None
