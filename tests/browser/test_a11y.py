"""Accessibility of the chat app in Chromium, checked by axe-core (from npm, pinned in
tests/a11y/package-lock.json and installed there with `npm ci`).

Every state a user meets is checked at a desktop and at a phone size, and none may have a serious
or critical violation: the ready page, the session drawer (phone), the key dialog, a conversation
with tool cards and highlighted code, the files panel, the model picker and every Settings tab.
axe's rule that a control's visible text is part of its accessible name
(`label-content-name-mismatch`, off by default) is switched on. Also: a finished reply is no
longer announced as "in progress", and scrollable code and output can be reached with Tab.

`test_readme_screenshot` makes docs/screenshot.png (the README's first chat) when
PY_AGENT_UPDATE_SCREENSHOT=1, and otherwise checks that the committed one is a screenshot of the
app at the size the test takes it.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

ROOT = Path(__file__).resolve().parents[2]
AXE_DIR = ROOT / "tests" / "a11y"
AXE_SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOT = ROOT / "docs" / "screenshot.png"
KEY = "sk-mock-FAKE-KEY-for-the-a11y-test-7"

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
# (size, colour scheme): both sizes in the light theme, and the phone in the dark one (its own colours).
RUNS = [("desktop", "light"), ("phone", "light"), ("phone", "dark")]

CODE = "def total(numbers: list[int]) -> int:\n    return sum(n for n in numbers if n > 0)  # " + "x" * 160
# A write, an ls and a final answer with a code block wider than the conversation.
CONVERSATION = [
    {
        "tool_calls": [
            {"id": "w1", "name": "write", "arguments": {"path": "notes/plan.md", "content": "# Plan\n\n- sum it\n"}}
        ]
    },
    {"tool_calls": [{"id": "l1", "name": "ls", "arguments": {"path": "notes"}}]},
    {"text": f"Here is the function:\n\n```python\n{CODE}\n```\n\nThe plan is in `notes/plan.md`."},
]


@pytest.fixture(scope="module")
def axe_source() -> str:
    """axe-core's script, installed by `npm ci` in tests/a11y when missing (fails, never skips)."""
    if not AXE_SCRIPT.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is missing: it installs axe-core for this test (npm ci in tests/a11y)", pytrace=False)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=AXE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not AXE_SCRIPT.exists():
            pytest.fail(f"`npm ci` in {AXE_DIR} failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return AXE_SCRIPT.read_text(encoding="utf-8")


def axe_violations(page: Any, axe_source: str) -> list[str]:
    """The serious and critical axe-core violations of the page as it is now, one line per node.

    axe is evaluated through the DevTools protocol, which the page's Content-Security-Policy does
    not govern (the page itself could not load it: scripts only from its own origin)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    found = page.evaluate(
        """async () => {
          const result = await axe.run(document, {
            iframes: false,  // the sandboxed frames are opaque origins, out of axe's reach
            resultTypes: ["violations"],
            rules: { "label-content-name-mismatch": { enabled: true } },
          });
          return result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")}: ${n.failureSummary.replace(/\\s+/g, " ")}`));
        }"""
    )
    return [str(line) for line in found]


class Checker:
    """Runs axe in each named state; the report lists every state's violations at once."""

    def __init__(self, page: Any, axe_source: str) -> None:
        self.page = page
        self.axe_source = axe_source
        self.found: dict[str, list[str]] = {}
        self.states: list[str] = []

    def __call__(self, state: str) -> None:
        self.page.wait_for_timeout(350)  # transitions (drawer, dialogs) finish: axe sees the final colours
        self.states.append(state)
        violations = axe_violations(self.page, self.axe_source)
        if violations:
            self.found[state] = violations

    def report(self) -> str:
        return json.dumps(self.found, indent=1, ensure_ascii=False)


def open_sidebar_if_phone(app: App) -> None:
    if app.page.locator("#open-sidebar").is_visible():
        app.page.locator("#open-sidebar").click()
        app.page.locator("#sidebar").wait_for(state="visible")


def start_tool_conversation(app: App, mock: MockProviderServer) -> None:
    """A chat with the mock provider, up to the key dialog (its first request needs a key)."""
    page = app.page
    app.add_provider("Mock", mock, [{"id": "mock-model", "name": "Mock Model"}], api="openai-completions")
    open_sidebar_if_phone(app)
    app.new_chat()
    app.choose_model("mock model", "Mock Model")
    mock.reset()
    mock.script(CONVERSATION)
    app.type_and_enter("Write a plan, list the folder and show me the code")
    page.locator("dialog[open] #api-key-input").wait_for()


def finish_tool_conversation(app: App) -> None:
    page = app.page
    dialog = page.locator("dialog[open]")
    dialog.locator("#api-key-input").fill(KEY)
    dialog.locator("#key-place-tab").check()
    dialog.locator("#key-test").uncheck()
    dialog.locator("#key-save").click()
    reply = page.locator("#transcript .msg.assistant", has_text="The plan is in")
    reply.wait_for(state="attached", timeout=60_000)
    app.wait_idle()
    # The written file opened the files panel (a full-screen sheet on a phone): back to the chat.
    if page.locator("#side-panel").is_visible():
        page.locator("#side-panel-close").click()
    reply.wait_for()
    cards = page.locator("#transcript details.tool")
    wait_until(lambda: cards.count() == 2)
    for i in range(cards.count()):
        if cards.nth(i).get_attribute("open") is None:
            cards.nth(i).locator("summary").first.click()


@pytest.mark.parametrize(("size", "scheme"), RUNS, ids=[f"{size}-{scheme}" for size, scheme in RUNS])
def test_no_serious_violation_anywhere(
    browser: Any, base_url: str, mock: MockProviderServer, axe_source: str, size: str, scheme: str
) -> None:
    app = open_app(browser, base_url, viewport=SIZES[size])
    page = app.page
    page.emulate_media(color_scheme=scheme)
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == ("rgb(17, 19, 23)" if scheme == "dark" else "rgb(246, 247, 249)"), background
    check = Checker(page, axe_source)
    try:
        page.locator("#welcome").wait_for()
        check("ready page")
        if size == "phone":
            open_sidebar_if_phone(app)
            check("session drawer")
            page.locator("#close-sidebar").click()

        start_tool_conversation(app, mock)
        check("key dialog")
        finish_tool_conversation(app)
        check("conversation with tool cards")

        # The screen reader's view matches the screen: the finished reply is not "in progress".
        labels = page.locator("#transcript .msg.assistant").evaluate_all(
            "(ns) => ns.map((n) => n.getAttribute('aria-label'))"
        )
        assert labels and all(label == "Assistant's reply" for label in labels), labels
        assert page.locator("#transcript [aria-busy='true']").count() == 0
        # The code block wider than the column is reachable with the keyboard, and named.
        code = page.locator("#transcript .code-block pre").last
        assert code.evaluate("(n) => n.scrollWidth > n.clientWidth")
        assert code.get_attribute("tabindex") == "0" and code.get_attribute("aria-label") == "python code"

        page.locator("#transcript .pa-chip", has_text="notes/plan.md").first.click()
        page.locator("#side-panel .pa-file-name", has_text="notes/plan.md").wait_for(timeout=30_000)
        page.locator("#side-panel .pa-view-title", has_text="notes/plan.md").wait_for(timeout=30_000)
        check("files panel")
        page.locator("#side-panel-close").click()
        page.locator("#side-panel").wait_for(state="hidden")

        page.locator("#model-button").click()
        page.locator("dialog[open] .model-row").first.wait_for()
        check("model picker")
        page.keyboard.press("Escape")
        page.locator("dialog[open]").wait_for(state="detached")

        open_sidebar_if_phone(app)
        page.locator("#open-settings").click()
        tabs = page.locator("dialog[open] [role=tab]")
        tabs.first.wait_for()
        names = tabs.all_inner_texts()
        assert len(names) >= 5, names
        for i, name in enumerate(names):
            tabs.nth(i).click()
            page.locator("dialog[open] [role=tabpanel]:not([hidden]) > *").first.wait_for()
            page.wait_for_timeout(300)  # the tab's data (keys, providers, storage) arrives
            check(f"settings: {name}")
        page.keyboard.press("Escape")
    finally:
        page.context.close()
    assert len(check.states) >= 10, check.states
    assert not check.found, f"axe-core ({size}, {scheme}):\n{check.report()}"
    assert not app.page_errors, app.page_errors


def test_focus_never_enters_the_closed_drawer_on_a_phone(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport=PHONE)
    page = app.page
    try:
        page.locator("#welcome").wait_for()
        page.locator("#input").focus()
        inside = []
        for _ in range(25):
            page.keyboard.press("Tab")
            inside.append(page.evaluate("() => Boolean(document.activeElement?.closest('#sidebar'))"))
        assert not any(inside)
        # Open, the drawer is reachable (its search box takes the focus) and named by its landmark.
        page.locator("#open-sidebar").click()
        page.locator("#session-search").wait_for(state="visible")
        assert page.evaluate("() => document.activeElement?.id") == "session-search"
        where = []
        for _ in range(12):  # open, it is modal: Tab stays in it (or leaves the page, for the browser's own bar)
            page.keyboard.press("Tab")
            where.append(
                page.evaluate(
                    "() => document.activeElement?.closest('#sidebar')?.id ?? document.activeElement?.tagName"
                )
            )
        assert set(where) <= {"sidebar", "BODY"} and where.count("sidebar") >= 6, where
        page.locator("#close-sidebar").click()
        page.wait_for_timeout(400)
        assert not page.locator("#session-search").is_visible()
    finally:
        page.context.close()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


SCREENSHOT_SIZE = {"width": 1200, "height": 760}


def test_readme_screenshot(browser: Any, base_url: str, tmp_path: Path) -> None:
    """The README's first chat: the demo model answering with code, in the app as it is."""
    app = open_app(browser, base_url, viewport=SCREENSHOT_SIZE)
    page = app.page
    try:
        app.new_chat()
        app.choose_model("demo", "Demo")
        app.type_and_enter("Show me some code")
        page.locator("#transcript .msg.assistant .code-block").first.wait_for()
        app.wait_idle()
        # The question and the start of the answer, without the notices of a fresh profile.
        for dismiss in page.locator("#toasts .toast button[aria-label='Dismiss']").all():
            dismiss.click()
        page.evaluate("() => { document.activeElement?.blur(); document.getElementById('scroller').scrollTop = 0; }")
        page.wait_for_timeout(300)
        shot = page.screenshot(animations="disabled", caret="hide")
    finally:
        page.context.close()
    assert png_size(shot) == (SCREENSHOT_SIZE["width"], SCREENSHOT_SIZE["height"])
    if os.environ.get("PY_AGENT_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(shot)
    committed = SCREENSHOT.read_bytes()
    assert png_size(committed) == png_size(shot), "docs/screenshot.png: run with PY_AGENT_UPDATE_SCREENSHOT=1"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/screenshot.png)" in readme
