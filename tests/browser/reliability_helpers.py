"""Helpers for the reliability browser tests (faults, page and storage faults, two tabs, hostile content,
keys, long sessions): the app booted with observers installed before its first script runs.

The observers (an init script, so they run before the page's own code and in every document):
- ``window.__violations``: Content-Security-Policy violations (each one means something tried to
  run or load what the policy forbids; see :meth:`GuardedApp.violations` for the sanitizer's own);
- ``window.__toastLog``: the text of every notice the page showed, even briefly;
- the canary ``window.__pwned`` stays undefined unless a hostile payload ran.
Playwright's ``dialog`` event records ``alert``/``confirm``/``prompt`` calls.
"""

from __future__ import annotations

import json
import time
from typing import Any

from web_app_helpers import READY_TIMEOUT_MS, App, Request

OBSERVERS = """(() => {
  window.__violations = [];
  window.__toastLog = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    const where = e.target && e.target.nodeType === 1
      ? `${e.target.tagName.toLowerCase()}${e.target.id ? "#" + e.target.id : ""} in ${e.target.parentElement?.closest("[class]")?.className || "?"}`
      : "";
    window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${(e.sample || "").slice(0, 80)} ${where} @${e.sourceFile}:${e.lineNumber}`.trim());
  });
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      if (n.nodeType === 1 && n.classList.contains("toast")) window.__toastLog.push(n.textContent);
    }
  }).observe(document, { childList: true, subtree: true });
})();"""


class GuardedApp(App):
    dialogs: list[str]

    def toasts(self) -> list[str]:
        return list(self.page.evaluate("() => window.__toastLog"))

    def violations(self) -> list[str]:
        """CSP violations, except those Chromium reports while DOMPurify parses hostile HTML in an
        inert DOMParser document (it applies the page's policy there too and reports handlers and
        styles it would block, though nothing in that document can run): those come from the
        sanitizer's parse call in vendor/purify.es.js."""
        return [v for v in self.all_violations() if "/vendor/purify.es.js:" not in v]

    def all_violations(self) -> list[str]:
        return list(self.page.evaluate("() => window.__violations"))

    def pwned(self) -> Any:
        return self.page.evaluate("() => window.__pwned")

    def state(self) -> dict[str, Any]:
        return dict(self.page.evaluate("() => window.pyAgentApp.state"))

    def settle(self, timeout: float = 40.0) -> None:
        """Until the run is over: not streaming, no reply in progress on the page."""
        page = self.page
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = page.evaluate(
                "() => Boolean(window.pyAgentApp.state?.streaming)"
                " || Boolean(document.querySelector('#transcript .msg.assistant.streaming'))"
            )
            if not busy:
                return
            time.sleep(0.05)
        raise AssertionError("the reply did not end in time")

    def send(self, text: str, timeout: float = 40.0) -> None:
        """Type a message, send it, wait until it is on the page and the run is over."""
        self.type_and_enter(text)
        self.page.locator("#transcript .msg.user .user-text", has_text=text).first.wait_for(timeout=15_000)
        self.page.wait_for_timeout(50)
        self.settle(timeout)

    def stored_lines(self, session_id: str) -> list[dict[str, Any]]:
        """The session's entry records in IndexedDB, in order, parsed."""
        records = sorted(
            (r for r in self.idb_dump()["entries"] if r["sessionId"] == session_id), key=lambda r: r["seq"]
        )
        assert [r["seq"] for r in records] == list(range(len(records))), "entry records must be seq 0..n-1"
        return [json.loads(r["line"]) for r in records]


def open_guarded(
    browser: Any,
    base: str,
    *,
    query: str = "?demo-tps=0",
    hash: str = "",
    context: Any = None,
    viewport: dict[str, int] | None = None,
) -> GuardedApp:
    """Open the app (in ``context``, or a new one) with the observers installed; wait until ready."""
    if context is None:
        context = browser.new_context(viewport=viewport or {"width": 1280, "height": 860}, accept_downloads=True)
        context.add_init_script(OBSERVERS)
    page = context.new_page()
    app = GuardedApp(page, base)
    app.dialogs = []

    def on_request(request: Any) -> None:
        try:
            body = request.post_data or ""
        except Exception:
            body = "<binary>"
        app.requests.append(Request(request.url, request.method, dict(request.headers), body))

    def on_dialog(dialog: Any) -> None:
        app.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("request", on_request)
    page.on("console", lambda msg: app.console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda error: app.page_errors.append(str(error)))
    page.on("dialog", on_dialog)
    page.goto(base + "/" + query + hash)
    wait_ready(page)
    return app


def wait_ready(page: Any) -> None:
    page.locator("html[data-app='ready'], html[data-app='error']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    assert page.get_attribute("html", "data-app") == "ready", page.locator("#boot-error").inner_text()


def messages_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["message"] for line in lines if line.get("type") == "message"]


def assert_no_duplicates(lines: list[dict[str, Any]]) -> None:
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids)), "an entry id is stored twice"
    seen: set[str] = set()
    for line in lines:
        if line.get("type") != "message":
            continue
        key = json.dumps(line["message"], sort_keys=True)
        assert key not in seen, f"a message is stored twice: {key[:200]}"
        seen.add(key)
