"""Cross-API request checks: pydantic-model tool parameters, mapping arguments, the never-raise
contract, and registration."""

from __future__ import annotations

from provider_helpers import HI, Reply, f_ant, f_chat, f_gem, f_resp, request_of
from pydantic import BaseModel

from py_agent.ai import get_api_provider, get_api_providers
from py_agent.ai.providers import (
    BUILTIN_STREAM_FUNCTIONS,
    ProviderStreamOptions,
    register_builtin_providers,
    stream_openai_completions,
)


class Address(BaseModel):
    city: str


class Params(BaseModel):
    name: str
    address: Address


def _ctx() -> dict[str, object]:
    return {**HI, "tools": [{"name": "save", "description": "Save", "parameters": Params}]}


async def test_pydantic_tool_parameters_become_json_schema() -> None:
    schema = Params.model_json_schema()
    _, chat = await request_of(f_chat(), _ctx())
    assert chat["tools"][0]["function"]["parameters"] == schema
    _, resp = await request_of(f_resp(), _ctx())
    assert resp["tools"][0]["parameters"] == schema
    _, gem = await request_of(f_gem(), _ctx())
    assert gem["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == schema
    _, ant = await request_of(f_ant(), _ctx())
    assert ant["tools"][0]["input_schema"] == {
        "type": "object",
        "properties": schema["properties"],
        "required": schema["required"],
        "$defs": schema["$defs"],
    }


async def test_stream_functions_take_mappings_and_never_raise() -> None:
    from provider_helpers import FakeTransport

    transport = FakeTransport([Reply(chunks=['data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'])])
    model = f_chat().model_dump()
    final = await stream_openai_completions(model, HI, {"apiKey": "KEY", "httpTransport": transport}).result()  # type: ignore[arg-type]
    assert final.stop_reason == "stop"
    broken = await stream_openai_completions({"id": 1}, HI, None).result()  # type: ignore[arg-type]
    assert broken.stop_reason == "error" and broken.error_message.startswith("Invalid stream arguments")


async def test_tool_choice_option() -> None:
    _, body = await request_of(f_chat(), _ctx(), tool_choice="required")
    assert body["tool_choice"] == "required"
    _, body = await request_of(f_ant(), _ctx(), tool_choice="any")
    assert body["tool_choice"] == {"type": "any"}
    _, body = await request_of(f_gem(), _ctx(), tool_choice="none")
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


def test_builtin_providers_are_registered_idempotently() -> None:
    register_builtin_providers()
    register_builtin_providers()
    for api, function in BUILTIN_STREAM_FUNCTIONS.items():
        provider = get_api_provider(api)
        # Registered as a lazy wrapper that imports the provider module on its first request.
        assert provider is not None and provider.stream is provider.stream_simple
        assert provider.stream.__name__ == function.__name__, (api, provider.stream.__name__)
    builtin = [p for p in get_api_providers() if p.api in BUILTIN_STREAM_FUNCTIONS]
    assert len(builtin) == len(BUILTIN_STREAM_FUNCTIONS) == 4
    assert ProviderStreamOptions(service_tier="flex").service_tier == "flex"
