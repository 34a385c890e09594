"""What the app says when something goes wrong, and the checks before saving (CPython).

The error views (py_agent/app/errors.py, network.py), the base-URL checks of the custom-provider
form, the context-window estimate, Regenerate and Stop, and the model search ranking.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.ai.custom import CustomProvider, register_custom_provider, unregister_custom_provider
from py_agent.ai.transport import HttpRequest, TransportError, set_default_transport
from py_agent.app.catalog import search_models
from py_agent.app.chat import error_view, estimate_tokens
from py_agent.app.controller import WebApp
from py_agent.app.errors import BROWSER_REFUSED, classify_error, clean_text, describe_error, key_rejected
from py_agent.app.keys import MemoryTabStore
from py_agent.app.network import check_base_url, set_page_origin, unreachable_advice
from py_agent.app.storage import MemoryBackend
from py_agent.testing.mock_server import MockProviderServer

ORIGIN = "https://chat.example.org"
FETCH_REFUSED = (
    "Connection error: Failed to fetch (http://127.0.0.1:9). The browser refused or could not complete the "
    "request: this is how it reports a server that does not allow calls from this page (CORS), an unreachable "
    "host and being offline alike."
)


@pytest.fixture(autouse=True)
def page_origin() -> Iterator[None]:
    set_page_origin(ORIGIN)
    yield
    set_page_origin("")


@pytest.fixture
def ollama() -> Iterator[CustomProvider]:
    provider = CustomProvider(name="Home Ollama", kind="ollama", base_url="http://localhost:11434")
    register_custom_provider(provider, [provider.make_model("llama3")])
    yield provider
    unregister_custom_provider(provider.name)


def assistant(error: str, stop: str = "error", provider: str = "anthropic", text: str = "") -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": content, "provider": provider, "stopReason": stop, "errorMessage": error}


def assert_readable(view: dict[str, Any]) -> None:
    words = json.dumps(view)
    for leak in ("Error:", "Exception", "pydantic", "Traceback", "`", "<page origin>", "app.example"):
        assert leak not in words, (leak, words)


# ---- classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "kind"),
    [
        (FETCH_REFUSED, "unreachable"),
        ("Connection error: ConnectError: [Errno 111] Connection refused", "unreachable"),
        ("Connection error: lost mid-reply: network error", "lost"),
        ("Connection error: Request timed out.", "timeout"),
        ("Stream stalled: no data for 1.5s", "stalled"),
        ("Stream ended unexpectedly: no message_stop received", "cut_off"),
        ("Invalid JSON in SSE data: {oops", "bad_data"),
        ('401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', "http"),
        ("Server requested 3600s retry delay (max: 60s). Slow down", "http"),
        ("No API key for provider: openai", "no_key"),
    ],
)
def test_stored_errors_are_classified(stored: str, kind: str) -> None:
    assert classify_error(stored).kind == kind


@pytest.mark.parametrize(
    ("stored", "rejected"),
    [
        ('401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', True),
        ("403 Forbidden", True),
        ("401 status code (no body)", True),
        ('{"error":{"code":400,"message":"API key not valid. Please pass a valid API key."}}', True),
        ('{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}', True),
        ("400 Incorrect API key provided: sk-...", True),
        # No answer came: whatever the text holds (a port, an address), the key was not refused.
        ("Connection error: Failed to fetch (http://127.0.0.1:4010/v1/chat/completions).", False),
        ("Connection error: ConnectError: [Errno 111] Connection refused (http://10.0.4.3:40312)", False),
        ("Connection error: lost mid-reply: network error after 401 bytes", False),
        ("Stream stalled: no data for 403s", False),
        ('500 {"error":{"message":"upstream 4010 failed"}}', False),
        ("429 Too many requests", False),
    ],
)
def test_only_a_refused_key_reopens_the_key_dialog(stored: str, rejected: bool) -> None:
    assert key_rejected(stored) is rejected


def test_never_connected_and_lost_mid_reply_say_different_things() -> None:
    never = error_view(assistant(FETCH_REFUSED))
    lost = error_view(assistant("Connection error: lost mid-reply: network error", text="Half of it"))
    assert never is not None and lost is not None
    assert never["kind"] == "unreachable" and "never reached Anthropic" in never["text"]
    assert "lost" not in never["text"]
    assert lost["kind"] == "lost" and "lost before the reply was complete" in lost["text"]
    assert "The part that arrived is kept" in lost["text"]
    assert_readable(never)
    assert_readable(lost)


def test_proxy_advice_only_where_it_fits(ollama: CustomProvider) -> None:
    # Anthropic answers web pages (direct-browser header): no proxy advice for it.
    anthropic = error_view(assistant(FETCH_REFUSED, provider="anthropic"))
    assert anthropic is not None and "proxy" not in anthropic["text"].lower()
    # A provider not known to answer web pages gets it when the browser refused the request.
    mistral = error_view(assistant(FETCH_REFUSED, provider="mistral"))
    assert mistral is not None and "CORS proxy" in mistral["text"]
    # Outside a browser a refused connection is not CORS: no proxy advice, even for a custom server.
    cpython = error_view(assistant("Connection error: ConnectError: refused", provider=ollama.name))
    assert cpython is not None and "proxy" not in cpython["text"].lower()
    assert "Check that Ollama is running at http://localhost:11434" in cpython["text"]
    # A browser-refused local server: its own setting, with this page's real origin; no mixed
    # content note (localhost is allowed from https pages).
    browser = error_view(assistant(FETCH_REFUSED, provider=ollama.name))
    assert browser is not None
    assert f"OLLAMA_ORIGINS={ORIGIN} ollama serve" in browser["text"]
    assert "CORS" in browser["text"] and "mixed content" not in browser["text"]
    assert_readable(browser)


def test_mixed_content_is_explained_only_where_it_applies() -> None:
    remote = CustomProvider(name="LAN box", kind="vllm", base_url="http://192.168.1.20:8000")
    register_custom_provider(remote, [remote.make_model("m")])
    try:
        view = error_view(assistant(FETCH_REFUSED, provider=remote.name))
        assert view is not None and "mixed content" in view["text"]
        set_page_origin("http://localhost:8000")
        view = error_view(assistant(FETCH_REFUSED, provider=remote.name))
        assert view is not None and "mixed content" not in view["text"]
        assert "--allowed-origins '[\"http://localhost:8000\"]'" in view["text"]
    finally:
        unregister_custom_provider(remote.name)


def test_http_errors_quote_the_provider_after_our_words() -> None:
    view = describe_error(
        '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
        label="Anthropic",
    )
    assert view["kind"] == "http" and view["status"] == 401
    assert view["text"].startswith("Anthropic did not accept the API key (HTTP 401)")
    assert view["quote"] == "invalid x-api-key"
    server = describe_error("503 Service Unavailable", label="OpenAI")
    assert "server error (HTTP 503)" in server["text"] and server["quote"] == "Service Unavailable"
    delay = describe_error("Server requested 3600s retry delay (max: 60s). Slow down", label="X")
    assert "asked to wait 3600s" in delay["text"] and delay["quote"] == "Slow down"


def test_no_python_exception_text_or_library_link_reaches_the_page() -> None:
    raw = (
        "1 validation error for CustomProvider\nbase_url\n  Value error, Not an http(s) URL: 'ftp://x' "
        "[type=value_error, input_value='ftp://x', input_type=str]\n    For further information visit "
        "https://errors.pydantic.dev/2.11/v/value_error"
    )
    assert "errors.pydantic.dev" not in clean_text(raw)
    view = describe_error("Invalid stream arguments: ValidationError: bad")
    assert_readable(view)
    other = describe_error("RuntimeError: something odd happened")
    assert other["kind"] == "other" and other["text"] == "The request failed: something odd happened"
    assert "quote" not in other


def test_stop_says_what_was_kept_only_when_something_was() -> None:
    nothing = error_view(assistant("Request was aborted", stop="aborted"))
    some = error_view(assistant("Request was aborted", stop="aborted", text="The first words"))
    assert nothing is not None and some is not None
    assert nothing["text"] == "Stopped before anything arrived."
    assert some["text"] == "Stopped. The partial reply is kept."


def test_advice_for_cloud_providers_names_no_server_setting() -> None:
    assert unreachable_advice("openai", browser=True) == "Check your internet connection, then retry."


# ---- base URLs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("htp:/bad url", "spaces"),
        ("not a url", "spaces"),
        ("localhost:11434", "must start with http:// or https://"),
        ("javascript:alert(1)", "must start with http:// or https://"),
        ("ftp://files.example/v1", "uses ftp:"),
        ("http://", "no host name"),
        ("http://host:port/v1", "port"),
        ("", "Enter the server's base URL"),
    ],
)
def test_bad_base_urls_are_refused_with_a_reason(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        check_base_url(url, origin="http://localhost:8000")


def test_good_base_urls_pass_unchanged() -> None:
    assert check_base_url(" http://localhost:11434 ", origin=ORIGIN) == "http://localhost:11434"
    assert check_base_url("https://api.example.com/v1", origin=ORIGIN) == "https://api.example.com/v1"
    with pytest.raises(ValueError, match="mixed content"):
        check_base_url("http://192.168.1.20:8000", origin=ORIGIN)
    assert check_base_url("http://192.168.1.20:8000", origin="http://localhost:8000")


# ---- the app ----------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))


async def make_app() -> WebApp:
    app = WebApp(MemoryBackend(), MemoryTabStore(), Recorder(), demo_tokens_per_second=0, plugins=[])
    await app.start()
    return app


async def dispatch(app: WebApp, command: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await app.dispatch(command, json.dumps(args)))
    return result


async def idle(app: WebApp) -> None:
    assert app.chat is not None
    for _ in range(500):
        await app.chat.wait_idle()
        if not app.chat.streaming:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run did not end")


@pytest.mark.parametrize("url", ["htp:/bad url", "not a url", "javascript:alert(1)", "ftp://files.example/v1"])
async def test_save_refuses_bad_base_urls_readably(url: str) -> None:
    app = await make_app()
    provider = {"name": "Bad", "kind": "openai-compatible", "baseUrl": url, "models": ["m"]}
    result = await dispatch(app, "save_custom_provider", provider=provider, discover=False)
    assert "error" in result and "pydantic" not in result["error"] and "http" in result["error"]
    assert "Bad" not in [p["name"] for p in (await dispatch(app, "custom_providers"))["providers"]]
    check = await dispatch(app, "check_base_url", url=url)
    assert check["ok"] is False and check["problem"] == result["error"]


async def test_a_provider_without_models_is_not_saved() -> None:
    with MockProviderServer() as server:
        app = await make_app()
        provider = {"name": "Empty", "kind": "openai-compatible", "baseUrl": f"{server.url}/v1", "models": []}
        result = await dispatch(app, "save_custom_provider", provider=provider, key="k", discover=False)
        assert result["ok"] is False and result["needModels"] is True
        assert "Type the model ids" in result["problem"]
        assert "Empty" not in [p["name"] for p in (await dispatch(app, "custom_providers"))["providers"]]
        provider["models"] = ["typed-model"]
        saved = await dispatch(app, "save_custom_provider", provider=provider, key="k", discover=False)
        assert saved["ok"] is True and saved["models"] == ["typed-model"]
        await dispatch(app, "delete_custom_provider", name="Empty")


class RefusingTransport:
    """What the page's fetch does for a server that is down or does not allow the page (CORS)."""

    async def send(self, request: HttpRequest, signal: Any = None) -> Any:
        raise TransportError(f"Failed to fetch ({request.url}). {BROWSER_REFUSED}.", cors_suspected=True)


