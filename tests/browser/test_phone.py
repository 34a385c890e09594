"""The app on a phone (390 x 844) in Chromium: notices never cover the conversation or the composer,
the Settings tabs scroll sideways with a cue, the files panel is a full-screen sheet that keeps the
focus; and installing it: the web app manifest is served and valid, its icons load, Chromium finds
nothing that prevents installing, and the service worker keeps it all for offline use."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_a11y import DESKTOP, PHONE, finish_tool_conversation, open_sidebar_if_phone, start_tool_conversation
from test_phone_walk import misfit
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer


def box(page: Any, selector: str) -> dict[str, float]:
    rect = page.locator(selector).first.bounding_box()
    assert rect is not None, f"{selector} is not shown"
    return dict(rect)


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def storage_notice(app: App) -> None:
    """The notice the app shows about persistent storage (web/ui/storage-status.js), as Settings →
    Storage asks for it."""
    app.page.evaluate(
        """async () => {
          const module = await import(new URL("ui/storage-status.js", document.baseURI).href);
          await module.requestPersistence({ announceResult: true });
        }"""
    )


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_notice_never_covers_the_conversation_or_the_composer(browser: Any, base_url: str, viewport: Any) -> None:
    app = open_app(browser, base_url, viewport=viewport)
    page = app.page
    try:
        open_sidebar_if_phone(app)
        app.new_chat()
        app.choose_model("demo", "Demo")
        app.type_and_enter("Tell me something long")
        page.locator("#transcript .msg.assistant", has_text="A long answer").wait_for()
        app.wait_idle()
        storage_notice(app)
        notice = page.locator("#toasts .toast").last
        notice.wait_for()
        toast = box(page, "#toasts .toast >> nth=-1")
        for name in ("#scroller", "#composer"):
            assert not overlap(toast, box(page, name)), f"the notice covers {name}"
        # All of it on screen, and the conversation still has room.
        assert toast["y"] >= 0 and toast["y"] + toast["height"] <= viewport["height"]
        assert box(page, "#scroller")["height"] >= viewport["height"] * 0.3
        notice.locator("button[aria-label='Dismiss']").click()
        page.locator("#toasts .toast").first.wait_for(state="detached")
        if viewport is PHONE:  # the room it took is given back
            assert box(page, "#scroller")["y"] <= box(page, ".topbar")["y"] + box(page, ".topbar")["height"] + 1
    finally:
        page.context.close()


def test_settings_tabs_scroll_with_a_cue(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport=PHONE)
    page = app.page
    try:
        open_sidebar_if_phone(app)
        page.locator("#open-settings").click()
        tablist = page.locator("dialog[open] [role=tablist]")
        tabs = tablist.locator("[role=tab]")
        tabs.first.wait_for()
        page.wait_for_timeout(300)
        geometry = tablist.evaluate(
            """(list) => ({
              scrollWidth: list.scrollWidth, clientWidth: list.clientWidth, overflowX: getComputedStyle(list).overflowX,
              background: getComputedStyle(list).backgroundImage,
              cut: [...list.querySelectorAll("[role=tab]")].filter((t) => t.scrollWidth > t.clientWidth + 1).map((t) => t.textContent),
              rows: new Set([...list.querySelectorAll("[role=tab]")].map((t) => Math.round(t.getBoundingClientRect().top))).size,
            })"""
        )
        assert geometry["scrollWidth"] > geometry["clientWidth"], geometry  # more tabs than room: it scrolls
        assert geometry["overflowX"] == "auto" and geometry["rows"] == 1, geometry
        assert not geometry["cut"], geometry  # no label is clipped inside its tab
        assert geometry["background"].count("radial-gradient") == 2, geometry  # the edge shadows: the cue
        dialog = box(page, "dialog[open]")
        strip = box(page, "dialog[open] [role=tablist]")
        assert strip["x"] >= dialog["x"] and strip["x"] + strip["width"] <= dialog["x"] + dialog["width"] + 0.5

        # The keyboard reaches the last tab, which scrolls into view.
        tabs.first.focus()
        page.keyboard.press("ArrowLeft")
        last = tabs.last
        assert last.get_attribute("aria-selected") == "true"
        page.wait_for_timeout(300)
        assert tablist.evaluate("(l) => l.scrollLeft") > 0
        shown = box(page, "dialog[open] [role=tab] >> nth=-1")
        assert shown["x"] >= strip["x"] - 0.5 and shown["x"] + shown["width"] <= strip["x"] + strip["width"] + 0.5
    finally:
        page.context.close()


def test_the_files_panel_is_a_full_screen_sheet(browser: Any, base_url: str, mock: MockProviderServer) -> None:
    app = open_app(browser, base_url, viewport=PHONE)
    page = app.page
    try:
        start_tool_conversation(app, mock)
        finish_tool_conversation(app)
        page.locator("#transcript .pa-chip", has_text="notes/plan.md").first.click()
        page.locator("#side-panel .pa-view-title", has_text="notes/plan.md").wait_for(timeout=30_000)
        page.wait_for_timeout(300)
        panel = box(page, "#side-panel")
        assert (panel["x"], panel["y"], panel["width"], panel["height"]) == (0, 0, PHONE["width"], PHONE["height"])
        files = box(page, "#side-panel .pa-files")
        view = box(page, "#side-panel .pa-view")
        # The list and the preview each get the sheet's width (stacked), not a narrow column.
        assert files["width"] >= PHONE["width"] * 0.9 and view["width"] >= PHONE["width"] * 0.9
        assert view["height"] >= PHONE["height"] * 0.35
        # The chat under the sheet is out of reach: Tab stays in the sheet (and its notices).
        assert not page.locator("#input").is_visible()
        page.locator("#side-panel-close").focus()
        for _ in range(12):
            page.keyboard.press("Tab")
            where = page.evaluate(
                "() => document.activeElement?.closest('#side-panel, #toasts')?.id ?? document.activeElement?.tagName"
            )
            assert where in ("side-panel", "toasts", "BODY"), where
        page.locator("#side-panel-close").click()
        page.locator("#input").wait_for(state="visible")
    finally:
        page.context.close()


def test_the_app_can_be_installed_and_kept_offline(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport=PHONE)
    page = app.page
    try:
        href = page.locator("link[rel=manifest]").get_attribute("href")
        assert href == "app.webmanifest"
        served = page.evaluate(
            """async (href) => {
              const response = await fetch(href, { cache: "no-store" });
              return { type: response.headers.get("content-type"), text: await response.text() };
            }""",
            href,
        )
        assert served["type"].startswith("application/manifest+json")
        manifest = json.loads(served["text"])
        assert manifest["display"] == "standalone" and manifest["start_url"] == "./" and manifest["scope"] == "./"
        pngs = [icon for icon in manifest["icons"] if icon["type"] == "image/png"]
        assert {icon["sizes"] for icon in pngs} >= {"192x192", "512x512"}
        assert any(icon["purpose"] == "maskable" for icon in pngs)
        for icon in pngs:
            size = page.evaluate(
                """async (src) => {
                  const image = new Image();
                  image.src = src;
                  await image.decode();
                  return `${image.naturalWidth}x${image.naturalHeight}`;
                }""",
                icon["src"],
            )
            assert size == icon["sizes"], icon

        # Chromium's own reading of it: no parse error, nothing that stops an install.
        cdp = page.context.new_cdp_session(page)
        parsed = cdp.send("Page.getAppManifest")
        assert parsed["url"].endswith("/app.webmanifest") and not parsed["errors"], parsed["errors"]
        installability = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        # Playwright's browser contexts are off the record, which alone prevents an install.
        assert [e for e in installability if e["errorId"] != "in-incognito"] == [], installability

        # Offline: the service worker keeps the manifest and its icons with the rest of the site.
        page.locator("html[data-offline='ready']").wait_for(state="attached", timeout=120_000)
        for path in ["app.webmanifest", *(icon["src"] for icon in manifest["icons"])]:
            wait_until(
                lambda path=path: page.evaluate(
                    "async (p) => Boolean(await caches.match(new URL(p, document.baseURI).href))", path
                ),
                timeout=30,
            )
    finally:
        page.context.close()


def assert_fits(page: Any, width: int, state: str) -> None:
    """Nothing is wider than the device (see test_phone_walk.FITS, which walks every state)."""
    assert misfit(page, width) is None, (state, misfit(page, width))


@pytest.mark.parametrize("width", [390, 320])
def test_the_demo_tour_on_a_phone_runs_every_step_and_the_files_sheet_waits_to_be_asked(
    browser: Any, base_url: str, width: int
) -> None:
    viewport = {"width": width, "height": 844 if width == 390 else 640}
    app = open_app(browser, base_url, viewport=viewport, is_mobile=True, has_touch=True, device_scale_factor=3)
    page = app.page
    try:
        page.get_by_role("button", name="Watch the agent work (files, Python, JavaScript, subagents)").tap()
        page.locator("#transcript .msg.assistant", has_text="no request left it").wait_for(timeout=180_000)
        app.wait_idle(timeout=60_000)
        cards = page.locator("#transcript .msg.assistant > .blocks > details.tool")
        assert cards.locator(":scope > summary .tool-title").all_inner_texts() == [
            "write",
            "Python",
            "JavaScript",
            "subagent",
        ]
        # The chart was written, and the sheet that would cover the chat is offered, not opened.
        assert page.locator("#side-panel").is_hidden()
        offer = page.locator("#toasts .toast", has_text="chart.svg is ready in Files.")
        offer.wait_for()
        assert_fits(page, width, "the tour's reply")
        offer.get_by_role("button", name="Show").tap()
        page.locator("#side-panel").wait_for(state="visible")
        assert_fits(page, width, "the Files sheet")
        page.locator("#side-panel-close").tap()
        page.locator("#side-panel").wait_for(state="hidden")
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def test_closing_settings_on_a_phone_returns_to_the_chat(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport=PHONE, is_mobile=True, has_touch=True)
    page = app.page
    try:
        open_sidebar_if_phone(app)
        page.locator("#open-settings").click()
        page.locator("dialog[open]").wait_for()
        page.locator("dialog[open]").get_by_role("button", name="Close", exact=True).click()
        page.locator("dialog[open]").wait_for(state="detached")
        page.locator("#sidebar").wait_for(state="hidden")
        assert page.evaluate("() => document.activeElement?.id") == "input"
        assert page.locator("#input").is_visible()
    finally:
        page.context.close()
