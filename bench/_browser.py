"""Shared by the bench scripts that use headless Chromium: static servers, Chromium, npm deps.

- ``serve(folder)``: a plain static server (http.server, as any static host) on 127.0.0.1.
- ``site_copy(dest)``: a copy of static/ (rebuilt first when its inputs changed), so that a
  rebuild by someone else meanwhile cannot mix two builds under a running benchmark.
- ``launch(playwright)``: Chromium with the flags every browser test and benchmark uses.
- ``app_on_mock(prefix)``: a context manager: the app (a site copy, served) ready in headless
  Chromium, its model a provider on the mock server (``throttle``: the CPU slowed down that many times).
- ``bench_node_modules()``: bench/node_modules, installed with ``npm ci`` from bench/package-lock.json
  when missing or stale (esbuild and pi's reference packages, for the benchmarks only).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import build  # noqa: E402

CHROMIUM_ARGS = build.CHROMIUM_ARGS
# Only for pages that measure memory: exact JS heap figures and a callable gc().
MEMORY_ARGS = ["--enable-precise-memory-info", "--js-flags=--expose-gc"]


def chromium_path() -> str:
    return os.environ.get("PY_AGENT_CHROMIUM", build.CHROMIUM_DEFAULT)


def serve(folder: Path) -> tuple[build.QuietServer, str]:
    """(server, base URL ending in "/"); stop it with server.shutdown(); server.server_close()."""
    server = build.QuietServer(("127.0.0.1", 0), functools.partial(build.QuietStaticHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def site_copy(dest: Path) -> Path:
    if build.site_is_stale():
        build.build_site(quiet=True)
    return build.snapshot_site(dest)


def launch(playwright: Any, extra_args: list[str] | None = None) -> Any:
    return playwright.chromium.launch(
        executable_path=chromium_path(), args=CHROMIUM_ARGS + (extra_args or []), headless=True
    )


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def bench_node_modules() -> Path:
    """bench/node_modules, (re)installed by ``npm ci`` when missing or when package-lock.json changed."""
    modules = HERE / "node_modules"
    stamp = modules / ".py-agent-lock-sha256"
    wanted = hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == wanted:
        return modules
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed for the benchmarks' JavaScript tools (bench/package.json): install Node.js")
    print("[bench] npm ci in bench/ (esbuild, pi-agent-core and pi-ai 0.79.10; benchmarks only)", flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True)
    stamp.write_text(wanted + "\n")
    return modules


def esbuild(entry: Path, out: Path) -> Path:
    """Bundle entry (and what it imports from bench/node_modules) into one ES module."""
    modules = bench_node_modules()
    binary = modules / ".bin" / "esbuild"
    subprocess.run(
        [
            str(binary),
            str(entry),
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={out}",
        ],
        cwd=HERE,
        check=True,
    )
    return out


# ---- The chat app (web/app.js) in a page ----


def open_app(context: Any, base: str, query: str = "?demo-tps=0") -> Any:
    """A new page of ``context`` with the app ready (``data-app="ready"``)."""
    page = context.new_page()
    page.goto(base + query)
    page.locator("html[data-app='ready'], html[data-app='error'], html[data-state='error']").wait_for(
        state="attached", timeout=240_000
    )
    if page.get_attribute("html", "data-app") != "ready":
        raise RuntimeError(f"the app did not start: {page.inner_text('body')[:600]}")
    return page


def app_command(page: Any, command: str, **args: Any) -> Any:
    """One command of the app's channel (``window.pyAgentApp.py``), as the UI sends them."""
    return page.evaluate("([c, a]) => window.pyAgentApp.py(c, a)", [command, args])


def use_mock_model(page: Any, server_url: str, name: str = "Mock") -> None:
    """A custom OpenAI-compatible provider on the mock server, chosen as the current model."""
    app_command(
        page,
        "save_custom_provider",
        provider={
            "name": name,
            "kind": "openai-compatible",
            "api": "openai-completions",
            "baseUrl": f"{server_url}/v1",
            "models": ["mock-model"],
        },
        key="sk-bench-not-a-key",
        discover=False,
    )
    app_command(page, "set_model", provider=name, id="mock-model")


def throttle_cpu(page: Any, rate: float) -> None:
    """Chromium's CPU throttling for ``page`` (DevTools' ``Emulation.setCPUThrottlingRate``: a
    phone's slower CPU, roughly); 1 turns it off."""
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})


@dataclass
class AppOnMock:
    page: Any
    mock: Any
    version: str  # Chromium's


@contextlib.contextmanager
def app_on_mock(prefix: str, throttle: float = 1) -> Iterator[AppOnMock]:
    """The app ready in one page of headless Chromium (a copy of the site on a static server), its
    current model "mock-model" of a provider on a mock provider server of this process."""
    from playwright.sync_api import sync_playwright

    from py_agent.testing.mock_server import MockProviderServer

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, MockProviderServer() as mock:
        site = site_copy(Path(tmp) / "site")
        server, base = serve(site)
        try:
            with sync_playwright() as playwright:
                browser = launch(playwright)
                context = browser.new_context(viewport={"width": 1280, "height": 860})
                page = open_app(context, base)
                use_mock_model(page, mock.url)
                if throttle != 1:
                    throttle_cpu(page, throttle)
                try:
                    yield AppOnMock(page, mock, browser.version)
                finally:
                    browser.close()
        finally:
            server.shutdown()
            server.server_close()