async def test_discovery_advice_names_the_page_origin() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = await make_app()
    await dispatch(app, "init", origin="http://localhost:8123")
    provider = {"name": "Off", "kind": "ollama", "baseUrl": f"http://127.0.0.1:{port}"}
    # In CPython a refused connection is just that: no CORS talk, no Python error class.
    result = await dispatch(app, "discover", provider=provider)
    assert result["ok"] is False and f"Is Ollama running at http://127.0.0.1:{port}" in result["problem"]
    assert "ConnectError" not in result["problem"] and "OLLAMA_ORIGINS" not in result["problem"]
    # As the browser reports it: the origin setting with this page's real origin.
    set_default_transport(RefusingTransport())
    try:
        result = await dispatch(app, "discover", provider=provider)
    finally:
        set_default_transport(None)
    problem = result["problem"]
    assert "`" not in problem and "<page origin>" not in problem and "app.example" not in problem
    assert "OLLAMA_ORIGINS=http://localhost:8123 ollama serve" in problem
    assert f"Check that Ollama is running at http://127.0.0.1:{port}" in problem


async def test_send_warns_before_exceeding_the_context_window() -> None:
    app = await make_app()
    await dispatch(app, "new_session")
    # The offline demo sends nothing to a provider: no warning, however long.
    demo = await dispatch(app, "check_send", text="x" * 1_000_000)
    assert demo["over"] is False and demo["tokens"] >= 250_000
    await dispatch(app, "set_model", provider="openai", id="gpt-4o")
    small = await dispatch(app, "check_send", text="hello")
    assert small["over"] is False and small["contextWindow"] == 128_000
    big = await dispatch(app, "check_send", text="x" * 1_000_000)
    assert big["over"] is True and big["tokens"] >= 250_000
    assert estimate_tokens([{"role": "user", "content": [{"type": "text", "text": "abcd" * 10}]}]) == 10


