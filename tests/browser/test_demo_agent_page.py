"""The offline demo as an agent at work (py_agent/app/demo.py), from the welcome screen's suggestion:
it writes a sample CSV, runs Python on it (a table and a summary), runs JavaScript that draws an
SVG chart, which the Files panel previews in a sandboxed frame, and runs two subagents in parallel.
Every card is the real tool's, with its result, and every request the page makes stays on its own
origin (recorded by Playwright for the page, its frames and its workers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from web_app_helpers import open_app

TOUR = "Watch the agent work (files, Python, JavaScript, subagents)"


def wait_for(page: Any, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    waited = 0.0
    while not predicate():
        if waited > timeout:
            raise AssertionError("condition not met in time")
        page.wait_for_timeout(100)
        waited += 0.1


def previewed_svg(page: Any) -> str:
    for frame in page.frames:
        if not frame.url.endswith("/files/preview.html"):
            continue
        try:
            html = str(frame.evaluate("() => document.querySelector('iframe')?.srcdoc ?? ''"))
        except Exception:
            continue
        if "<svg" in html:
            return html
    return ""


def test_the_demo_runs_the_real_tools_offline_from_the_welcome_suggestion(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url)
    page = app.page
    try:
        page.locator("#model-button", has_text="Demo").wait_for()
        before = len(app.requests)
        page.get_by_role("button", name=TOUR).click()
        done = page.locator("#transcript .msg.assistant", has_text="no request left it")
        done.wait_for(timeout=180_000)
        app.wait_idle(timeout=60_000)

        cards = page.locator("#transcript .msg.assistant > .blocks > details.tool")
        assert cards.count() == 4
        titles = [str(t) for t in cards.locator(":scope > summary .tool-title").all_inner_texts()]
        assert [c.get_attribute("data-status") for c in cards.all()] == ["done"] * 4, titles
        # Each card says its state in visible text, the same word its accessible name has, and shows
        # the first lines of what it gave without being opened.
        for card in cards.all():
            head = card.locator(":scope > summary")
            assert head.locator(".tool-state").inner_text() == "done"
            assert "done" in page.evaluate("(el) => el.textContent", head.element_handle())
            if card.get_attribute("open") is None:
                assert head.locator(".tool-preview").inner_text().strip(), titles
        write, python, javascript, subagent = cards.all()
        assert python.get_attribute("open") is None  # closed, yet the start of what it printed shows
        printed = [line for line in (python.locator(".pa-output").text_content() or "").splitlines() if line.strip()]
        preview = python.locator(":scope > summary .tool-preview").inner_text()
        assert len(printed) > 2 and printed[0].strip() in preview and printed[2].strip() not in preview, preview
        assert "data/sales.csv" in (write.text_content() or "")
        python_output = python.locator(".pa-output").text_content() or ""
        assert "North       404    3763.00" in python_output
        assert "Summary: 9 rows, 3 regions, revenue 8976.00; North leads with 42%." in python_output
        assert "import csv, json" in (python.locator("pre.pa-code").text_content() or "")
        assert "=> North 3763.00, South 2793.00, West 2420.00" in (
            javascript.locator(".pa-output").text_content() or ""
        )
        wait_for(page, lambda: "is an SVG chart with 3 bars" in (subagent.text_content() or ""))
        assert "is a table of 9 rows with the columns month, region, units, price" in (subagent.text_content() or "")
        assert "North leads with 42%" in (done.text_content() or "")
        assert "(totals: North 3763.00, South 2793.00, West 2420.00)" in (done.text_content() or "")

        # The chart is previewed in the Files panel, in sandboxed frames only.
        page.locator("#side-panel").wait_for(state="visible", timeout=20_000)
        wait_for(page, lambda: "Revenue by region, Q1 2026" in previewed_svg(page))
        sandboxes = page.evaluate(
            "() => [...document.querySelectorAll('#side-panel iframe')].map((f) => f.getAttribute('sandbox'))"
        )
        assert sandboxes and all(value == "allow-scripts" for value in sandboxes), sandboxes
        assert page.locator("#side-panel .pa-file-name").all_inner_texts() == [
            "chart.svg",
            "data/sales.csv",
            "summary.json",
        ]

        # Nothing left the page's origin (the code tools' sandboxes are static files of the site).
        origin = urlsplit(base_url).netloc
        made = [r.url for r in app.requests[before:]]
        assert any("/sandbox/" in url for url in made), made  # the recording saw the sandboxes load
        elsewhere = [
            url for url in made if urlsplit(url).scheme in ("http", "https") and urlsplit(url).netloc != origin
        ]
        assert elsewhere == []
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def test_the_plain_demo_chat_still_answers(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url)
    page = app.page
    try:
        page.get_by_role("button", name="Show me what this app can do").click()
        page.locator("#transcript .msg.assistant h2", has_text="Hello from the offline demo").wait_for(timeout=60_000)
        app.wait_idle()
        assert page.locator("#transcript details.tool").count() == 0
    finally:
        page.context.close()
