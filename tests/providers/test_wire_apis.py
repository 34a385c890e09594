"""The wire-API descriptors: one list that the registry, the catalogue, custom providers, the form
and the mock server all read."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from py_agent.ai import get_api_provider
from py_agent.ai.custom import CustomProvider, api_base_url, custom_provider_types, server_url
from py_agent.ai.models import KNOWN_APIS
from py_agent.ai.providers import WIRE_APIS, wire_api
from py_agent.ai.providers.descriptor import CUSTOM_FORM_FIELDS
from py_agent.app.catalog import api_label
from py_agent.testing.mock_server import MockProviderServer, _api_for


def test_each_provider_module_exports_its_descriptor_from_the_list() -> None:
    assert len({api.id for api in WIRE_APIS}) == len(WIRE_APIS)
    for api in WIRE_APIS:
        module = importlib.import_module(f"py_agent.ai.providers.{api.module}")
        assert module.DESCRIPTOR is api
        assert getattr(module, api.stream_function).__name__ == api.stream_function
        assert wire_api(api.id) is api
    assert wire_api("faux") is None


def test_the_registry_and_the_catalogue_read_the_list() -> None:
    assert tuple(api.id for api in WIRE_APIS) == KNOWN_APIS
    for api in WIRE_APIS:
        provider = get_api_provider(api.id)
        assert provider is not None and provider.stream.__name__ == api.stream_function
        assert api_label(api.id) == api.label
    assert api_label("faux") == "faux"


def test_descriptors_import_without_the_provider_modules() -> None:
    code = (
        "import sys, py_agent\n"
        "from py_agent.ai.providers import WIRE_APIS\n"
        "import py_agent.ai.custom, py_agent.app.catalog, py_agent.testing.mock_server\n"
        "loaded = [a.module for a in WIRE_APIS if f'py_agent.ai.providers.{a.module}' in sys.modules]\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_mock_server_routes_every_api_at_its_base_url() -> None:
    server = MockProviderServer()
    try:
        for api in WIRE_APIS:
            base = server.base_url(api.id)
            path = (base + api.request_path.format(model="models/m-1")).removeprefix(server.url)
            routed, model = _api_for(path)
            assert routed == api.id, path
            assert model == ("m-1" if "{model}" in api.request_path else "")
        assert _api_for("/v1/models") == (None, "")
        with pytest.raises(ValueError):
            server.base_url("faux")
    finally:
        server._server.server_close()


def test_the_form_offers_local_servers_then_every_custom_wire_api() -> None:
    types = custom_provider_types()
    values = [t["value"] for t in types]
    assert values == [
        "ollama",
        "lmstudio",
        "llama.cpp",
        "vllm",
        "openai-compatible",
        "openai-responses",
        "anthropic-compatible",
    ]
    offered = {t["api"] for t in types}
    assert offered == {api.id for api in WIRE_APIS if api.custom_form is not None}
    assert "google-generative-ai" not in offered
    for entry in types:
        assert set(entry["fields"]) <= set(CUSTOM_FORM_FIELDS)
        # What the form saves is a valid provider.
        provider = CustomProvider(name="x", kind=entry["kind"], api=entry["api"], base_url="http://localhost:9")
        assert (provider.kind, provider.api) == (entry["kind"], entry["api"])
    assert types[0]["defaultBaseUrl"] == "http://localhost:11434"


def test_custom_providers_accept_only_apis_with_a_form_entry() -> None:
    with pytest.raises(ValueError, match="openai-completions, openai-responses, anthropic-messages"):
        CustomProvider(name="g", api="google-generative-ai", base_url="https://g.example")


def test_base_url_shapes_come_from_the_descriptor() -> None:
    # Version in the base URL (OpenAI): added when the URL has no path; pasted endpoints removed.
    assert api_base_url("https://h.example", api="openai-responses") == "https://h.example/v1"
    assert api_base_url("https://h.example/v1/responses", api="openai-responses") == "https://h.example/v1"
    # Version in the request path (Anthropic): the base URL is the root.
    assert api_base_url("https://h.example/v1/messages", api="anthropic-messages") == "https://h.example"
    assert server_url("https://h.example/v1", api="anthropic-messages") == "https://h.example"
