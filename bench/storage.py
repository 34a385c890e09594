"""Session storage in the page (IndexedDB through py_agent.app.storage), in headless Chromium.

Run: ``python3 build.py bench storage`` (or ``.venv/bin/python bench/storage.py`` after a build).
Rewrites the "storage" section of BENCHMARKS.md. ``STORAGE_BENCH_SITE`` serves another folder
than static/ (a development copy).

Measured in the booted app page, over the app's own database:

- saving one message (what the app does at every ``message_end``: append the entry to the
  session tree, then one IndexedDB transaction that adds the entry record and rewrites the
  bounded metadata record) when the session already holds 9, 999 and 9,999 messages;
- opening a 1,000-message (and a 10,000-message) session in the app: the ``open_session``
  command, which reads every entry, rebuilds the tree and the context, and renders the
  transcript (its last 80 messages), until the next animation frame;
- listing 1,000 sessions: the ``list_sessions`` command (all metadata records, parsed and
  validated, newest first).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import _browser  # noqa: E402
import _report  # noqa: E402

import build  # noqa: E402

APPENDS = int(os.environ.get("STORAGE_BENCH_APPENDS", "30"))
OPENS = int(os.environ.get("STORAGE_BENCH_OPENS", "5"))
CHROMIUM_ARGS = build.CHROMIUM_ARGS


# Runs inside the page's Pyodide. `db` is web/boot/idb.js's Storage over the app's database.
PYTHON = r"""
import json
from js import performance
from py_agent.ai.types import AssistantMessage, TextContent, Usage, UserMessage
from py_agent.session import Session
from py_agent.browser.idb import IndexedDBBackend
from py_agent.app.storage import SessionStore

store = SessionStore(IndexedDBBackend(db))
TEXT = ("A paragraph of a realistic reply, with some `code` and a list. " * 6).strip()

def message(i):
    if i % 2 == 0:
        return UserMessage(content=[TextContent(text=f"Question {i}: " + TEXT[:120])], timestamp=1_700_000_000_000 + i)
    return AssistantMessage(
        content=[TextContent(text=f"Answer {i}. " + TEXT)], api="anthropic-messages", provider="anthropic",
        model="claude-sonnet-4-5", usage=Usage(input=1200, output=300, total_tokens=1500), timestamp=1_700_000_000_000 + i,
    )

async def build_session(n, title="bench"):
    session = Session.create()
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_session_info(title)
    saved = 0
    for i in range(n):
        session.append_message(message(i))
    entries = session.entries
    while saved < len(entries):
        batch = entries[saved:saved + 500]
        await store.append(session, saved, batch, clear_draft=False)
        saved += len(batch)
    return session

async def time_appends(n, count):
    session = await build_session(n - 1)
    times = []
    for k in range(count):
        t0 = performance.now()
        entry = session.append_message(message(n - 1 + k))
        await store.append(session, len(session) - 1, [entry], clear_draft=True)
        times.append(performance.now() - t0)
    return times

async def main(mode, arg):
    if mode == "append":
        return json.dumps(await time_appends(arg, APPENDS))
    if mode == "session":
        return (await build_session(arg, f"{arg} messages")).id
    if mode == "many":
        for i in range(arg):
            await build_session(2, f"session {i}")
        return "ok"
