"""Before Python is ready, the page draws the sessions list and the open session's last messages
from IndexedDB itself, and the message box takes typing; a message sent meanwhile is shown as
queued, then sent once Python is ready (web/app.js, drawEarly)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import READY_TIMEOUT_MS

# What the page showed at the moment it marked itself drawn (<html data-early="drawn">).
RECORD_EARLY = """
new MutationObserver((_, observer) => {
  const root = document.documentElement;
  if (root?.dataset.early !== "drawn") return;
  observer.disconnect();
  window.__early = {
    app: root.dataset.app,
    appShown: !document.getElementById("app").hidden,
    sessions: document.getElementById("session-list").textContent,
    transcript: document.getElementById("transcript").textContent,
    inputEnabled: !document.getElementById("input").disabled,
    focused: document.activeElement?.id ?? null,
    codeBlocks: [...document.querySelectorAll("#transcript .code-block pre code")].map((c) => c.textContent),
    paragraphs: document.querySelectorAll("#transcript .text-block p").length,
    markup: document.querySelectorAll("#transcript .user-text *, #transcript img").length,
  };
}).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-early"] });
"""


@pytest.fixture(scope="module")
def context(browser: Any) -> Iterator[Any]:
    # No service worker: its fetches would bypass the routes below (and every visit then starts
    # Python the long way, so "before Python" lasts seconds).
    context = browser.new_context(viewport={"width": 1280, "height": 860}, service_workers="block")
    context.add_init_script(RECORD_EARLY)
    yield context
    context.close()


class HeldPackages:
    """Holds the site's packages (site-packages.bin) back until released: Python cannot be ready
    before, whatever the machine's speed."""

    def __init__(self, page: Any) -> None:
        self.held: list[Any] = []
        self.released = False
        page.route("**/site-packages.bin*", self.handle)

    def handle(self, route: Any) -> None:
        if self.released:
            route.continue_()
        else:
            self.held.append(route)

    def release(self) -> None:
        self.released = True
        for route in self.held:
            route.continue_()
        self.held.clear()


def wait_early(page: Any) -> dict[str, Any]:
    page.locator("html[data-early='drawn'], html[data-app='ready']").first.wait_for(
        state="attached", timeout=READY_TIMEOUT_MS
    )
    early = page.evaluate("() => window.__early ?? null")
    assert early is not None, "the page was not drawn before Python was ready"
    return dict(early)


def test_a_message_sent_before_python_is_ready_is_queued_then_sent(context: Any, base_url: str) -> None:
    page = context.new_page()
    held = HeldPackages(page)
    page.goto(base_url.rstrip("/") + "/?demo-tps=0")
    early = wait_early(page)
    assert early["app"] == "loading" and early["appShown"] and early["inputEnabled"]
    assert early["focused"] == "input"
    page.locator("#input").fill("Hello before Python")
    page.locator("#input").press("Enter")
    queued = page.locator("#queue .queued", has_text="Hello before Python")
    queued.wait_for()
    # Shown as queued while Python is still starting.
    assert page.get_attribute("html", "data-app") == "loading"
    assert "Waiting for Python" in (queued.text_content() or "")
    assert page.locator("#input").input_value() == ""
    assert page.locator("#transcript .msg").count() == 0

    held.release()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    page.locator("#transcript .msg.user", has_text="Hello before Python").wait_for()
    page.locator("#transcript .msg.assistant:not(.streaming)", has_text="offline demo").wait_for(timeout=60_000)
    assert page.locator("#transcript .msg.user").count() == 1  # sent once
    page.locator("#queue .queued").first.wait_for(state="detached")
    page.locator(".session-row").first.wait_for()
    page.close()


