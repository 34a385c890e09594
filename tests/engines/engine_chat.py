"""The chat app as a user drives it, in any engine (through engine_drivers.Driver): written once, run in three."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from engine_drivers import Driver, FlowError

from py_agent.testing.mock_server import MockProviderServer

READY_TIMEOUT = 180.0
SUB_PATH = "/some/sub/path/"  # where the site is served: every URL in it must be relative


@dataclass
class Site:
    """The site on a static server of its own, under a sub-path; `stop()` takes it off the network."""

    url: str  # ends with SUB_PATH
    origin: str
    _stop: object

    def stop(self) -> None:
        stop, self._stop = self._stop, None
        if callable(stop):
            stop()


@dataclass
class Chat:
    driver: Driver
    url: str  # the site's folder, ending with "/"

    # No memory snapshot: making one is a second Pyodide start in a worker, which would compete
    # with the flows for the CPU (tests/browser/test_offline.py covers snapshots, in Chromium).
    def open(self, query: str = "?demo-tps=0&no-snapshot") -> None:
        self.driver.goto(self.url + query)
        self.wait_ready()

    def wait_ready(self) -> None:
        self.driver.wait("html[data-app='ready'], html[data-app='error']", visible=False, timeout=READY_TIMEOUT)
        state = self.driver.attr("html", "data-app")
        if state != "ready":
            raise FlowError(f"[{self.driver.engine}] the app did not start: {self.driver.text('body')[:2000]}")

    def reload(self) -> None:
        # Wait for the new document: the old one still says "ready" until it is gone.
        self.driver.js("document.documentElement.dataset.flowOld = '1';")
        self.driver.reload()
        self.driver.wait_until(lambda: self.driver.attr("html", "data-flow-old") is None, "the reloaded page")
        self.wait_ready()

    # -- set-up through the app's command channel (what the UI calls) ---------------------------

    def py(self, command: str, **args: Any) -> Any:
        return self.driver.js("return await window.pyAgentApp.py(args[0], args[1]);", command, args)

    def add_provider(self, name: str, server: MockProviderServer, models: list[Any]) -> None:
        self.py(
            "save_custom_provider",
            provider={
                "name": name,
                "kind": "openai-compatible",
                "api": "anthropic-messages",
                "baseUrl": server.url,
                "models": models,
            },
            discover=False,
        )

    # -- the UI ---------------------------------------------------------------------------------

    def click_text(self, selector: str, text: str) -> None:
        """Click the first visible element matching selector whose text contains text."""
        found = self.driver.js(
            """document.querySelectorAll('[data-flow-target]').forEach((el) => el.removeAttribute('data-flow-target'));
            const el = [...document.querySelectorAll(args[0])].find(
              (e) => e.textContent.includes(args[1]) && e.getClientRects().length > 0);
            if (!el) return false;
            el.setAttribute('data-flow-target', '');
            return true;""",
            selector,
            text,
        )
        if not found:
            raise FlowError(f"[{self.driver.engine}] nothing to click: {selector} with {text!r}")
        self.driver.click("[data-flow-target]")

    def new_chat(self) -> None:
        self.driver.click("#new-chat")
        self.driver.wait("#session-title", "New chat")
        self.driver.wait_until(lambda: self.driver.count("#transcript .msg") == 0, "an empty transcript")
        self.driver.wait_until(lambda: self.driver.count("html[data-switching]") == 0, "the new chat open")

    def choose_model(self, query: str, label: str) -> None:
        d = self.driver
        d.click("#model-button")
        d.wait("#model-search")
        d.fill("#model-search", query)
        d.wait(".model-row.active", label)
        time.sleep(0.2)  # the search is debounced
        d.press("#model-search", "Enter")
        d.wait("#model-button", label)

    def send(self, text: str) -> None:
        self.driver.fill("#input", text)
        self.driver.press("#input", "Enter")

    def wait_idle(self, timeout: float = 60.0) -> None:
        d = self.driver
        d.wait_until(
            lambda: d.count("#stop-button", visible=True) == 0 and d.count("#transcript .msg.assistant.streaming") == 0,
            "the reply to end",
            timeout,
        )

    def assistant_texts(self) -> list[str]:
        return self.driver.texts("#transcript .msg.assistant .blocks")

    def user_texts(self) -> list[str]:
        return self.driver.texts("#transcript .msg.user .user-text")

    def session_id(self) -> str:
        return str(self.driver.js("return window.pyAgentApp.currentId;"))