"""


def run(page: Any, mode: str, arg: int) -> Any:
    code = PYTHON + f"\nAPPENDS = {APPENDS}\nawait main({mode!r}, {arg})"
    return page.evaluate(
        """async (code) => {
          const { openDatabase } = await import("./boot/idb.js");
          const db = await openDatabase();
          const py = window.pyAgent.pyodide;
          py.globals.set("db", db);
          try { return await py.runPythonAsync(code); } finally { db.close(); }
        }""",
        code,
    )


def time_command(page: Any, command: str, args: dict[str, Any]) -> float:
    """ms from sending a command until the next animation frame after its result."""
    return float(
        page.evaluate(
            """async ([command, args]) => {
              const t0 = performance.now();
              await window.pyAgentApp.py(command, args);
              await new Promise((r) => requestAnimationFrame(() => r()));
              return performance.now() - t0;
            }""",
            [command, args],
        )
    )


def time_open(page: Any, session_id: str) -> list[float]:
    times = []
    for _ in range(OPENS):
        page.evaluate("() => window.pyAgentApp.py('new_session')")
        times.append(time_command(page, "open_session", {"id": session_id}))
    return times


def main() -> None:
    site = Path(os.environ.get("STORAGE_BENCH_SITE") or build.STATIC)
    if not (site / "index.html").exists():
        raise SystemExit(f"{site} has no site: run `python3 build.py` first")
    server, base = _browser.serve(site)
    results: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("PY_AGENT_CHROMIUM", build.CHROMIUM_DEFAULT), args=CHROMIUM_ARGS
        )
        version = browser.version
        page = browser.new_context().new_page()
        page.goto(base)
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        run(page, "append", 10)  # warm-up: the first transactions of a page are slower
        for n in (10, 100, 1000, 10000):
            results[f"append {n}"] = json.loads(run(page, "append", n))
            print(f"save message #{n}: {_report.summary(results[f'append {n}'], 'ms')}", flush=True)
        for n in (1000, 10000):
            session_id = run(page, "session", n)
            results[f"open {n}"] = time_open(page, session_id)
            print(f"open {n}: {_report.summary(results[f'open {n}'], 'ms')}", flush=True)
        run(page, "many", 1000)
        results["list"] = [time_command(page, "list_sessions", {}) for _ in range(OPENS)]
        count = len(page.evaluate("() => window.pyAgentApp.py('list_sessions')")["sessions"])
        print(f"list {count} sessions: {_report.summary(results['list'], 'ms')}", flush=True)
        browser.close()
    server.shutdown()

    ratio_1k = statistics.median(results["append 1000"]) / statistics.median(results["append 10"])
    ratio_10k = statistics.median(results["append 10000"]) / statistics.median(results["append 10"])
    open_1k = statistics.median(results["open 1000"])
    # "The same cost": within the spread of the 10th message's saves (or 1.5x its median).
    same_cost = statistics.median(results["append 10000"]) <= max(
        1.5 * statistics.median(results["append 10"]), max(results["append 10"])
    )
    body = f"""## Session storage in the page (IndexedDB)

Machine: {_report.machine()}; Chromium {version}.

The app's own code in headless Chromium (`bench/storage.py`): `py_agent.app.storage` over IndexedDB
(`web/boot/idb.js`), in the booted page. A message is ~400 characters; assistant messages carry usage.

| operation | time |
|---|---|
| save the 10th message of a session | {_report.summary(results["append 10"], "ms")} |
| save the 100th message | {_report.summary(results["append 100"], "ms")} |
| save the 1,000th message | {_report.summary(results["append 1000"], "ms")} |
| save the 10,000th message | {_report.summary(results["append 10000"], "ms")} |
| open a 1,000-message session (load, rebuild, render) | {_report.summary(results["open 1000"], "ms")} |
| open a 10,000-message session | {_report.summary(results["open 10000"], "ms")} |
| list {count:,} sessions | {_report.summary(results["list"], "ms")} |

Saving a message is one transaction (`durability: "strict"`) that adds one entry record and
rewrites the session's metadata record, whose size is bounded (the preview stops at 2 KB): it does
not grow with the session. Ratio to the 10th message: 1,000th {ratio_1k:.2f}x, 10,000th
{ratio_10k:.2f}x. Saves are {APPENDS} consecutive messages after the session was filled; opens
are {OPENS} runs each, from another session (the command, until the next animation frame).

Targets: saving a message costs the same at 10,000 messages as at 10: {ratio_10k:.2f}x —
{"met" if same_cost else "not met"}. A 1,000-message session opens in at most 300 ms: {open_1k:.0f} ms —
{"met" if open_1k <= 300 else "not met"}.
"""
    _report.write_section("storage", body)
    print("wrote the storage section of BENCHMARKS.md")


if __name__ == "__main__":
    main()