def test_the_next_visit_draws_sessions_and_transcript_before_python(context: Any, base_url: str) -> None:
    page = context.new_page()
    page.goto(base_url.rstrip("/") + "/?demo-tps=0")
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    row = page.locator(".session-row").first
    session_id = row.get_attribute("data-id")
    page.close()

    page = context.new_page()
    held = HeldPackages(page)
    page.goto(f"{base_url.rstrip('/')}/?demo-tps=0#/s/{session_id}")
    early = wait_early(page)
    held.release()
    assert early["app"] == "loading"
    assert "Hello before Python" in early["sessions"]  # the session's title, in the list
    assert "Hello before Python" in early["transcript"]  # its messages
    assert "offline demo" in early["transcript"]
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    # Python's transcript replaced the page's drawing: the same messages, now editable.
    page.locator("#transcript:not([aria-busy]) .edit-msg:not([disabled])").first.wait_for()
    assert page.locator("#transcript .msg").count() == 2
    page.close()


def test_the_early_drawing_renders_a_little_markdown_and_no_markup_from_messages(context: Any, base_url: str) -> None:
    page = context.new_page()
    page.goto(base_url.rstrip("/") + "/?demo-tps=0")
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    text = 'Write some code <svg onload="window.__xss = 1"></svg> <b>plain</b>'
    page.locator("#input").fill(text)
    page.locator("#input").press("Enter")
    page.locator("#transcript .msg.assistant:not(.streaming) .code-block").first.wait_for(timeout=60_000)
    session_id = page.evaluate("() => window.pyAgentApp.currentId")
    page.close()

    page = context.new_page()
    held = HeldPackages(page)
    page.goto(f"{base_url.rstrip('/')}/?demo-tps=0#/s/{session_id}")
    early = wait_early(page)
    # Drawn by the page before its Markdown renderer is loaded: the reply's paragraphs and its two
    # code blocks; the user's text as text.
    assert early["app"] == "loading"
    assert len(early["codeBlocks"]) == 2 and "export function debounce" in early["codeBlocks"][0]
    assert early["paragraphs"] == 2
    assert early["markup"] == 0 and text in early["transcript"]
    held.release()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    page.locator("#transcript:not([aria-busy]) .code-block code.hljs").first.wait_for()
    assert page.locator("#transcript .user-text").first.text_content() == text
    assert page.evaluate("() => window.__xss") is None
    page.close()


def test_python_starts_once_the_early_drawing_is_painted_without_waiting_for_the_app(
    context: Any, base_url: str
) -> None:
    """Python's start waits for the first screen (web/boot/boot.js), which web/boot/early.js draws: not for
    web/app.js to draw it again with its own views (here app.js never arrives)."""
    page = context.new_page()
    held = HeldPackages(page)
    page.route("**/app.js", lambda route: None)  # never answered
    page.goto(base_url.rstrip("/") + "/?demo-tps=0", wait_until="commit")  # no load event without app.js
    wait_early(page)
    page.wait_for_function("() => window.pyAgent?.marks?.['first screen'] !== undefined", timeout=READY_TIMEOUT_MS)
    marks = page.evaluate(
        """() => ({ ...window.pyAgent.marks,
          drawn: performance.getEntriesByName("py-agent:early-drawn")[0].startTime })"""
    )
    held.release()
    assert marks["first screen"] >= marks["drawn"]
    # Not the wait's limit (300 ms, web/boot/boot.js FIRST_SCREEN_MS): the drawing's next frame.
    assert marks["first screen"] - max(marks["waiting for the first screen"], marks["drawn"]) < 250, marks
    page.close()


# What web/boot/early-start.js read for the first screen as the page started (it hands it to web/boot/early.js,
# which takes it off the window).
RECORD_READ_AHEAD = """
Object.defineProperty(window, "pyAgentEarlyRecords", {
  configurable: true,
  get() { return window.__readAhead; },
  set(value) { window.__readAhead = value; },
});
"""


