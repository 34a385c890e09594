"""One session on screen, one session open (web/app.js: navigate, route; py_agent/app/controller.py).

A saved session clicked at any moment of a fresh visit's start ends up open: its heading, its model,
its controls, and the next message goes to the provider with its history. "New chat" with a
10,000-message session open (just imported, or opened from the list) shows the empty chat at once
and keeps it, whatever the long session's open does meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import READY_TIMEOUT_MS, App, open_app

from py_agent.ai.types import AssistantMessage, TextContent, Usage, UserMessage
from py_agent.session import Session
from py_agent.session.jsonl import export_jsonl
from py_agent.testing.mock_server import MockProviderServer

TITLE = "First question about tides"
HISTORY = [TITLE, "First answer.", "Second question", "Second answer."]


@pytest.fixture(scope="module")
def saved_profile(browser: Any, base_url: str, mock: MockProviderServer) -> dict[str, Any]:
    """A browser profile's storage (IndexedDB included) holding one session of two exchanges with
    the mock provider, its key and the provider, and a newer empty-titled session above it."""
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key="sk-switching-0001")
        app.new_chat()
        app.choose_model("mock claude", "Mock Claude")
        mock.reset()
        mock.script([{"text": HISTORY[1]}, {"text": HISTORY[3]}])
        for text in HISTORY[::2]:
            app.type_and_enter(text)
            app.wait_idle()
        assert app.assistant_texts() == HISTORY[1::2]
        # Another session, newer: the one clicked is not the first row, nor the open one.
        app.new_chat()
        app.py("set_model", provider="demo", id="demo-scripted")
        app.type_and_enter("Some other chat")
        app.wait_idle()
        state: dict[str, Any] = app.page.context.storage_state(indexed_db=True)
        return state


def fresh_page(browser: Any, state: dict[str, Any]) -> Any:
    # A first visit (no service worker yet) of a profile that has the saved sessions.
    context = browser.new_context(viewport={"width": 1280, "height": 860}, storage_state=state)
    return context.new_page()


def session_row(page: Any) -> Any:
    return page.locator("#session-list .session-open", has_text=TITLE)


def time_to_ready(browser: Any, base_url: str, state: dict[str, Any]) -> float:
    """Seconds from the session's row on the first screen to the app's declaring itself ready."""
    page = fresh_page(browser, state)
    try:
        page.goto(base_url + "/?demo-tps=0")
        session_row(page).wait_for(timeout=READY_TIMEOUT_MS)
        shown = time.monotonic()
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
        return time.monotonic() - shown
    finally:
        page.context.close()


def test_a_session_clicked_at_any_moment_of_the_start_opens_with_its_history(
    browser: Any, base_url: str, mock: MockProviderServer, saved_profile: dict[str, Any]
) -> None:
    ready = time_to_ready(browser, base_url, saved_profile)
    # 15 moments from the row's first showing to the app's ready (denser near the end, where the
    # app routes the empty address), then 5 after it.
    before = [ready * f for f in (0, 0.15, 0.3, 0.45, 0.6, 0.7, 0.78, 0.84, 0.88, 0.91, 0.94, 0.96, 0.98, 0.99, 1.0)]
    after = [0.03, 0.15, 0.5, 1.5, 3.0]
    points = [("from first screen", d) for d in before] + [("after ready", d) for d in after]
    assert len(points) == 20
    failures: list[str] = []
    for i, (anchor, delay) in enumerate(points):
        page = fresh_page(browser, saved_profile)
        try:
            page.goto(base_url + "/?demo-tps=0")
            row = session_row(page)
            row.wait_for(timeout=READY_TIMEOUT_MS)
            if anchor == "after ready":
                page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
            time.sleep(delay)
            row.click()
            page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
            page.locator("html:not([data-switching])").wait_for(state="attached", timeout=60_000)
            app = App(page, base_url)
            heading = page.locator("#session-title").inner_text()
            if heading != TITLE:
                failures.append(f"{i} ({anchor} + {delay:.2f} s): heading {heading!r}")
                continue
            assert app.user_texts() == HISTORY[::2] and app.assistant_texts() == HISTORY[1::2]
            assert "Mock Claude" in page.locator("#model-button").inner_text()
            assert page.locator("#transcript .edit-msg:enabled").count() == 2
            mock.reset()
            mock.script([{"text": f"Third answer {i}."}])
            app.type_and_enter("Third question")
            page.locator("#transcript .msg.assistant", has_text=f"Third answer {i}.").wait_for(timeout=60_000)
            sent = [m for r in mock.requests for m in r["body"]["messages"]]
            texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in sent]
            if texts != [*HISTORY, "Third question"]:
                failures.append(f"{i} ({anchor} + {delay:.2f} s): the provider got {texts!r}")
        finally:
            page.context.close()
    assert not failures, f"time to ready {ready:.2f} s; " + "; ".join(failures)


# ---- "New chat" with a long session open ----

LONG = 10_000  # messages


def long_session_file(folder: Path) -> tuple[Path, str]:
    session = Session.create()
    session.append_model_change("demo", "demo-scripted")
    session.append_session_info("Ten thousand")
    for i in range(LONG // 2):
        session.append_message(
            UserMessage(content=[TextContent(text=f"Question {i}")], timestamp=1_700_000_000_000 + i)
        )
        session.append_message(
            AssistantMessage(
                content=[TextContent(text=f"Answer {i}: " + "lorem ipsum " * 6)],
                api="faux",
                provider="demo",
                model="demo-scripted",
                usage=Usage(input=10, output=20, total_tokens=30),
                timestamp=1_700_000_000_000 + i,
            )
        )
    path = folder / "ten-thousand.jsonl"
    path.write_text(export_jsonl(session), encoding="utf-8")
    return path, session.title


@pytest.fixture(scope="module")
def long_app(browser: Any, base_url: str) -> Iterator[App]:
    # No memory snapshot's worker beside the long session (it is not what is tested here).
    with open_app(browser, base_url, query="?demo-tps=0&no-snapshot") as app:
        yield app


def new_chat_shows_at_once(app: App) -> None:
    page = app.page
    page.locator("#new-chat").click()
    # Behaviour, not a benchmark: the empty chat is on screen within a second.
    page.locator("#session-title", has_text="New chat").wait_for(timeout=1_000)
    page.locator("#transcript .msg").first.wait_for(state="detached", timeout=1_000)
    new_chat_stays(app)


def new_chat_stays(app: App) -> None:
    """Once every switch has ended, the new chat is the session open, and the one on screen."""
    page = app.page
    page.locator("html:not([data-switching])").wait_for(state="attached", timeout=120_000)
    page.wait_for_timeout(200)  # anything the long session's open still had to draw
    assert page.locator("#session-title").inner_text() == "New chat"
    assert page.locator("#transcript .msg").count() == 0
    state = page.evaluate("() => ({ hash: location.hash, persisted: window.pyAgentApp.state?.persisted })")
    assert state == {"hash": "#/", "persisted": False}


def open_finished(page: Any, title: str) -> float:
    """Seconds until the long session is open (its heading, no switch under way)."""
    started = time.monotonic()
    page.locator("#session-title", has_text=title).wait_for(timeout=120_000)
    page.locator("html:not([data-switching])").wait_for(state="attached", timeout=120_000)
    return time.monotonic() - started


def test_new_chat_with_a_long_session_open_shows_the_empty_chat_at_once(long_app: App, tmp_path: Path) -> None:
    page = long_app.page
    path, title = long_session_file(tmp_path)
    opens = []
    for _ in range(10):  # just imported (each import is a copy of its own)
        page.locator("#import-file").set_input_files(str(path))
        opens.append(open_finished(page, title))
        new_chat_shows_at_once(long_app)
    for _ in range(10):  # opened from the list
        page.locator("#session-list .session-open", has_text=title).first.click()
        opens.append(open_finished(page, title))
        new_chat_shows_at_once(long_app)
    print(f"opening the 10,000-message session took {min(opens):.1f}-{max(opens):.1f} s")


def test_new_chat_while_a_long_session_still_opens_is_the_chat_left_open(long_app: App, tmp_path: Path) -> None:
    # Python reads and checks the long session on the page's thread, a few seconds: a click of
    # "New chat" meanwhile is handled when it lets go, and the new chat is what stays open (the
    # open that ends later does not put its session back).
    page = long_app.page
    path, title = long_session_file(tmp_path)
    page.locator("#import-file").set_input_files(str(path))
    page.locator("#transcript .msg").first.wait_for(timeout=120_000)  # its preview: the open is under way
    page.locator("#new-chat").click()
    new_chat_stays(long_app)
    for _ in range(2):
        page.locator("#session-list .session-open", has_text=title).first.click()
        page.locator("#transcript .msg").first.wait_for(timeout=120_000)
        page.locator("#new-chat").click()
        new_chat_stays(long_app)
