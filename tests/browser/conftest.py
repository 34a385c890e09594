"""Fixtures for the browser tests: a plain static file server and headless Chromium.

The site is served the way any static host would serve it (http.server, nothing of build.py),
from a free port on 127.0.0.1. Chromium is Debian's /usr/bin/chromium (or $PY_AGENT_CHROMIUM),
driven by Playwright; `python3 build.py test` installs both, so a missing one fails the tests.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from minidumps import minidumps_since
from web_app_helpers import serve_folder

import build
from py_agent.testing.mock_server import MockProviderServer

CHROMIUM_ARGS = build.CHROMIUM_ARGS
BOOT_TIMEOUT_MS = 120_000


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """serve(folder) starts a static server for folder on 127.0.0.1 and returns its base URL."""
    stops: list[Callable[[], None]] = []

    def start(folder: Path) -> str:
        base, stop = serve_folder(folder)
        stops.append(stop)
        return base

    yield start
    for stop in stops:
        stop()


@pytest.fixture(scope="module")
def app_site(built_site: Path) -> Path:
    """The site the app's tests open: $PY_AGENT_WEB_SITE (e.g. a deployed copy) or the fresh build."""
    return Path(os.environ.get("PY_AGENT_WEB_SITE") or built_site)


@pytest.fixture(scope="module")
def base_url(app_site: Path) -> Iterator[str]:
    """The app's site on a plain static server, one per test module."""
    base, stop = serve_folder(app_site)
    yield base
    stop()


@pytest.fixture(scope="module")
def mock() -> Iterator[MockProviderServer]:
    """The mock provider (py_agent/testing/mock_server.py), one per test module; the tests script it."""
    with MockProviderServer() as server:
        yield server


@pytest.fixture(scope="module")
def mock2() -> Iterator[MockProviderServer]:
    """A second mock provider (a server of its own), for tests of two providers."""
    with MockProviderServer() as server:
        yield server


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("PY_AGENT_CHROMIUM", "/usr/bin/chromium")
    if not Path(path).exists() and shutil.which("chromium") is None:
        message = f"Chromium is missing ({path}): `python3 build.py test` installs it (apt-get install chromium)"
        pytest.fail(message)
    return path if Path(path).exists() else str(shutil.which("chromium"))


# Chromium's own log (its stderr, through Playwright's driver) and Playwright's steps (pw:api), kept
# per module. When a test of it fails, its part of the log goes into its report: the cause of a
# renderer's crash (the kind of out-of-memory, a fatal error), the test's last steps and the lines
# that say something. Known noise of a machine without a desktop session is left out.
CHROMIUM_LOG_NOISE = ("dbus/", "unexpected operator", "<launching>", "<launched>", "gracefully close")
# What Chromium writes when a renderer (or its V8) dies: out of memory of some kind, or a fatal error.
CRASH_CAUSES = re.compile(
    r"V8 process OOM \([^)]*\)|Fatal (?:JavaScript|process) out of memory[^\n]*|Out of memory[^\n]*"
    r"|Oilpan: Out of memory[^\n]*|FATAL:[^\n]*|Check failed:[^\n]*|Received signal \d+[^\n]*"
    r"|Intentionally crashing[^\n]*",
    re.IGNORECASE,
)
LAST_STEPS = 20


@contextmanager
def chromium_log(path: Path) -> Iterator[None]:
    """Playwright's driver, started inside, writes the browser's stderr and its steps to path (DEBUG_FILE)."""
    saved = {name: os.environ.get(name) for name in ("DEBUG", "DEBUG_FILE")}
    os.environ["DEBUG"] = "pw:browser,pw:api"
    os.environ["DEBUG_FILE"] = str(path)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def read_log(path: Path, start: int = 0) -> list[str]:
    try:
        with path.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace").splitlines()
    except OSError:
        return []


def chromium_log_excerpt(path: Path, limit: int = 60, start: int = 0) -> str:
    """The browser's lines of the log from byte `start` that are not known noise (the last `limit`)."""
    lines = [line for line in read_log(path, start) if "pw:api" not in line]
    useful = [line for line in lines if not any(noise in line for noise in CHROMIUM_LOG_NOISE)]
    return "\n".join(useful[-limit:])


def crash_causes(path: Path, start: int = 0) -> list[str]:
    """What the log says killed a renderer (its out-of-memory kind, a fatal error), in order, once each."""
    found = [m.group(0).strip() for line in read_log(path, start) for m in CRASH_CAUSES.finditer(line)]
    return list(dict.fromkeys(found))


