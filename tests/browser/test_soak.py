"""A soak test: one page, a long scripted session, nothing lost, no crash (marked `soak`; CI runs it).

The mock provider scripts the model: over 200 model turns mixing the `write`, `read`, `python` and
`javascript` tools, with files attached to messages, HTML previews in the side panel, uploads in
the Files panel, two new chats and two reloads, all in one page. Every user message and every reply
the page showed is then in IndexedDB, in order, with a result for every tool call; no page crashed
(tests/browser/conftest.py fails a test whose page crashes). The renderers' memory is measured
along the way and printed (BENCHMARKS.md, "Soak").
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import READY_TIMEOUT_MS, App, open_app

from py_agent.testing.mock_server import MockProviderServer

pytestmark = pytest.mark.soak

USER_TURNS = 84  # 15 model turns every 6 user turns: 210
NEW_CHATS = (28, 56)  # before these user turns
RELOADS = (14, 70)
UPLOADS = (6, 45)
PREVIEWS = range(4, USER_TURNS, 12)  # turns that write a page (n % 6 == 4)
MIN_MODEL_TURNS = 200


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def turn_script(n: int) -> tuple[str, list[dict[str, Any]], list[str]]:
    """User turn n: the message, the model's replies (one per request) and the files it attaches."""
    final = {"text": f"Reply {n}: done."}
    kind = n % 6
    if kind == 0:
        return (
            f"Turn {n}: note this down and read it back",
            [
                call("write", {"path": f"notes/n{n}.txt", "content": f"note {n}\n"}),
                call("read", {"path": f"notes/n{n}.txt"}),
                final,
            ],
            [],
        )
    if kind == 1:
        code = (
            f"values = list(range({n + 3}))\nprint('sum', sum(values))\nopen('py{n}.txt', 'w').write(str(values[-3:]))"
        )
        return (
            f"Turn {n}: compute with Python",
            [call("python", {"title": f"Sum {n}", "code": code}), call("read", {"path": f"py{n}.txt"}), final],
            [],
        )
    if kind == 2:
        code = f'await workspace.write("js/out{n}.json", JSON.stringify({{ n: {n} }}));\nreturn {n} * 3;'
        return (
            f"Turn {n}: compute with JavaScript",
            [
                call("javascript", {"title": f"Triple {n}", "code": code}),
                call("read", {"path": f"js/out{n}.json"}),
                final,
            ],
            [],
        )
    if kind == 3:
        # An attached CSV, which the python tool reads from the workspace.
        code = f"import csv\nrows = list(csv.DictReader(open('data{n}.csv')))\nprint(len(rows), 'rows')"
        return (
            f"Turn {n}: count the rows of the attached file",
            [call("python", {"code": code}), final],
            [f"data{n}.csv"],
        )
    if kind == 4:
        page = f"<h1>Page {n}</h1><p>Preview number {n}</p>"
        return (
            f"Turn {n}: make a page",
            [call("write", {"path": f"page{n}.html", "content": page}), call("read", {"path": f"page{n}.html"}), final],
            [],
        )
    return (f"Turn {n}: just answer", [final], [])


def renderer_memory(app: App) -> dict[str, float]:
    """MB: the page's JavaScript heap (CDP), the app's Python (its WebAssembly memory) and the resident
    memory of every renderer process (the page's and the sandboxed frames')."""
    page = app.page
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    finally:
        cdp.detach()
    browser_cdp = page.context.browser.new_browser_cdp_session()
    try:
        processes = browser_cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    finally:
        browser_cdp.detach()
    wasm = page.evaluate("async () => (await window.pyAgent.ready).pyodide._module.HEAP8.buffer.byteLength")
    rss = 0.0
    for process in processes:
        if process.get("type") != "renderer":
            continue
        try:
            status = Path(f"/proc/{process['id']}/status").read_text()
        except OSError:
            continue
        rss += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")) / 1024
    return {"js_heap_mb": metrics.get("JSHeapUsedSize", 0) / 2**20, "wasm_mb": wasm / 2**20, "renderers_rss_mb": rss}


def stored_conversations(app: App) -> dict[str, dict[str, Any]]:
    """Per session in IndexedDB: its user texts, its replies' texts, its tool calls and tool results."""
    dump = app.idb_dump()
    sessions: dict[str, dict[str, Any]] = {}
    for record in sorted(dump["entries"], key=lambda r: (r["sessionId"], r["seq"])):
        entry = json.loads(record["line"])
        message = entry.get("message") if entry.get("type") == "message" else None
        if not message:
            continue
        s = sessions.setdefault(record["sessionId"], {"user": [], "replies": [], "calls": [], "results": []})
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        text = "\n\n".join(t for t in texts if not t.startswith("<file name="))  # attached files' text aside
        if message["role"] == "user":
            s["user"].append(text.strip())
        elif message["role"] == "assistant":
            s["calls"] += [b["id"] for b in blocks if b.get("type") == "toolCall"]
            if text:
                s["replies"].append(text)
        elif message["role"] == "toolResult":
            s["results"].append(message["toolCallId"])
    return sessions


