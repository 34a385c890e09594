"""Fixtures for the three-engine tests: one browser per engine (Chromium, Firefox ESR, WebKitGTK),
the site served from a sub-path on a port of its own per engine (a fresh origin: fresh storage,
no service worker yet), and the mock provider server.

`python3 build.py test` installs the browsers (Debian's chromium, firefox-esr, webkit2gtk-driver
and xvfb); puppeteer-core, which drives Firefox, is installed here from package-lock.json with
`npm ci` when missing. A missing tool skips these tests on a developer's machine and fails them in
CI (CI=true).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_chat import SUB_PATH, Site
from engine_drivers import HERE, ChromiumDriver, Driver, FirefoxDriver, WebKitDriver, minibrowser_path

import build
from py_agent.testing.mock_server import MockProviderServer

ENGINES = ("chromium", "firefox", "webkit")
CHROMIUM_ARGS = build.CHROMIUM_ARGS


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(found: str | None, message: str) -> str:
    if found:
        return found
    message += ": `python3 build.py test` installs it"
    if in_ci():
        pytest.fail(f"{message} (CI=true: the engine tests must not be skipped)")
    pytest.skip(message)


def puppeteer_installed() -> bool:
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))
    wanted = lock["packages"]["node_modules/puppeteer-core"]["version"]
    installed = HERE / "node_modules" / "puppeteer-core" / "package.json"
    return installed.exists() and json.loads(installed.read_text(encoding="utf-8"))["version"] == wanted


def ensure_puppeteer() -> None:
    if puppeteer_installed():
        return
    npm = require(shutil.which("npm"), "npm is missing (it installs puppeteer-core for the Firefox tests)")
    command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not puppeteer_installed():
        pytest.fail(f"`npm ci` in {HERE} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)


def launch(engine: str) -> Driver:
    if engine == "chromium":
        path = os.environ.get("PY_AGENT_CHROMIUM", "/usr/bin/chromium")
        chromium = require(path if Path(path).exists() else shutil.which("chromium"), "Chromium is missing")
        return ChromiumDriver(chromium, CHROMIUM_ARGS)
    if engine == "firefox":
        path = os.environ.get("PY_AGENT_FIREFOX", "/usr/bin/firefox-esr")
        firefox = require(path if Path(path).exists() else shutil.which("firefox-esr"), "Firefox ESR is missing")
        node = require(shutil.which("node"), "Node.js is missing")
        ensure_puppeteer()
        return FirefoxDriver(node, firefox)
    webdriver_binary = require(shutil.which("WebKitWebDriver"), "WebKitWebDriver (webkit2gtk-driver) is missing")
    minibrowser = require(minibrowser_path(), "WebKitGTK's MiniBrowser is missing")
    xvfb = require(shutil.which("Xvfb"), "Xvfb (xvfb) is missing")
    try:
        import selenium  # noqa: F401
    except ImportError:
        require(None, "the selenium package is missing")
    return WebKitDriver(webdriver_binary, minibrowser, xvfb)


@pytest.fixture(scope="module", params=ENGINES)
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    """One browser per engine; the tests of a module run engine after engine (pytest groups them)."""
    driver = launch(str(request.param))
    yield driver
    driver.close()


@pytest.fixture(scope="module")
def site(driver: Driver, built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp(f"host-{driver.engine}")
    sub = root / SUB_PATH.strip("/")
    sub.parent.mkdir(parents=True)
    os.symlink(built_site, sub, target_is_directory=True)
    origin, stop = build.serve_in_background(root)
    served = Site(origin + SUB_PATH, origin, stop)
    yield served
    served.stop()


@pytest.fixture(scope="module")
def mock() -> Iterator[MockProviderServer]:
    with MockProviderServer() as server:
        server.stall_seconds = 10
        yield server
