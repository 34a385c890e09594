"""Boot time of the page in headless Chromium, cold and warm, beside a bare ``loadPyodide()``.

Run: ``python3 build.py bench boot`` (or ``.venv/bin/python bench/boot.py`` after a build).
Rewrites the "boot" section of BENCHMARKS.md.

Both pages are served by one plain static server from a temporary folder: ``site/`` is a copy of static/,
``bare/`` a page that only imports ``site/pyodide/pyodide.mjs`` and awaits ``loadPyodide()``,
under the same CSP. Each run launches Chromium with a new, empty profile: the first visit is
"cold" (nothing cached), a second visit in the same profile is "warm" (HTTP cache and
compiled-code caches filled by the first). The time is the page's own ``performance.now()``
when it reaches data-state="ready", i.e. milliseconds since navigation start.
"""

from __future__ import annotations

import functools
import http.server
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import _report  # noqa: E402

import build  # noqa: E402

RUNS = int(os.environ.get("BOOT_BENCH_RUNS", "5"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
BARE_HTML = """<!doctype html>
<html lang="en" data-state="loading">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="script-src 'self' 'wasm-unsafe-eval'; object-src 'none'">
  <title>bare loadPyodide()</title>
  <script type="module" src="bare.js"></script>
</head>
<body><p>bare loadPyodide()</p></body>
</html>
"""
BARE_JS = """const indexURL = new URL("../site/pyodide/", import.meta.url).href;
const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
await loadPyodide({ indexURL });
window.readyAt = performance.now();
document.documentElement.dataset.state = "ready";
"""
PAGES = {
    # name: (path under the server root, JavaScript expression giving the ready time in ms)
    "py-agent page (runtime, 6 wheels, import)": ("site/", "window.pyAgent.readyAt"),
    "bare loadPyodide()": ("bare/", "window.readyAt"),
}


class Handler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return build.MIME_TYPES.get(os.path.splitext(str(path))[1].lower()) or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


Visit = tuple[float, dict[str, float]]  # ready time in ms, and the page's step timings


def visit(context: Any, url: str, ready_expr: str) -> Visit:
    page = context.new_page()
    try:
        page.goto(url)
        page.locator("html:not([data-state='loading'])").wait_for(state="attached", timeout=180_000)
        state = page.get_attribute("html", "data-state")
        if state != "ready":
            raise RuntimeError(f"{url} ended in state {state}: {page.inner_text('body')[:500]}")
        ready = float(page.evaluate(f"() => {ready_expr}"))
        steps = page.evaluate("() => (window.pyAgent && window.pyAgent.timings) || {}")
        return ready, {k: float(v) for k, v in steps.items()}
    finally:
        page.close()


def measure(playwright: Any, chromium: str, url: str, ready_expr: str) -> tuple[Visit, Visit]:
    """(cold, warm) visits, in a new profile."""
    with tempfile.TemporaryDirectory(prefix="py-agent-bench-profile-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium, args=CHROMIUM_ARGS, headless=True
        )
        try:
            cold = visit(context, url, ready_expr)
            warm = visit(context, url, ready_expr)
        finally:
            context.close()
    return cold, warm


def main() -> int:
    if build.site_is_stale():
        build.build_site(quiet=True)
    chromium = os.environ.get("PY_AGENT_CHROMIUM", build.CHROMIUM_DEFAULT)
    load_before = os.getloadavg()[0]
    results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in PAGES}
    steps: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="py-agent-bench-") as tmp:
        root = Path(tmp)
        build.snapshot_site(root / "site")  # a copy: a rebuild meanwhile cannot mix two builds
        (root / "bare").mkdir()
        (root / "bare" / "index.html").write_text(BARE_HTML, encoding="utf-8")
        (root / "bare" / "bare.js").write_text(BARE_JS, encoding="utf-8")
        server, base = serve(root)
        try:
            with sync_playwright() as playwright:
                version_probe = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                chromium_version = version_probe.version
                version_probe.close()
                for run in range(RUNS):  # interleaved, so drift affects both pages alike
                    for name, (path, expr) in PAGES.items():
                        (cold, cold_steps), (warm, warm_steps) = measure(playwright, chromium, base + path, expr)
                        results[name][0].append(cold)
                        results[name][1].append(warm)
                        if cold_steps:
                            steps["cold"].append(cold_steps)
                            steps["warm"].append(warm_steps)
                        print(f"run {run + 1}/{RUNS} {name}: cold {cold:.0f} ms, warm {warm:.0f} ms", flush=True)
        finally:
            server.shutdown()
            server.server_close()
    text = report(results, steps, chromium_version, load_before, os.getloadavg()[0])
    _report.write_section("boot", text)
    print(text)
    return 0


def step_line(visits: list[dict[str, float]]) -> str:
    names = {"download": "download", "compile": "compile and start", "install": "install wheels", "import": "import"}
    parts = [f"{label} {statistics.median(v[key] for v in visits):.0f} ms" for key, label in names.items()]
    return ", ".join(parts)


def report(
    results: dict[str, tuple[list[float], list[float]]],
    steps: dict[str, list[dict[str, float]]],
    chromium_version: str,
    load_before: float,
    load_after: float,
) -> str:
    size = sum(p.stat().st_size for p in build.STATIC.rglob("*") if p.is_file())
    lines = [
        "## Page boot time in headless Chromium",
        "",
        f"Machine: {_report.machine()}; Chromium {chromium_version}; "
        f"1-minute load average {load_before:.1f} before the runs, {load_after:.1f} after.",
        "",
        'From navigation start to `data-state="ready"` (the page\'s own `performance.now()`), served from '
        f"127.0.0.1 by a plain static server; static/ is {size / 1e6:.1f} MB (Pyodide {build.PYODIDE_VERSION}). "
        "Cold: a new, empty browser profile. Warm: a second visit in the same profile. "
        "The bare page only awaits `loadPyodide()` from the same files (`bench/boot.py`).",
        "",
        "| page | cold | warm |",
        "|---|---|---|",
    ]
    for name, (cold, warm) in results.items():
        lines.append(f"| {name} | {_report.summary(cold, 'ms', 0)} | {_report.summary(warm, 'ms', 0)} |")
    if steps["cold"]:
        lines += [
            "",
            "The page's steps (`window.pyAgent.timings`, medians): "
            f"cold: {step_line(steps['cold'])}; warm: {step_line(steps['warm'])}. "
            '"Download" ends when the last runtime file has arrived (WebAssembly compilation streams '
            'alongside); "import" is `import py_agent` with everything it imports.',
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