async def test_regenerate_a_good_reply_makes_a_new_branch() -> None:
    app = await make_app()
    await dispatch(app, "new_session")
    await dispatch(app, "send", text="Hello there.")
    await idle(app)
    assert app.chat is not None
    reply = app.chat.transcript()[-1]
    assert reply["message"]["role"] == "assistant" and reply["message"]["stopReason"] == "stop"
    assert "errorView" not in reply
    assert (await dispatch(app, "retry", entry_id=reply["entryId"]))["status"] == "sent"
    await idle(app)
    items = app.chat.transcript()
    assert [i["message"]["role"] for i in items] == ["user", "assistant"]
    assert items[-1]["entryId"] != reply["entryId"]
    assert items[-1]["branch"]["count"] == 2 and reply["entryId"] in items[-1]["branch"]["ids"]


async def test_chat_errors_against_the_mock_server() -> None:
    with MockProviderServer() as server:
        app = await make_app()
        provider = {
            "name": "Mock Claude",
            "kind": "openai-compatible",
            "api": "anthropic-messages",
            "baseUrl": server.url,
            "models": ["mock-claude"],
        }
        await dispatch(app, "save_custom_provider", provider=provider, discover=False)
        await dispatch(app, "save_key", provider="Mock Claude", key="sk-test-errors-1", remember=True)
        await dispatch(app, "new_session")
        await dispatch(app, "set_model", provider="Mock Claude", id="mock-claude")
        server.script([{"text": "word " * 200, "chunk_size": 5, "fault": {"type": "drop", "after": 20}}])
        await dispatch(app, "send", text="talk")
        await idle(app)
        assert app.chat is not None
        lost = app.chat.transcript()[-1]["errorView"]
        assert lost["kind"] == "lost" and "kept" in lost["text"]
        server.script([{"fault": {"type": "http", "status": 401}}])
        await dispatch(app, "send", text="again")
        await idle(app)
        denied = app.chat.transcript()[-1]["errorView"]
        assert denied["kind"] == "http" and denied["status"] == 401 and denied["quote"]
        await dispatch(app, "delete_custom_provider", name="Mock Claude")


