"""The app says what happened, in Chromium: failed requests and the custom-provider form.

Against the mock provider server: a request that never connected (a refused port), one the
browser refused because the server does not allow the page (CORS), one whose connection broke
mid-reply, an HTTP error with the provider's own words; the built-in Anthropic provider (which
answers web pages) gets no proxy advice. The form checks base URLs where they are typed and asks
for model ids when the server lists none.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app

from py_agent.testing.mock_server import MockProviderServer

LEAKS = ("Error:", "Exception", "pydantic", "Traceback", "`", "<page origin>", "app.example", "TypeError")


@pytest.fixture(scope="module")
def strict() -> Iterator[MockProviderServer]:
    """A server that does not allow the page: its CORS preflights are refused."""
    with MockProviderServer(cors=False) as server:
        yield server


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer, strict: MockProviderServer) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key="sk-truthful-0001")
        strict_model = {"id": "strict-model", "name": "Strict Model"}
        app.add_provider("Strict Server", strict, [strict_model], key="sk-truthful-0002")
        yield app


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def failed_reply(app: App, text: str, timeout: float = 30_000) -> str:
    app.type_and_enter(text)
    box = app.page.locator("#transcript .msg.assistant").last.locator(".msg-error[role='alert']")
    box.wait_for(timeout=timeout)
    app.wait_idle()
    words = box.locator(".msg-error-text").inner_text()
    for leak in LEAKS:
        assert leak not in words, (leak, words)
    return words


def test_a_request_that_never_connected_says_so(app: App) -> None:
    port = closed_port()
    app.py(
        "save_custom_provider",
        provider={"name": "Dead Server", "kind": "openai-compatible", "baseUrl": f"http://127.0.0.1:{port}/v1"},
        discover=False,
    )
    # Not saved without a model: the user is asked for ids instead.
    assert "Dead Server" not in [p["name"] for p in app.py("custom_providers")["providers"]]
    app.py(
        "save_custom_provider",
        provider={
            "name": "Dead Server",
            "kind": "openai-compatible",
            "baseUrl": f"http://127.0.0.1:{port}/v1",
            "models": ["dead-model"],
        },
        key="sk-dead",
        discover=False,
    )
    app.new_chat()
    app.choose_model("dead server", "dead-model")
    words = failed_reply(app, "Anyone there?")
    assert words.startswith("The request never reached Dead Server: no connection could be made.")
    assert "lost" not in words
    assert f"Check the base URL at http://127.0.0.1:{port}" in words
    assert f"requests from {app.base}" in words  # this page's real origin
    assert "CORS proxy" in words  # a custom server may not allow web pages
    assert "mixed content" not in words  # an http page: it does not apply
    app.py("delete_custom_provider", name="Dead Server")


def test_a_server_that_refuses_the_page_gets_cors_advice(app: App, strict: MockProviderServer) -> None:
    strict.reset()
    strict.script([{"text": "never sent"}])
    app.new_chat()
    app.choose_model("strict", "Strict Model")
    words = failed_reply(app, "Hello strict server")
    assert words.startswith("The request never reached Strict Server")
    assert "does not allow this page (CORS)" in words and f"requests from {app.base}" in words
    assert "CORS proxy" in words
    assert not [r for r in strict.requests if r["method"] == "POST"]  # the browser never sent it


def test_anthropic_refused_by_the_network_gets_no_proxy_advice(app: App) -> None:
    page = app.page
    page.route("https://api.anthropic.com/**", lambda route: route.abort())
    try:
        app.py("save_key", provider="anthropic", key="sk-ant-truthful-0003", remember=True)
        app.new_chat()
        app.py("set_model", provider="anthropic", id="claude-sonnet-4-5")
        words = failed_reply(app, "Hello Claude")
    finally:
        page.unroute("https://api.anthropic.com/**")
        app.py("delete_key", provider="anthropic")
    assert words.startswith("The request never reached Anthropic")
    assert "proxy" not in words.lower() and "Check your internet connection" in words


def test_a_connection_lost_mid_reply_keeps_what_arrived(app: App, mock: MockProviderServer) -> None:
    mock.reset()
    long = " ".join(f"w{i}" for i in range(300))
    mock.script([{"text": long, "chunk_size": 6, "delay_ms": 10, "fault": {"type": "drop", "after": 25}}])
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    words = failed_reply(app, "Tell me everything")
    assert words.startswith("The connection to the provider was lost before the reply was complete.")
    assert "The part that arrived is kept." in words and "never reached" not in words
    assert app.assistant_texts()[-1].startswith("w0 w1")


def test_an_http_error_quotes_the_provider_after_our_words(app: App, mock: MockProviderServer) -> None:
    mock.reset()
    mock.script([{"fault": {"type": "http", "status": 400, "message": "max_tokens: 999999 > 64000"}}])
    app.new_chat()
    words = failed_reply(app, "Please answer")
    assert words.startswith("Mock Claude refused the request (HTTP 400).")
    quote = app.page.locator("#transcript .msg-error .msg-error-quote q").last
    assert quote.inner_text() == "max_tokens: 999999 > 64000"
    assert words.index("HTTP 400") < words.index("max_tokens")


def open_provider_form(app: App) -> Any:
    page = app.page
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Custom providers").click()
    page.locator("#add-provider").click()
    return page.locator("form.provider-form")


def close_settings(app: App) -> None:
    app.page.keyboard.press("Escape")
    app.page.locator("dialog[open]").wait_for(state="detached")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("htp:/bad url", "is not a URL"),
        ("not a url", "is not a URL"),
        ("javascript:alert(1)", "must start with http:// or https://"),
        ("ftp://files.example/v1", "uses ftp:"),
    ],
)
def test_bad_base_urls_are_refused_at_the_field(app: App, url: str, reason: str) -> None:
    page = app.page
    form = open_provider_form(app)
    form.locator("#provider-kind").select_option("openai-compatible")
    form.locator("#provider-name").fill("Typo Server")
    field = form.locator("#provider-url")
    field.fill(url)
    field.blur()
    problem = form.locator("#provider-url-problem")
    problem.wait_for()
    assert reason in problem.inner_text() and "pydantic" not in problem.inner_text()
    assert field.get_attribute("aria-invalid") == "true"
    form.locator("#provider-models").fill("m1")
    form.locator("button[type=submit]").click()
    page.wait_for_timeout(300)
    assert form.is_visible() and problem.is_visible()
    assert "Typo Server" not in [p["name"] for p in app.py("custom_providers")["providers"]]
    # Fixed, the message goes away.
    field.fill("http://localhost:1")
    field.blur()
    problem.wait_for(state="hidden")
    assert field.get_attribute("aria-invalid") is None
    close_settings(app)


def test_a_server_listing_no_model_lets_the_user_type_ids(app: App) -> None:
    page = app.page
    page.route(
        "http://lists-nothing.test/v1/models",
        lambda route: route.fulfill(
            status=200,
            content_type="application/json",
            headers={"access-control-allow-origin": "*", "access-control-allow-headers": "*"},
            body=json.dumps({"object": "list", "data": []}),
        ),
    )
    try:
        form = open_provider_form(app)
        form.locator("#provider-kind").select_option("openai-compatible")
        form.locator("#provider-name").fill("Empty Server")
        form.locator("#provider-url").fill("http://lists-nothing.test/v1")
        form.locator("button", has_text="Test connection").click()
        result = form.locator(".discovery.ok")
        result.wait_for()
        assert "lists no model: type the model ids" in result.inner_text()
        form.locator("button[type=submit]").click()
        form.locator(".discovery.bad", has_text="Not saved").wait_for()
        models = form.locator("#provider-models")
        assert models.evaluate("el => el === document.activeElement")
        assert "Empty Server" not in [p["name"] for p in app.py("custom_providers")["providers"]]
        models.fill("my-model")
        form.locator("button[type=submit]").click()
        page.locator("#add-provider").wait_for()
        saved = [p for p in app.py("custom_providers")["providers"] if p["name"] == "Empty Server"]
        assert saved and saved[0]["models"] == ["my-model"]
        close_settings(app)
    finally:
        page.unroute("http://lists-nothing.test/v1/models")
        app.py("delete_custom_provider", name="Empty Server")


def test_ollama_advice_names_this_page_without_markup(app: App) -> None:
    form = open_provider_form(app)
    form.locator("#provider-kind").select_option("ollama")
    form.locator("#provider-name").fill("My Ollama")
    form.locator("#provider-url").fill(f"http://127.0.0.1:{closed_port()}")
    form.locator("button", has_text="Test connection").click()
    result = form.locator(".discovery.bad")
    result.wait_for(timeout=15_000)
    text = result.inner_text()
    assert f"OLLAMA_ORIGINS={app.base} ollama serve" in text
    for leak in LEAKS:
        assert leak not in text, (leak, text)
    close_settings(app)
