"""Helpers for the web app's browser tests: a static server for the site, one booted page per
module (driven through the UI, with `pyAgentApp.py` for set-up only), the mock providers."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import build
from py_agent.testing.mock_server import MockProviderServer

READY_TIMEOUT_MS = 120_000

# A plain static server for a folder on 127.0.0.1: (base URL, stop).
serve_folder = build.serve_in_background


@dataclass
class Request:
    url: str
    method: str
    headers: dict[str, str]
    body: str


@dataclass
class App:
    """The booted page and what it did."""

    page: Any
    base: str
    requests: list[Request] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """``with open_app(...) as app:`` closes the page's browser context (and its storage) at the end."""
        self.page.context.close()

    # -- set-up through the command channel (what the UI calls) ----------------------------------

    def py(self, command: str, **args: Any) -> Any:
        return self.page.evaluate("([c, a]) => window.pyAgentApp.py(c, a)", [command, args])

    def add_provider(
        self,
        name: str,
        server: MockProviderServer,
        models: list[Any],
        api: str = "anthropic-messages",
        *,
        key: str | None = None,
        remember: bool = True,
    ) -> None:
        """``server`` as the custom provider ``name``; with ``key``, its key saved too (``remember``:
        in IndexedDB, else for this tab only)."""
        base = server.url if api == "anthropic-messages" else f"{server.url}/v1"
        self.py(
            "save_custom_provider",
            provider={"name": name, "kind": "openai-compatible", "api": api, "baseUrl": base, "models": models},
            discover=False,
        )
        if key is not None:
            self.py("save_key", provider=name, key=key, remember=remember)

    # -- the UI ------------------------------------------------------------------------------------

    def new_chat(self) -> None:
        self.page.locator("#new-chat").click()
        self.page.locator("#session-title", has_text="New chat").wait_for()
        self.page.locator("#transcript .msg").first.wait_for(state="detached")
        self.switched()

    def switched(self) -> None:
        """Wait until no switch of session is under way (the heading names its target before)."""
        self.page.locator("html:not([data-switching])").wait_for(state="attached")

    def choose_model(self, query: str, expected_label: str) -> None:
        page = self.page
        page.locator("#model-button").click()
        page.locator("#model-search").fill(query)
        page.locator(".model-row.active").wait_for()
        page.wait_for_timeout(150)  # the search is debounced
        page.locator("#model-search").press("Enter")
        page.locator("#model-button", has_text=expected_label).wait_for()

    def type_and_enter(self, text: str, key: str = "Enter") -> None:
        box = self.page.locator("#input")
        box.fill(text)
        box.press(key)

    def wait_idle(self, timeout: float = 30_000) -> None:
        page = self.page
        page.locator("#stop-button").wait_for(state="hidden", timeout=timeout)
        page.locator("#transcript .msg.assistant.streaming").first.wait_for(state="detached", timeout=timeout)

    def assistant_texts(self) -> list[str]:
        return [t.strip() for t in self.page.locator("#transcript .msg.assistant .blocks").all_inner_texts()]

    def user_texts(self) -> list[str]:
        return [t.strip() for t in self.page.locator("#transcript .msg.user .user-text").all_inner_texts()]

    def current_session_id(self) -> str:
        state = self.page.evaluate("() => window.pyAgentApp.currentId")
        return str(state)

    def idb_dump(self) -> dict[str, Any]:
        """Every record of the app's IndexedDB stores, as JSON."""
        return json.loads(
            self.page.evaluate(
                """async () => {
                  const db = await new Promise((ok, no) => { const r = indexedDB.open("py-agent"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
                  const out = {};
                  for (const name of db.objectStoreNames) {
                    out[name] = await new Promise((ok) => { const q = db.transaction(name).objectStore(name).getAll(); q.onsuccess = () => ok(q.result); });
                  }
                  db.close();
                  return JSON.stringify(out);
                }"""
            )
        )


# [the page's Python started with WebAssembly stack switching (JSPI), the page's WebAssembly has it]
JSPI_CHECK = "() => [window.pyAgent.pyodide._module.jspiSupported, 'Suspending' in WebAssembly]"


def open_blank_page(browser: Any, base: str, name: str) -> Any:
    """A page on an empty document at ``base``/``name`` (the site's origin, so its modules import),
    for tests that drive the page's own modules without the app."""
    page = browser.new_context().new_page()
    blank = base.rstrip("/") + "/" + name
    page.route(blank, lambda route: route.fulfill(status=200, content_type="text/html", body="<!doctype html><body>"))
    page.goto(blank)
    return page


def open_app(
    browser: Any,
    base: str,
    *,
    viewport: dict[str, int] | None = None,
    query: str = "?demo-tps=0",
    timezone_id: str | None = None,
    **context_options: Any,
) -> App:
    """``context_options`` go to Playwright's new_context (e.g. ``is_mobile``, ``has_touch``)."""
    context = browser.new_context(
        viewport=viewport or {"width": 1280, "height": 860},
        accept_downloads=True,
        timezone_id=timezone_id,
        **context_options,
    )
    page = context.new_page()
    app = App(page, base)

    def on_request(request: Any) -> None:
        try:
            body = request.post_data or ""
        except Exception:
            body = "<binary>"
        app.requests.append(Request(request.url, request.method, dict(request.headers), body))

    context.on("request", on_request)
    page.on("console", lambda msg: app.console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda error: app.page_errors.append(str(error)))
    page.goto(base + "/" + query)
    page.locator("html[data-app='ready'], html[data-app='error']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
    assert page.get_attribute("html", "data-app") == "ready", app.console
    return app


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError("condition not met in time")
