"""A walk through the app on an emulated phone (390 x 844 and 320 x 640, touch, a device scale of
3): every demo suggestion of the welcome screen, run with the demo model, and every panel and
dialog the page has (the Files sheet with a folder tree and a PDF's preview, the session menu and
its dialogs, the model picker, the session drawer and its row menu, each Settings tab with the key
dialog, the custom provider form, the import question and the confirmations). In each state the
page is no wider than the device, no element sticks out of the screen and no control's box leaves
it (see FITS); axe-core finds no serious violation.

One page per size, the states in sequence (each suggestion in a new chat of the same page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_a11y import Checker, axe_source
from test_files_tree import pdf_bytes
from test_workspace_panel import listed, wait_for
from web_app_helpers import App, open_app

__all__ = ["axe_source"]  # axe-core's script, the fixture of test_a11y.py

PHONES = [{"width": 390, "height": 844}, {"width": 320, "height": 640}]

# Copied from web/app.js SUGGESTIONS (the labels): the test finds each button by its name.
SUGGESTIONS = [
    "Watch the agent work (files, Python, JavaScript, subagents)",
    "Analyse a CSV with Python",
    "Draw a chart with JavaScript",
    "Run subagents in parallel",
    "Show me what this app can do",
    "Write some code",
    "Give me a long answer",
    "Make an error (to try Retry)",
]

# What sticks out sideways, for a device `width` px wide:
# - the document (and body) scroll widths, which an emulated phone's layout viewport grows to fit;
# - any shown element whose box leaves [0, width] where no ancestor clips it (a box clipped by a
#   scroller or an overflow: hidden parent makes no pan);
# - any shown control (button, link, field, tab, menu item, tree item, summary) whose part left
#   visible by the boxes that clip it is not all on screen, or which a non-scrolling ancestor cuts
#   (a control in a scroller, as the Settings tab strip, can be scrolled to; one cut by
#   overflow: hidden, between it and its scroller if any, cannot).
FITS = """(width) => {
  const out = [];
  const name = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${[...el.classList].join(".")}`
    + ` "${(el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40)}"`;
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden";
  };
  const clippers = (el) => {
    const found = [];
    for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o !== "visible") found.push([p, o === "auto" || o === "scroll"]);
    }
    return found;
  };
  for (const el of document.querySelectorAll("body *")) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (clippers(el).length === 0 && (r.left < -1 || r.right > width + 1))
      out.push(`sticks out ${Math.round(r.left)}..${Math.round(r.right)}: ${name(el)}`);
  }
  const controls = "button, a[href], input:not([type=hidden]), select, textarea, summary, [role=tab], [role=menuitem], [role=treeitem], [tabindex='0']";
  for (const el of document.querySelectorAll(controls)) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    let left = r.left, right = r.right, cut = false, inScroller = false;
    for (const [p, scrolls] of clippers(el)) {
      const c = p.getBoundingClientRect();
      // (beyond its scroller, a box clips the scroller, not the control)
      if (!scrolls && !inScroller && (r.left < c.left - 1 || r.right > c.right + 1)) cut = true;
      inScroller ||= scrolls;
      left = Math.max(left, c.left);
      right = Math.min(right, c.right);
    }
    if (right - left <= 0) continue;  // scrolled out of its scroller's view
    if (left < -1 || right > width + 1) out.push(`control off screen ${Math.round(left)}..${Math.round(right)}: ${name(el)}`);
    else if (cut) out.push(`control cut ${Math.round(r.left)}..${Math.round(r.right)}: ${name(el)}`);
  }
  const scrollWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
  return { scrollWidth, innerWidth, outside: [...new Set(out)].slice(0, 12) };
}"""


def misfit(page: Any, width: int) -> dict[str, Any] | None:
    """What does not fit a device ``width`` px wide (FITS), or None."""
    found: dict[str, Any] = page.evaluate(FITS, width)
    fits = found["scrollWidth"] <= width and found["innerWidth"] == width and not found["outside"]
    return None if fits else found


class Walk:
    """Checks each state the walk reaches: fits the device (FITS), and axe-core."""

    def __init__(self, app: App, width: int, axe_source: str) -> None:
        self.app = app
        self.page = app.page
        self.width = width
        self.axe = Checker(app.page, axe_source)
        self.misfits: dict[str, Any] = {}

    def __call__(self, state: str) -> None:
        self.axe(state)  # (waits for transitions first)
        found = misfit(self.page, self.width)
        if found:
            self.misfits[state] = found

    def tap(self, locator: Any) -> None:
        locator.tap()

    def escape(self) -> None:
        self.page.keyboard.press("Escape")
        self.page.locator("dialog[open]").wait_for(state="detached")

    def drawer(self) -> None:
        opener = self.page.locator("#open-sidebar")
        if opener.is_visible() and opener.get_attribute("aria-expanded") != "true":
            self.tap(opener)
            self.page.locator("#sidebar").wait_for(state="visible")

    def new_chat(self) -> None:
        self.drawer()
        self.tap(self.page.locator("#new-chat"))
        self.page.locator("#suggestions .suggestion").first.wait_for()
        self.app.switched()

    def session_menu(self, item: str) -> None:
        self.tap(self.page.locator("#session-menu-btn:not([disabled])"))
        self.tap(self.page.get_by_role("menuitem", name=item))


def run_suggestions(walk: Walk) -> None:
    page = walk.page
    for i, label in enumerate(SUGGESTIONS):
        if i:
            walk.new_chat()
        else:
            walk("welcome screen")
        walk.tap(page.get_by_role("button", name=label, exact=True))
        page.locator("#transcript .msg.assistant").first.wait_for(timeout=60_000)
        walk.app.wait_idle(timeout=180_000)
        page.locator("#session-menu-btn:not([disabled])").wait_for(timeout=30_000)
        walk(f"suggestion: {label}")
        # Tool cards, thinking, a subagent's transcript: opened (nested ones too), what they hold fits.
        closed = page.locator("#transcript details:not([open]) > summary:visible")
        if closed.count():
            for _ in range(40):
                if not closed.count():
                    break
                walk.tap(closed.first)
            walk(f"suggestion: {label}, every card opened")


LONG_NAME = "A gateway with a rather long name for a phone"
LONG_WORD = "https://example.com/" + "a_very_long_path_segment_without_a_space/" * 5 + "end"


def long_text_and_attachments(walk: Walk, tmp_path: Path) -> None:
    """A message with a long unbroken word (the session is titled with it), and the composer with
    attachments of long names."""
    page = walk.page
    walk.new_chat()
    walk.app.type_and_enter(f"Look at {LONG_WORD} please")
    page.locator("#transcript .msg.user", has_text="Look at").wait_for()
    walk.app.wait_idle(timeout=60_000)
    walk("a long unbroken word and title")
    names = ["a_rather_long_file_name_of_quarterly_figures_2025_final_v2.csv", "notes.txt"]
    for name in names:
        (tmp_path / name).write_text("region,total\nNorth,120\n")
    page.locator("#attach-input").set_input_files([str(tmp_path / name) for name in names])
    page.locator("#attachments li").nth(1).wait_for()
    walk("composer with attachments")
    for remove in page.locator("#attachments li button").all()[::-1]:
        walk.tap(remove)
    page.locator("#attachments").wait_for(state="hidden")


def files_sheet(walk: Walk, tmp_path: Path) -> None:
    """The Files sheet: a folder of 3 levels (the tree), a PDF's preview, and back to the chat."""
    page = walk.page
    walk.session_menu("Files…")
    panel = page.locator("#side-panel")
    panel.wait_for(state="visible", timeout=20_000)
    panel.locator(".pa-preview").wait_for(timeout=60_000)
    walk("files sheet")
    root = tmp_path / "project"
    names = [
        "project/README_for_the_whole_project.md",
        "project/src/tokenizer_state_machine.py",
        "project/src/fixtures/very_long_fixture_name_for_wrapping_test.json",
    ]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"contents of {name}\n")
    panel.locator("input[webkitdirectory]").set_input_files(str(root))
    wait_for(page, lambda: set(names) <= set(listed(page)), timeout=60)
    walk("files sheet: a folder tree")
    (tmp_path / "report.pdf").write_bytes(pdf_bytes(2))
    panel.locator("input[type=file]:not([webkitdirectory])").set_input_files(str(tmp_path / "report.pdf"))
    wait_for(page, lambda: "report.pdf" in listed(page), timeout=60)
    walk.tap(panel.locator(".pa-file", has_text="report.pdf"))
    panel.get_by_role("img", name="Page 1 of 2").wait_for(timeout=30_000)
    panel.locator("canvas.pa-page[data-page='1'][data-drawn='true']").wait_for(timeout=30_000)
    text = panel.get_by_role("region", name="Text sent to the model")
    wait_for(page, lambda: "characters" in text.locator(".pa-doc-meta").inner_text(), timeout=30)
    walk("files sheet: a PDF's preview")
    more = panel.locator(".pa-view-header .pa-more")
    if more.is_visible():
        walk.tap(more)
        walk("files sheet: the file's actions")
        page.keyboard.press("Escape")
    walk.tap(page.locator("#side-panel-close"))
    panel.wait_for(state="hidden")


def session_dialogs(walk: Walk) -> None:
    page = walk.page
    walk.tap(page.locator("#session-menu-btn:not([disabled])"))
    page.locator("#session-menu").wait_for()
    walk("session menu")
    page.keyboard.press("Escape")
    for item, state in [
        ("System prompt…", "system prompt dialog"),
        ("Compact…", "compact dialog"),
        ("Delete session", "delete confirmation"),
    ]:
        walk.session_menu(item)
        page.locator("dialog[open]").wait_for()
        walk(state)
        walk.escape()
    walk.tap(page.locator("#model-button"))
    page.locator("dialog[open] .model-row").first.wait_for()
    walk("model picker")
    walk.escape()
    walk.drawer()
    walk("session drawer")
    row = page.locator("#sidebar .row-menu-btn").first
    walk.tap(row)
    walk("session row menu")
    walk.tap(page.locator("#sidebar [role=menuitem]", has_text="Rename").first)
    page.locator("dialog[open]").wait_for()
    walk("rename dialog")
    walk.escape()


def settings(walk: Walk, tmp_path: Path) -> None:
    page = walk.page
    walk.app.py(
        "save_custom_provider",
        provider={
            "name": LONG_NAME,
            "kind": "openai-compatible",
            "api": "openai-completions",
            "baseUrl": "https://a-long-host-name-of-a-gateway.example.com/openai/compatible/v1",
            "models": [{"id": "a-vision-model-with-a-long-identifier-2025-11", "input": ["text", "image"]}],
        },
        discover=False,
    )
    added = walk.app.py(
        "mcp_add",
        name="a-server-with-a-long-name",
        url="http://127.0.0.1:9/a/long/path/to/the/model/context/protocol/endpoint",
    )
    assert added.get("error") is None, added
    walk.drawer()
    walk.tap(page.locator("#open-settings"))
    dialog = page.locator("dialog[open]")
    tabs = dialog.locator("[role=tab]")
    tabs.first.wait_for()
    names = tabs.all_inner_texts()
    assert {"API keys", "Custom providers", "MCP servers", "Agents"} <= set(names), names
    for i, name in enumerate(names):
        walk.tap(tabs.nth(i))
        dialog.locator("[role=tabpanel]:not([hidden]) > *").first.wait_for()
        page.wait_for_timeout(300)  # the tab's data (keys, providers, storage) arrives
        walk(f"settings: {name}")
        for details in dialog.locator("[role=tabpanel]:not([hidden]) details:not([open]) > summary").all():
            walk.tap(details)
        if name == "MCP servers":
            dialog.get_by_text("a-server-with-a-long-name").first.wait_for()
        if name == "API keys":
            for provider in ("Anthropic", LONG_NAME):
                walk.tap(dialog.get_by_role("button", name=f"Add key for {provider}"))
                page.get_by_role("dialog", name=f"API key for {provider}").wait_for()
                walk(f"key dialog for {provider}")
                page.keyboard.press("Escape")
                page.get_by_role("dialog", name=f"API key for {provider}").wait_for(state="detached")
        elif name == "Custom providers":
            walk("settings: Custom providers, opened")
            with page.expect_download() as saved:
                walk.tap(dialog.get_by_role("button", name="Export providers"))
            exported = tmp_path / "providers.json"
            saved.value.save_as(exported)
            assert json.loads(exported.read_text())["providers"]
            with page.expect_file_chooser() as chosen:
                walk.tap(dialog.get_by_role("button", name="Import providers"))
            chosen.value.set_files(str(exported))
            ask = page.get_by_role("dialog", name="Providers already saved")
            ask.wait_for()
            walk("import: a provider already saved")
            walk.tap(ask.get_by_role("button", name="Cancel"))
            ask.wait_for(state="detached")
            walk.tap(dialog.get_by_role("button", name=f"Delete {LONG_NAME}"))
            page.get_by_role("dialog", name="Delete provider").wait_for()
            walk("delete provider confirmation")
            walk.tap(page.get_by_role("dialog", name="Delete provider").get_by_role("button", name="Cancel"))
            walk.tap(dialog.get_by_role("button", name=f"Edit {LONG_NAME}"))
            dialog.locator("form").first.wait_for()
            for details in dialog.locator("details:not([open]) > summary").all():
                walk.tap(details)
            walk("custom provider form, models described")
            walk.tap(dialog.get_by_role("button", name="Cancel"))
            walk.tap(dialog.locator("#add-provider"))
            walk("custom provider form, new")
            walk.tap(dialog.get_by_role("button", name="Cancel"))
        elif name == "Agents":
            walk.tap(dialog.locator("#agent-new"))
            dialog.locator("#agent-editor").wait_for()
            walk("agent editor")
    walk.escape()
    walk.new_chat()
    page.locator("#welcome .provider-card-btn", has_text=LONG_NAME).wait_for()
    walk("welcome screen with a custom provider's card")


@pytest.mark.parametrize("viewport", PHONES, ids=[f"{p['width']}px" for p in PHONES])
def test_every_suggestion_panel_and_dialog_fits_the_phone(
    browser: Any, base_url: str, axe_source: str, tmp_path: Path, viewport: dict[str, int]
) -> None:
    app = open_app(browser, base_url, viewport=viewport, is_mobile=True, has_touch=True, device_scale_factor=3)
    walk = Walk(app, viewport["width"], axe_source)
    try:
        run_suggestions(walk)
        long_text_and_attachments(walk, tmp_path)
        files_sheet(walk, tmp_path)
        session_dialogs(walk)
        settings(walk, tmp_path)
    finally:
        app.page.context.close()
    assert len(walk.axe.states) >= 35, walk.axe.states
    assert not walk.misfits, json.dumps(walk.misfits, indent=1, ensure_ascii=False)
    assert not walk.axe.found, walk.axe.report()
    assert not app.page_errors, app.page_errors
