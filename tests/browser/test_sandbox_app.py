"""The in-page tools' acceptance flow through the chat app itself (web/app.js) and the mock provider.

A user asks; the scripted model writes a CSV, runs Python that reads it and writes a result file,
runs JavaScript that reads that and writes an HTML report, and edits the report. The tool cards
show the code and the output; the workspace panel opens on the report, shown in a sandboxed
frame; after a reload the session, its tool cards and its workspace are all back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from test_sandbox_acceptance import JAVASCRIPT_CODE, PYTHON_CODE, SCRIPT
from web_app_helpers import App, open_app

from py_agent.testing.mock_server import MockProviderServer

KEY = "sk-mock-FAKE-KEY-for-the-sandbox-test-42"


def poll(page: Any, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait with Playwright's own timer: it must keep handling its events meanwhile (a new
    out-of-process frame waits for Playwright before it runs)."""
    waited = 0.0
    while not predicate():
        if waited > timeout:
            raise AssertionError("condition not met in time")
        page.wait_for_timeout(100)
        waited += 0.1


def shown_report(page: Any) -> str:
    """The text of the report as the workspace panel shows it (in its sandboxed frames)."""
    for frame in page.frames:
        try:
            if frame.url == "about:srcdoc":
                text = str(frame.evaluate("() => document.body.innerText"))
            elif frame.url.endswith("/files/preview.html"):
                text = str(frame.evaluate("() => document.querySelector('iframe')?.srcdoc ?? ''"))
            else:
                continue
        except Exception:
            continue
        if "Total:" in text:
            return text
    return ""


def test_the_agent_writes_runs_code_edits_and_the_panel_shows_it(
    browser: Any, base_url: str, mock: MockProviderServer
) -> None:
    app: App = open_app(browser, base_url)
    page = app.page
    try:
        app.add_provider("Mock", mock, [{"id": "mock-model", "name": "Mock Model"}], api="openai-completions")
        app.choose_model("mock model", "Mock Model")
        app.new_chat()
        mock.reset()
        mock.script(SCRIPT)
        app.type_and_enter("Sum data/numbers.csv and make an HTML report")
        dialog = page.locator("dialog[open]")
        dialog.locator("#api-key-input").fill(KEY)
        dialog.locator("#key-place-device").check()  # kept in the app's IndexedDB
        dialog.locator("#key-test").uncheck()
        dialog.locator("#key-save").click()
        page.locator("#transcript .msg.assistant", has_text="All done: report.html shows the total.").wait_for(
            timeout=120_000
        )
        app.wait_idle(timeout=120_000)

        # The tool cards: highlighted code and the output of each run.
        python_card = page.locator(
            "#transcript details.tool", has=page.locator(".tok-keyword", has_text="import")
        ).first
        assert python_card.get_attribute("data-status") == "done"
        assert "total 12" in (python_card.locator(".pa-output").text_content() or "")
        js_card = page.locator("#transcript details.tool", has_text="Report").first
        assert "=> 24" in (js_card.locator(".pa-output").text_content() or "")
        assert (js_card.locator("pre.pa-code code").text_content() or "").strip() == JAVASCRIPT_CODE.strip()
        edit_card = page.locator("#transcript details.tool", has=page.locator(".pa-diff")).first
        assert (
            (edit_card.locator(".pa-diff-added").text_content() or "")
            .strip()
            .endswith('Final report</h1><p id="total">Total: 12 of 3</p>')
        )
        assert PYTHON_CODE.splitlines()[0] in (python_card.locator("pre.pa-code code").text_content() or "")
        assert all(r["headers"].get("authorization") == f"Bearer {KEY}" for r in mock.requests)

        # The panel opened on the report the tools wrote; HTML only in sandboxed frames.
        page.locator("#side-panel").wait_for(state="visible", timeout=10_000)
        poll(page, lambda: "Final report" in shown_report(page))
        assert "Total: 12 of 3" in shown_report(page)
        frames = page.evaluate(
            "() => [...document.querySelectorAll('#side-panel iframe')].map((f) => f.getAttribute('sandbox'))"
        )
        assert frames and all(value == "allow-scripts" for value in frames), frames
        files = page.locator("#side-panel .pa-file-name").all_inner_texts()
        assert files == ["data/numbers.csv", "report.html", "result.json"]

        # Reload: the session comes back with its cards, and its files through a file chip.
        page.reload()
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        page.locator("#transcript .msg.assistant", has_text="All done: report.html shows the total.").wait_for(
            timeout=30_000
        )
        assert page.locator("#transcript .pa-code").count() >= 2
        card = page.locator("#transcript details.tool", has=page.locator(".pa-chip", has_text="report.html")).first
        card.locator("summary").click()
        card.locator(".pa-chip", has_text="report.html").click()
        page.locator("#side-panel").wait_for(state="visible", timeout=10_000)
        poll(page, lambda: "Final report" in shown_report(page))
        assert page.locator("#side-panel .pa-file-name").all_inner_texts() == [
            "data/numbers.csv",
            "report.html",
            "result.json",
        ]
        page.locator("#side-panel .pa-file", has_text="result.json").click()
        assert '"total": 12' in page.locator("#side-panel pre.pa-text").inner_text()
        # The key reached the provider only: not the transcript, not a sandbox or preview frame.
        assert KEY not in (page.locator("#transcript").text_content() or "")
        for frame in page.frames[1:]:
            try:
                html = str(frame.evaluate("() => document.documentElement.outerHTML"))
            except Exception:
                continue
            assert KEY not in html, frame.url
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()