def attach(app: App, paths: list[Path]) -> None:
    page = app.page
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files([str(p) for p in paths])
    page.locator("#attachments .att-chip").first.wait_for(timeout=30_000)


def preview(app: App, n: int) -> None:
    """The page the tool wrote, opened from its card's file chip in the side panel's preview."""
    page = app.page
    card = page.locator("#transcript details.tool", has=page.locator(".pa-chip", has_text=f"page{n}.html")).last
    if card.get_attribute("open") is None:
        card.locator("summary").click()
    card.locator(".pa-chip", has_text=f"page{n}.html").click()
    page.locator("#side-panel").wait_for(state="visible", timeout=30_000)
    page.locator("#side-panel iframe").first.wait_for(state="attached", timeout=30_000)
    page.locator("#side-panel-close").click()


def upload(app: App, path: Path) -> None:
    page = app.page
    page.locator("#session-menu-btn:not([disabled])").click()
    page.get_by_role("menuitem", name="Files…").click()
    panel = page.locator("#side-panel")
    panel.wait_for(state="visible", timeout=30_000)
    panel.locator("input[type=file]:not([webkitdirectory])").set_input_files(str(path))
    panel.locator(".pa-file-name", has_text=path.name).wait_for(timeout=30_000)
    page.locator("#side-panel-close").click()


def test_a_long_scripted_session_loses_nothing_and_does_not_crash(
    browser: Any, base_url: str, mock: MockProviderServer, tmp_path: Path
) -> None:
    started = time.monotonic()
    app = open_app(browser, base_url)
    page = app.page
    try:
        model = {"id": "mock-model", "name": "Mock Model"}
        app.add_provider("Mock", mock, [model], api="openai-completions", key="sk-soak-0001")
        app.new_chat()
        app.choose_model("mock model", "Mock Model")
        mock.reset()
        shown: dict[str, dict[str, list[str]]] = {}
        memory: list[tuple[str, dict[str, float]]] = []
        for n in range(USER_TURNS):
            if n in NEW_CHATS:
                app.new_chat()
            if n in RELOADS:
                page.reload()
                page.locator("html[data-app='ready']").wait_for(state="attached", timeout=READY_TIMEOUT_MS)
                page.locator("#transcript .msg.assistant", has_text=f"Reply {n - 1}: done.").wait_for(timeout=60_000)
                memory.append((f"after reload at turn {n}", renderer_memory(app)))
            if n in UPLOADS:
                upload_file = tmp_path / f"upload{n}.txt"
                upload_file.write_text(f"uploaded at turn {n}\n")
                upload(app, upload_file)
            text, replies, attached = turn_script(n)
            if attached:
                paths = []
                for name in attached:
                    path = tmp_path / name
                    path.write_text("a,b\n" + "".join(f"{i},{i * n}\n" for i in range(n)))
                    paths.append(path)
                attach(app, paths)
            mock.script(replies)
            app.type_and_enter(text)
            page.locator("#transcript .msg.assistant", has_text=f"Reply {n}: done.").wait_for(timeout=120_000)
            app.wait_idle(timeout=120_000)
            session = shown.setdefault(app.current_session_id(), {"user": [], "replies": []})
            session["user"].append(app.user_texts()[-1])
            session["replies"].append(app.assistant_texts()[-1])
            if n in PREVIEWS:
                preview(app, n)
            if n == 1:
                memory.append(("after the first tool turns", renderer_memory(app)))
        memory.append((f"at the end ({USER_TURNS} user turns)", renderer_memory(app)))

        model_turns = len(mock.requests)
        assert model_turns >= MIN_MODEL_TURNS
        stored = stored_conversations(app)
        assert len(shown) == len(NEW_CHATS) + 1
        for session_id, seen in shown.items():
            kept = stored[session_id]
            assert kept["user"] == seen["user"], session_id
            assert kept["replies"] == seen["replies"], session_id
            assert kept["calls"] == kept["results"] and kept["calls"], session_id
        assert page.locator("#transcript .msg-error").count() == 0
        assert not app.page_errors, app.page_errors
        first = memory[0][1]
        lines = [
            f"soak: {model_turns} model turns, {USER_TURNS} user turns, {time.monotonic() - started:.0f} s; "
            f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
        ]
        for label, m in memory:
            lines.append(f"soak: {label}: " + ", ".join(f"{k} {v:.0f} ({v - first[k]:+.0f})" for k, v in m.items()))
        print("\n".join(lines))
    finally:
        page.context.close()
