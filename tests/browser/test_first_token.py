"""The user's message is saved and shown although its save now follows the request (in Chromium).

The page saves the message to IndexedDB after the request has left (py_agent/app/chat.py
``_save_soon``; bench/first_token.py measures why): it must still be in IndexedDB and shown, in its
place, when the request fails, and after a reload right after sending.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        app.add_provider("Mock", mock, ["mock-model"], api="openai-completions", key="sk-first-token-0001")
        yield app


def open_by_title(app: App, title: str) -> None:
    sessions = app.py("list_sessions")["sessions"]
    session = next(s for s in sessions if s["title"] == title)
    app.page.evaluate("(id) => { location.hash = `#/s/${encodeURIComponent(id)}`; }", session["id"])
    app.page.locator("#transcript .msg.user", has_text=title).wait_for()
    app.switched()


def test_a_failed_request_keeps_the_message_saved_and_shown(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.py("set_model", provider="Mock", id="mock-model")
    mock.reset()
    body = {"error": {"message": "bad request", "type": "invalid_request_error"}}
    mock.script([{"fault": {"type": "http", "status": 400, "body": body}}])
    app.type_and_enter("Kept although the request fails")
    page.locator("#transcript .msg-error").wait_for()
    app.wait_idle()
    assert app.user_texts() == ["Kept although the request fails"]
    assert "Kept although the request fails" in json.dumps(app.idb_dump())
    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    open_by_title(app, "Kept although the request fails")
    assert app.user_texts() == ["Kept although the request fails"]
    assert page.locator("#transcript .msg").evaluate_all("els => els.map((e) => e.classList.contains('user'))") == [
        True,
        False,
    ]


def test_a_reload_right_after_sending_loses_nothing(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.py("set_model", provider="Mock", id="mock-model")
    mock.reset()
    mock.script([{"text": "A slow reply", "delay_ms": 3000}])
    # Long, so that its write is still under way when the page goes (unless committed at once).
    text = "Sent just before a reload." + " Every word of it counts." * 4_000
    app.type_and_enter(text)
    wait_until(lambda: len(mock.requests) == 1, interval=0.002)  # the request has left; no reply yet
    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    assert text in json.dumps(app.idb_dump())
    open_by_title(app, "Sent just before a reload.")
    assert app.user_texts() == [text]