# ---- model search -----------------------------------------------------------------------------


def test_opus_lists_opus_models_first() -> None:
    found = search_models("opus")
    assert found and all("opus" in m.id.lower() for m in found[:10])
    assert not any("sonnet" in m.id for m in found[: sum(1 for m in found if "opus" in m.id.lower())])


def test_exact_id_ranks_first() -> None:
    found = search_models("gpt-5-mini")
    assert found[0].id == "gpt-5-mini"


def test_no_query_lists_each_providers_newest_first() -> None:
    found = [m for m in search_models("") if m.provider == "anthropic"]
    names = [m.name for m in found[:3]]
    assert "3" not in " ".join(names), names  # Claude 3.x models are not the newest


def test_local_finds_local_and_custom_providers_by_name(ollama: CustomProvider) -> None:
    lan = CustomProvider(name="Team gateway", base_url="https://llm.team.example/v1")
    register_custom_provider(lan, [lan.make_model("team-model")])
    try:
        local = {m.provider for m in search_models("local")}
        assert "Home Ollama" in local and "Team gateway" not in local
        assert not local & {"anthropic", "openai", "google", "openrouter", "demo"}
        assert [m.id for m in search_models("home ollama")][:1] == ["llama3"]
        assert [m.id for m in search_models("team gateway")][:1] == ["team-model"]
    finally:
        unregister_custom_provider(lan.name)


async def test_mixed_content_does_not_apply_through_the_proxy() -> None:
    app = await make_app()
    await dispatch(app, "init", origin=ORIGIN)
    provider = {"name": "LAN", "kind": "vllm", "baseUrl": "http://192.168.1.20:8000", "models": ["m"]}
    refused = await dispatch(app, "save_custom_provider", provider=provider, discover=False)
    assert "mixed content" in refused["error"]
    assert (await dispatch(app, "check_base_url", url=provider["baseUrl"]))["ok"] is False
    await dispatch(app, "set_setting", key="proxyUrl", value="https://proxy.example")
    assert (await dispatch(app, "check_base_url", url=provider["baseUrl"], use_proxy=True))["ok"] is True
    saved = await dispatch(app, "save_custom_provider", provider={**provider, "useProxy": True}, discover=False)
    assert saved["ok"] is True
    await dispatch(app, "delete_custom_provider", name="LAN")