def test_a_visit_served_by_the_service_worker_draws_what_was_read_as_the_page_started(
    browser: Any, base_url: str
) -> None:
    """A later visit, served by the service worker as a user's is: the records are read by the
    page's first script (web/boot/early-start.js, before the modules), and drawn before Python."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.add_init_script(RECORD_EARLY + RECORD_READ_AHEAD)
    try:
        page = context.new_page()
        page.goto(base_url.rstrip("/") + "/?demo-tps=0")
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
        page.locator("#input").fill("Hello from a served visit")
        page.locator("#input").press("Enter")
        page.locator("#transcript .msg.assistant:not(.streaming)", has_text="offline demo").wait_for(timeout=60_000)
        session_id = page.evaluate("() => window.pyAgentApp.currentId")
        # The service worker has the site, and the memory snapshot is kept: the next visit is a warm one.
        page.locator("html[data-offline]").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
        page.evaluate("async () => { await window.pyAgent.boot.stored; }")
        page.close()

        page = context.new_page()
        page.goto(f"{base_url.rstrip('/')}/?demo-tps=0#/s/{session_id}")
        early = wait_early(page)
        assert page.evaluate("() => !!navigator.serviceWorker.controller")
        assert early["app"] == "loading" and early["inputEnabled"] and early["focused"] == "input"
        assert "Hello from a served visit" in early["sessions"]
        assert "Hello from a served visit" in early["transcript"] and "offline demo" in early["transcript"]
        read = page.evaluate("""async () => {
          const read = await window.__readAhead;
          return read && {
            sessions: read.records.length, count: read.count, id: read.session.id,
            entries: read.session.entries.length, entryCount: read.session.record.meta.entryCount,
          };
        }""")
        assert read is not None, "web/boot/early-start.js read nothing"
        assert read["sessions"] == read["count"] == 1 and read["id"] == session_id
        assert read["entries"] == read["entryCount"] >= 2
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
        page.locator("#transcript:not([aria-busy]) .edit-msg:not([disabled])").first.wait_for()
        assert page.locator("#transcript .msg").count() == 2
        page.close()
    finally:
        context.close()


# A later visit as web/boot/early-start.js sees it (no service worker in this context: a missing API
# counts as "not a first visit"), with web/boot/early.js, the module that draws the first screen,
# never arriving.
NO_SERVICE_WORKER_API = "Object.defineProperty(Navigator.prototype, 'serviceWorker', { get: () => undefined });"


def test_the_message_box_takes_typing_as_soon_as_the_page_is_parsed(browser: Any, base_url: str) -> None:
    """The app's frame and its focused message box are shown by the page's first script once the
    page is parsed, before the first screen's module (late on a busy page) draws into them; a boot
    that fails meanwhile still shows its error on the boot screen."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, service_workers="block")
    context.add_init_script(NO_SERVICE_WORKER_API)
    held: list[Any] = []
    try:
        page = context.new_page()
        page.route("**/boot/early.js*", lambda route: held.append(route))
        page.goto(base_url.rstrip("/") + "/?demo-tps=0", wait_until="commit")
        page.locator("#input").wait_for(state="visible")
        assert page.locator("#boot-screen").is_hidden()
        assert page.evaluate("() => document.activeElement?.id") == "input"
        page.keyboard.type("typed before the first screen")
        assert page.locator("#input").input_value() == "typed before the first screen"
        assert held, "web/boot/early.js was not held back"
        page.close()

        page = context.new_page()
        page.route("**/boot/early.js*", lambda route: held.append(route))
        page.route("**/boot/boot.js*", lambda route: route.fulfill(status=404, body="not here"))
        page.goto(base_url.rstrip("/") + "/?demo-tps=0", wait_until="commit")
        page.locator("html[data-state='error']").wait_for(state="attached", timeout=30_000)
        page.locator("#boot-screen").wait_for(state="visible")
        assert page.locator("#app").is_hidden()
        assert "boot.js is missing" in page.locator("#boot-screen").inner_text()
        page.close()
    finally:
        context.close()
