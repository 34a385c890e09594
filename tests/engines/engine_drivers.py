"""One small, engine-neutral way to drive the page, so that each flow is written once.

Three implementations: Chromium through Playwright, Firefox ESR through puppeteer-core over
WebDriver BiDi (a Node.js process running firefox_bridge.mjs, one JSON command per line) and
WebKitGTK's MiniBrowser through WebKitWebDriver with Selenium (under Xvfb). Each gives only what
differs between them: navigate, run a script in the page, click, type, press a key, choose files.
Everything else (waiting for an element, reading texts and attributes) is a script in the page,
the same in every engine.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import select
import subprocess
import tempfile
import threading
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIREFOX_BRIDGE = HERE / "firefox_bridge.mjs"
NAVIGATION_TIMEOUT = 180.0  # seconds: a busy machine (2 shared cores) can take long to load the page


class FlowError(AssertionError):
    """A step of a flow did not happen in time (an assertion failure, with what the page showed)."""


class Driver(ABC):
    """A page in one engine. `js` runs the body of an async function of `args` in the page."""

    engine: str = ""
    version: str = ""

    # -- what each engine implements ------------------------------------------------------------

    @abstractmethod
    def goto(self, url: str) -> None: ...

    @abstractmethod
    def reload(self) -> None: ...

    @abstractmethod
    def js(self, body: str, *args: Any) -> Any: ...

    @abstractmethod
    def click(self, selector: str) -> None: ...

    @abstractmethod
    def type(self, selector: str, text: str) -> None:
        """Focus selector and type text with the keyboard."""

    @abstractmethod
    def press(self, selector: str, key: str) -> None:
        """Focus selector and press one key: "Enter" or "Escape"."""

    @abstractmethod
    def set_files(self, selector: str, paths: list[str]) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    # -- the same in every engine ---------------------------------------------------------------

    def wait_until(self, predicate: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = predicate()
            except Exception as exc:  # the page is navigating: ask again
                value, error = None, exc
            else:
                error = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise FlowError(f"[{self.engine}] {what}: not in {timeout:.0f}s (last error: {error})")
            time.sleep(0.1)

    def wait(self, selector: str, text: str | None = None, *, visible: bool = True, timeout: float = 30.0) -> None:
        """Wait until an element matches selector (and contains text), visible unless visible=False."""
        self.wait_until(
            lambda: self.js(
                """const [sel, text, visible] = args;
                return [...document.querySelectorAll(sel)].some((el) =>
                  (text === null || el.textContent.includes(text)) &&
                  (!visible || el.getClientRects().length > 0));""",
                selector,
                text,
                visible,
            ),
            f"{selector} {text or ''}",
            timeout,
        )

    def wait_gone(self, selector: str, timeout: float = 30.0) -> None:
        """Wait until no visible element matches selector."""
        self.wait_until(lambda: self.count(selector, visible=True) == 0, f"{selector} gone", timeout)

    def count(self, selector: str, *, visible: bool = False) -> int:
        script = "return [...document.querySelectorAll(args[0])].filter((e) => !args[1] || e.getClientRects().length)"
        return int(self.js(script + ".length;", selector, visible))

    def texts(self, selector: str) -> list[str]:
        script = "return [...document.querySelectorAll(args[0])].map((el) => el.innerText.trim());"
        return list(self.js(script, selector))

    def text(self, selector: str) -> str:
        found = self.texts(selector)
        if not found:
            raise FlowError(f"[{self.engine}] no element {selector}")
        return found[-1]

    def attr(self, selector: str, name: str) -> str | None:
        value = self.js("return document.querySelector(args[0])?.getAttribute(args[1]) ?? null;", selector, name)
        return None if value is None else str(value)

    def value(self, selector: str) -> str:
        return str(self.js("return document.querySelector(args[0]).value;", selector))

    def fill(self, selector: str, text: str) -> None:
        self.js("const el = document.querySelector(args[0]); el.focus(); el.value = '';", selector)
        self.type(selector, text)


# ------------------------------------------------------------------------------------------------


class ChromiumDriver(Driver):
    """Chromium through Playwright (sync API)."""

    engine = "chromium"

    def __init__(self, executable: str, args: list[str]) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=executable, args=args, headless=True)
        self.version = self._browser.version
        self._context = self._browser.new_context(viewport={"width": 1280, "height": 860})
        self.page = self._context.new_page()

    def goto(self, url: str) -> None:
        self.page.goto(url, timeout=NAVIGATION_TIMEOUT * 1000)

    def reload(self) -> None:
        self.page.reload(timeout=NAVIGATION_TIMEOUT * 1000)

    def js(self, body: str, *args: Any) -> Any:
        return self.page.evaluate(f"async (args) => {{ {body} }}", list(args))

    def click(self, selector: str) -> None:
        self.page.locator(selector).first.click()

    def type(self, selector: str, text: str) -> None:
        self.page.locator(selector).first.focus()
        self.page.keyboard.type(text)

    def press(self, selector: str, key: str) -> None:
        self.page.locator(selector).first.press(key)

    def set_files(self, selector: str, paths: list[str]) -> None:
        self.page.locator(selector).set_input_files(paths)

    def close(self) -> None:
        self._context.close()
        self._browser.close()
        self._playwright.stop()


class FirefoxDriver(Driver):
    """Firefox through puppeteer-core (WebDriver BiDi), in a Node.js process: firefox_bridge.mjs."""

    engine = "firefox"

    def __init__(self, node: str, firefox: str, timeout: float = 240.0) -> None:
        self._timeout = timeout
        self._next = 0
        self._lock = threading.Lock()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (open as long as the bridge runs)
        self._process = subprocess.Popen(
            [node, str(FIREFOX_BRIDGE), firefox],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self.version = str(self._call("version"))

    def _call(self, op: str, **args: Any) -> Any:
        with self._lock:
            self._next += 1
            assert self._process.stdin is not None and self._process.stdout is not None
            try:
                self._process.stdin.write(json.dumps({"id": self._next, "op": op, **args}) + "\n")
                self._process.stdin.flush()
            except BrokenPipeError:
                pass
            # One answer per command: nothing is left in the pipe's buffer between two commands.
            ready, _, _ = select.select([self._process.stdout], [], [], self._timeout)
            line = self._process.stdout.readline() if ready else ""
        if not ready:
            self._process.kill()
            raise FlowError(f"[firefox] {op}: no answer from the puppeteer bridge in {self._timeout:.0f}s")
        if not line:
            self._stderr.seek(0)
            raise FlowError(f"[firefox] the puppeteer bridge ended: {self._stderr.read().decode(errors='replace')}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise FlowError(f"[firefox] {op}: {answer['error']}")
        return answer["value"]

    def goto(self, url: str) -> None:
        self._call("goto", url=url)

    def reload(self) -> None:
        self._call("reload")

    def js(self, body: str, *args: Any) -> Any:
        return self._call("eval", body=body, args=list(args))

    def click(self, selector: str) -> None:
        self._call("click", selector=selector)

    def type(self, selector: str, text: str) -> None:
        self._call("type", selector=selector, text=text)

    def press(self, selector: str, key: str) -> None:
        self._call("press", selector=selector, key=key)

    def set_files(self, selector: str, paths: list[str]) -> None:
        self._call("files", selector=selector, paths=paths)

    def close(self) -> None:
        with contextlib.suppress(FlowError):
            self._call("close")
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._stderr.close()


class Xvfb:
    """An X server of its own for MiniBrowser (a free display number, chosen by Xvfb)."""

    def __init__(self, binary: str) -> None:
        read, write = os.pipe()
        self._process = subprocess.Popen(
            [binary, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            self._process.kill()
            raise FlowError("Xvfb did not start")
        self.display = f":{number}"

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class WebKitDriver(Driver):
    """WebKitGTK's MiniBrowser through WebKitWebDriver, with Selenium, on an Xvfb display."""

    engine = "webkit"

    def __init__(self, webdriver_binary: str, minibrowser: str, xvfb: str) -> None:
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self._xvfb = Xvfb(xvfb)
        options = Options()
        options.binary_location = minibrowser
        options.add_argument("--automation")
        env = {**os.environ, "DISPLAY": self._xvfb.display}
        # MiniBrowser's web processes run in a bubblewrap sandbox, which containers without user
        # namespaces cannot create; the tests load only their own pages.
        env["WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS"] = "1"
        try:
            service = Service(executable_path=webdriver_binary, env=env)
            with warnings.catch_warnings():
                # Selenium's own WebKitGTK class still uses an argument that Selenium deprecates.
                warnings.simplefilter("ignore", DeprecationWarning)
                self._driver = webdriver.WebKitGTK(options=options, service=service)
        except Exception:
            self._xvfb.stop()
            raise
        self._driver.set_script_timeout(120)
        self._driver.set_page_load_timeout(NAVIGATION_TIMEOUT)
        self._driver.set_window_size(1280, 860)
        caps = self._driver.capabilities
        self.version = str(caps.get("browserVersion", "?"))

    def goto(self, url: str) -> None:
        self._driver.get(url)

    def reload(self) -> None:
        self._driver.refresh()

    def js(self, body: str, *args: Any) -> Any:
        # WebDriver awaits a returned promise; errors come back as exceptions.
        return self._driver.execute_script(f"return (async (args) => {{ {body} }})(arguments[0]);", list(args))

    def _find(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self._driver.find_element(By.CSS_SELECTOR, selector)

    def _on(self, selector: str, act: Callable[[Any], None]) -> None:
        """`act` on the element `selector` finds; again on a fresh find when the page replaced the
        element in between (a panel redrawn after Python answered), as Playwright's locators do."""
        from selenium.common.exceptions import StaleElementReferenceException

        for attempt in range(3):
            try:
                act(self._find(selector))
                return
            except StaleElementReferenceException:
                if attempt == 2:
                    raise
                time.sleep(0.1)

    def click(self, selector: str) -> None:
        self._on(selector, lambda element: element.click())

    def type(self, selector: str, text: str) -> None:
        self._on(selector, lambda element: element.send_keys(text))

    def press(self, selector: str, key: str) -> None:
        from selenium.webdriver.common.keys import Keys

        self._on(selector, lambda element: element.send_keys({"Enter": Keys.ENTER, "Escape": Keys.ESCAPE}[key]))

    def set_files(self, selector: str, paths: list[str]) -> None:
        self._on(selector, lambda element: element.send_keys("\n".join(paths)))

    def close(self) -> None:
        try:
            self._driver.quit()
        finally:
            self._xvfb.stop()


def minibrowser_path() -> str | None:
    found = os.environ.get("PY_AGENT_MINIBROWSER")
    if found:
        return found
    # Debian's libwebkit2gtk-4.1-0 puts it beside the engine's helper processes.
    found_paths = sorted(glob.glob("/usr/lib/*/webkit2gtk-4.*/MiniBrowser"))
    return found_paths[-1] if found_paths else None
