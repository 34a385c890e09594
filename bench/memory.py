"""Memory of the chat app after 10 and after 200 turns, for the same transcript size.

Run: ``python3 build.py bench memory`` (or ``.venv/bin/python bench/memory.py`` after a build).
Rewrites the "memory" section of BENCHMARKS.md.

The app (a copy of static/ on a plain static server, headless Chromium) talks to the mock provider
server (``py_agent.testing.mock_server``): each turn is a user message typed in the composer and a
streamed reply of ~600 characters (150 deltas). Turns come in batches of 10, each batch in a new
chat, so that when we measure (after the 1st batch: 10 turns; after the 20th: 200 turns) the page
shows the same transcript: what remains is what the earlier 190 turns left behind (leaked PyProxies,
listeners, DOM, Python objects), not a longer conversation.

Measured after a garbage collection on both sides (CDP ``HeapProfiler.collectGarbage``, Python's
``gc.collect()``): the JS heap in use (CDP ``Runtime.getHeapUsage``), the WebAssembly memory
(``pyodide._module.HEAPU8.length``, which only grows: Python's high-water mark) and the objects
Python's garbage collector tracks (``len(gc.get_objects())``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _browser  # noqa: E402
import _report  # noqa: E402

from py_agent.testing.mock_server import MockProviderServer  # noqa: E402

BATCH = 10
BATCHES = int(os.environ.get("MEMORY_BENCH_BATCHES", "20"))
RUNS = int(os.environ.get("MEMORY_BENCH_RUNS", "2"))
REPLY = (
    "Here is a short answer with **bold** text, a list and some `code`:\n\n"
    "- the first point, explained in a sentence or two;\n- the second point;\n\n"
    "```python\ndef answer(x: int) -> int:\n    return x * 2\n```\n\n"
) * 3


def turn(page: Any, i: int) -> None:
    box = page.locator("#input")
    box.fill(f"Question number {i}: what is {i} times two?")
    box.press("Enter")
    page.locator("#transcript .msg.assistant:not(.streaming)").nth(i % BATCH).wait_for(timeout=60_000)
    page.locator("#stop-button").wait_for(state="hidden", timeout=60_000)
    page.locator("#transcript .msg.assistant.streaming").first.wait_for(state="detached", timeout=60_000)


def measure(page: Any, cdp: Any) -> dict[str, float]:
    page.wait_for_timeout(500)  # pending saves and renders
    python = page.evaluate(
        """() => JSON.parse(window.pyAgent.pyodide.runPython(
             "import gc, json; gc.collect(); json.dumps({'objects': len(gc.get_objects())})"))"""
    )
    for _ in range(2):
        cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")
    wasm = page.evaluate("() => window.pyAgent.pyodide._module.HEAPU8.length")
    return {
        "js_heap": float(heap["usedSize"]),
        "wasm": float(wasm),
        "py_objects": float(python["objects"]),
    }


def one_run(browser: Any, base: str, mock: MockProviderServer) -> dict[str, dict[str, float]]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = _browser.open_app(context, base)
        cdp = context.new_cdp_session(page)
        cdp.send("HeapProfiler.enable")
        _browser.use_mock_model(page, mock.url)
        mock.reset()
        mock.script([{"text": REPLY, "chunk_size": 4, "repeat": BATCH * BATCHES + 5}])
        points: dict[str, dict[str, float]] = {}
        for batch in range(BATCHES):
            page.locator("#new-chat").click()
            page.locator("#session-title", has_text="New chat").wait_for()
            page.locator("html:not([data-switching])").wait_for(state="attached")  # the new chat is open
            for i in range(BATCH):
                turn(page, batch * BATCH + i)
            done = (batch + 1) * BATCH
            if batch == 0 or batch == BATCHES - 1:
                points[str(done)] = measure(page, cdp)
                print(f"after {done} turns: {points[str(done)]}", flush=True)
        return points
    finally:
        context.close()


def mb(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def kb(value: float) -> str:
    return f"{value / 1e3:.1f} kB"


def main() -> None:
    load_before = _browser.load_average()
    runs: list[dict[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="py-agent-bench-memory-") as tmp, MockProviderServer() as mock:
        site = _browser.site_copy(Path(tmp) / "site")
        server, base = _browser.serve(site)
        try:
            with sync_playwright() as playwright:
                browser = _browser.launch(playwright)
                version = browser.version
                for _ in range(RUNS):
                    runs.append(one_run(browser, base, mock))
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
    first, last = str(BATCH), str(BATCH * BATCHES)
    rows = []
    ratios: dict[str, list[float]] = {}
    labels = {
        "js_heap": ("JS heap in use", mb),
        "wasm": ("WebAssembly memory", mb),
        "py_objects": ("Python objects tracked by gc", lambda v: f"{v:,.0f}"),
    }
    for key, (label, fmt) in labels.items():
        before = [r[first][key] for r in runs]
        after = [r[last][key] for r in runs]
        ratio = [a / b for a, b in zip(after, before, strict=True)]
        ratios[key] = ratio
        per_turn = [(a - b) / (BATCH * (BATCHES - 1)) for a, b in zip(after, before, strict=True)]
        turn_fmt = kb if fmt is mb else fmt
        rows.append(
            f"| {label} | {' / '.join(fmt(v) for v in before)} | {' / '.join(fmt(v) for v in after)} | "
            f"{' / '.join(f'{x:.2f}' for x in ratio)} | {' / '.join(turn_fmt(v) for v in per_turn)} |"
        )
    worst = max(max(ratios["js_heap"]), max(ratios["wasm"]))
    body = (
        f"""## Memory over 200 turns

Machine: {_report.machine()}; Chromium {version}; 1-minute load average {load_before:.1f} before the
runs, {_browser.load_average():.1f} after.

The chat app against the mock provider server: {BATCHES} batches of {BATCH} turns (a typed message, a
streamed reply of {len(REPLY)} characters), each batch in a new chat, so that both measurements are
taken with the same {BATCH}-turn transcript on screen (`bench/memory.py`); after garbage collection on
both sides. {RUNS} runs (fresh pages), shown as run 1 / run 2.

| measure | after {first} turns | after {last} turns | ratio | growth per turn |
|---|---|---|---|---|
"""
        + "\n".join(rows)
        + f"""

Target: after {last} turns at most 1.5 times the memory after {first} (JS heap and WebAssembly memory):
worst ratio {worst:.2f} — {"met" if worst <= 1.5 else "not met"}.
"""
    )
    _report.write_section("memory", body + NOTES)
    print(body)


NOTES = """
The WebAssembly memory is Python's high-water mark: it grows while the first turns run, then the
same memory is reused. Python's tracked objects are the clearest sign of a leak on the Python side,
and this benchmark found two, both keeping every chat closed in the page alive with its agent and
transcript (~115 objects per turn here): a cache of how many arguments a callback takes
(`py_agent/ai/_util.py`, used for every listener and hook) was keyed by bound methods (it is keyed
by plain functions now), and the workspace tools kept the tool host of every chat they were built
for (`py_agent/app/workspace_tools.py`; now only the shown chat's). After both fixes only the chat on
screen is in memory. What still grows (about 50 tracked Python objects and 6 kB of JS heap per turn)
stays well within the target and is not broken down here; a heap snapshot diff and a census of
`gc.get_objects()` by type would be the next step if it mattered.
"""

if __name__ == "__main__":
    main()