def last_steps(path: Path, start: int = 0, limit: int = LAST_STEPS) -> str:
    """The test's last Playwright steps (pw:api): what it was doing when it failed."""
    steps = [line for line in read_log(path, start) if "pw:api" in line]
    return "\n".join(steps[-limit:])


# Pages that crashed while a test ran (Playwright's "crash" event): the test fails, even if it did
# not touch the page again, and says so.
crashed_pages: list[str] = []


def watch_for_crashes(browser: Any) -> None:
    """Every page of every context made from `browser` reports its crash into `crashed_pages`."""

    def watch_page(page: Any) -> None:
        page.on("crash", lambda crashed: crashed_pages.append(crashed.url))

    def watch_context(context: Any) -> Any:
        context.on("page", watch_page)
        return context

    new_context, new_page = browser.new_context, browser.new_page
    browser.new_context = lambda *args, **kwargs: watch_context(new_context(*args, **kwargs))

    def page_of_its_own(*args: Any, **kwargs: Any) -> Any:
        page = new_page(*args, **kwargs)
        watch_page(page)
        return page

    browser.new_page = page_of_its_own


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    # Where this test's part of its module's log starts (the fixtures' steps included).
    log = item.module.__dict__.get("__chromium_log__") if item.module else None
    item.stash[LOG_START] = log.stat().st_size if isinstance(log, Path) and log.exists() else 0
    item.stash[STARTED_AT] = time.time()
    crashed_pages.clear()
    return (yield)


LOG_START = pytest.StashKey[int]()
STARTED_AT = pytest.StashKey[float]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    log = item.module.__dict__.get("__chromium_log__") if item.module else None
    if not isinstance(log, Path):
        return report
    start = item.stash.get(LOG_START, 0)
    if report.when == "call" and crashed_pages and report.passed and not item.get_closest_marker("crashes"):
        report.outcome = "failed"
        report.longrepr = f"The page crashed ({', '.join(crashed_pages)}): a renderer's crash is a finding, not noise."
    if report.failed:
        causes = crash_causes(log, start)
        if causes or crashed_pages:
            cause = "; ".join(causes) or "not in Chromium's log (see below)"
            # A crash by a signal leaves no cause in the log, only a minidump (tests/browser/minidumps.py).
            dumps = "\n".join(dump.describe() for dump in minidumps_since(item.stash.get(STARTED_AT, time.time())))
            text = f"Pages crashed: {crashed_pages or 'none seen'}\nCause: {cause}\nMinidumps: {dumps or 'none'}"
            report.sections.append(("Renderer crash", text))
        steps = last_steps(log, start)
        if steps:
            report.sections.append(("The test's last steps (Playwright, pw:api)", steps))
        excerpt = chromium_log_excerpt(log, start=start)
        if excerpt:
            report.sections.append(("Chromium's log (stderr, noise left out)", excerpt))
    return report


# Module scope, not session: while Playwright's sync API is open, an asyncio loop counts as running
# in this thread, and pytest-asyncio could not run the async tests of the modules collected later.
@pytest.fixture(scope="module")
def browser(
    chromium_path: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        message = "the playwright package is missing: run `python3 build.py test`"
        pytest.fail(message)
    log = tmp_path_factory.mktemp("chromium-log") / "stderr.log"
    request.module.__chromium_log__ = log
    with ExitStack() as stack:
        with chromium_log(log):  # only the driver started here takes the setting
            playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        watch_for_crashes(browser)
        yield browser
        browser.close()


@dataclass
class PageRun:
    """One visit of the page: its final state and everything it requested or logged."""

    page: Any
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    @property
    def state(self) -> str:
        return str(self.page.get_attribute("html", "data-state"))


@pytest.fixture
def visit(browser: Any) -> Iterator[Callable[[str], PageRun]]:
    """visit(url) opens url in a fresh browser context and waits until the page leaves "loading"."""
    contexts: list[Any] = []

    def open_page(url: str) -> PageRun:
        context = browser.new_context()
        contexts.append(context)
        page = context.new_page()
        run = PageRun(page)
        context.on("request", lambda request: run.requests.append(request.url))
        page.on("console", lambda msg: run.console.append((msg.type, msg.text)))
        page.on("pageerror", lambda error: run.page_errors.append(str(error)))
        page.goto(url)
        # A selector, not wait_for_function: the page's CSP forbids the eval that the latter needs.
        page.locator("html:not([data-state='loading'])").wait_for(state="attached", timeout=BOOT_TIMEOUT_MS)
        return run

    yield open_page
    for context in contexts:
        context.close()
