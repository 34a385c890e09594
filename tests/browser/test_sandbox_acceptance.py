"""The in-page tools' acceptance flow, in the page, through the mock provider server.

A scripted conversation (OpenAI chat completions over the page's fetch) has the agent write a
file, run Python that reads it and writes a result file, run JavaScript that reads that and
writes a report, and edit the report. The workspace panel shows the results; after a reload the
session's workspace (IndexedDB) and the panel have everything back. The API key goes to the
provider only: never into a sandbox frame, a tool result or a request to any other host.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sandbox_helpers import BOOT_TIMEOUT_MS, FAKE_KEY, SandboxPage, open_sandbox_page

from py_agent.testing.mock_server import MockProviderServer

SESSION = "acceptance-session"

PYTHON_CODE = """import csv, json
rows = [int(row["n"]) for row in csv.DictReader(open("data/numbers.csv"))]
json.dump({"total": sum(rows), "count": len(rows)}, open("result.json", "w"))
print("total", sum(rows))"""

JAVASCRIPT_CODE = """const result = JSON.parse(await workspace.read("result.json"));
await workspace.write("report.html", `<h1>Report draft</h1><p id="total">Total: ${result.total} of ${result.count}</p>`);
console.log("report written");
return result.total * 2;"""

SCRIPT = [
    {
        "tool_calls": [
            {"id": "c1", "name": "write", "arguments": {"path": "data/numbers.csv", "content": "n\n3\n4\n5\n"}}
        ]
    },
    {"tool_calls": [{"id": "c2", "name": "python", "arguments": {"title": "Summing", "code": PYTHON_CODE}}]},
    {"tool_calls": [{"id": "c3", "name": "javascript", "arguments": {"title": "Report", "code": JAVASCRIPT_CODE}}]},
    {
        "tool_calls": [
            {
                "id": "c4",
                "name": "edit",
                "arguments": {"path": "report.html", "edits": [{"oldText": "Report draft", "newText": "Final report"}]},
            }
        ]
    },
    {"text": "All done: report.html shows the total."},
]

RUN_AGENT = """
import json
from py_agent.ai.types import Model
from py_agent.core import Agent
from py_agent.tools import ToolSettings
from py_agent.browser.workspace import open_page_workspace as open_workspace
from py_agent.app.workspace_store import set_workspace_platform
from py_agent.app.workspace_tools import make_tools
from py_agent.browser.workspace import page_workspace_platform
set_workspace_platform(page_workspace_platform())

workspace = await open_workspace(SESSION)
model = Model(id="mock-model", name="Mock", api="openai-completions", provider="openai", base_url=BASE,
              context_window=128000, max_tokens=4096)
agent = Agent(initial_state={"model": model, "tools": make_tools(workspace, ToolSettings(python_timeout_ms=120000))},
              get_api_key=lambda provider: KEY)
await agent.prompt("Sum data/numbers.csv and make an HTML report")
results = []
for message in agent.state.messages:
    if message.role == "toolResult":
        results.append([message.tool_call_id, message.is_error, "".join(getattr(b, "text", "") for b in message.content)])
json.dumps({"results": results, "last": "".join(getattr(b, "text", "") for b in agent.state.messages[-1].content),
            "error": agent.state.error_message})
"""

MOUNT_PREVIEW = """async (session) => {
    const { pyodide } = await window.pyAgent.ready;
    await import("./sandbox/index.js");
    const source = await pyodide.pyimport("py_agent.browser.workspace").preview_source(session);
    let host = document.getElementById("preview-host");
    if (!host) {
        host = document.createElement("div");
        host.id = "preview-host";
        host.style.height = "600px";
        document.body.append(host);
    }
    window.__preview = new pyAgentSandbox.WorkspacePreview(host, source);
    return JSON.parse(source.list()).map((f) => f.path);
}"""


def report_frame_text(sandbox: SandboxPage, timeout: float = 20.0) -> str:
    """The report as the panel shows it: the document of the sandboxed preview frame (read from
    the nested frame itself, or from the srcdoc it was given when Playwright has not attached
    to the nested frame yet)."""
    deadline = time.monotonic() + timeout
    script = {
        "about:srcdoc": "() => document.body.innerText",
        "preview.html": "() => document.querySelector('iframe')?.srcdoc ?? ''",
    }
    while True:
        for frame in sandbox.page.frames:
            kind = (
                "about:srcdoc"
                if frame.url == "about:srcdoc"
                else "preview.html"
                if frame.url.endswith("/preview.html")
                else None
            )
            if kind is None:
                continue
            try:
                text = str(frame.evaluate(script[kind]))
            except Exception:
                continue
            if "Total:" in text:
                return text
        if time.monotonic() > deadline:
            raise AssertionError(f"the report is not shown in a preview frame: {sandbox.sandbox_frames()}")
        # Not time.sleep: Playwright holds new out-of-process frames until it handles its events.
        sandbox.page.wait_for_timeout(100)


def test_write_python_javascript_edit_preview_and_reload(browser: Any, base_url: str, mock: MockProviderServer) -> None:
    mock.reset()
    mock.script(SCRIPT)
    sandbox = open_sandbox_page(browser, base_url)
    try:
        code = (
            RUN_AGENT.replace("SESSION", repr(SESSION))
            .replace("BASE", repr(mock.base_url("openai-completions")))
            .replace("KEY", repr(FAKE_KEY))
        )
        outcome = json.loads(sandbox.py(code))
        assert outcome["error"] is None, outcome
        results = {call_id: (is_error, text) for call_id, is_error, text in outcome["results"]}
        assert results["c1"] == (False, "Successfully wrote 8 bytes to data/numbers.csv")
        assert results["c2"] == (False, "total 12\n[Workspace: wrote result.json (25B)]"), results["c2"]
        assert results["c3"] == (False, "report written\n=> 24\n[Workspace: wrote report.html (53B)]"), results["c3"]
        assert results["c4"] == (False, "Successfully replaced 1 block(s) in report.html."), results["c4"]
        assert outcome["last"] == "All done: report.html shows the total."

        # The model saw each tool's result; the key went to the provider, in its header only.
        requests = mock.requests
        assert len(requests) == 5
        assert all(r["headers"].get("authorization") == f"Bearer {FAKE_KEY}" for r in requests)
        last_body = json.dumps(requests[-1]["body"])
        assert "total 12" in last_body and "=> 24" in last_body
        for call_id, (_, text) in results.items():
            assert FAKE_KEY not in text, call_id

        # The panel shows the files and the edited report (in a sandboxed frame).
        paths = sandbox.page.evaluate(MOUNT_PREVIEW, SESSION)
        assert paths == ["data/numbers.csv", "report.html", "result.json"]
        sandbox.page.evaluate("() => window.__preview.select('report.html')")
        text = report_frame_text(sandbox)
        assert "Final report" in text and "Total: 12 of 3" in text

        # Reload: the session's workspace comes back from IndexedDB, and the panel with it.
        sandbox.page.reload()
        sandbox.page.locator("html:not([data-state='loading'])").wait_for(state="attached", timeout=BOOT_TIMEOUT_MS)
        paths = sandbox.page.evaluate(MOUNT_PREVIEW, SESSION)
        assert paths == ["data/numbers.csv", "report.html", "result.json"]
        stored = json.loads(
            sandbox.py(
                "import json\nfrom py_agent.browser.workspace import open_page_workspace as open_workspace\n"
                f"ws = await open_workspace({SESSION!r})\n"
                "json.dumps({f.path: f.data for f in ws.files()})"
            )
        )
        assert json.loads(stored["result.json"]) == {"total": 12, "count": 3}
        assert stored["report.html"].startswith("<h1>Final report</h1>")
        sandbox.page.evaluate("() => window.__preview.select('report.html')")
        assert "Final report" in report_frame_text(sandbox)
        for frame_html in sandbox.frame_texts():
            assert FAKE_KEY not in frame_html or "data-secret" in frame_html  # only the page's planted copy

        # Every tool call's change was kept for undo (IndexedDB): undoing the python run removes the
        # file it created; undoing the edit puts the draft back.
        undone = json.loads(
            sandbox.py(
                "import json\nfrom py_agent.browser.workspace import open_page_workspace as open_workspace\n"
                f"ws = await open_workspace({SESSION!r})\n"
                "states = [ws.history.state(c) for c in ('c1', 'c2', 'c3', 'c4')]\n"
                "python = (await ws.history.undo(ws, 'c2')).status\n"
                "edit = (await ws.history.undo(ws, 'c4')).status\n"
                "json.dumps([states, python, edit, ws.get('result.json') is None, ws.get('report.html').data])"
            )
        )
        assert undone[:4] == [["available"] * 4, "done", "done", True], undone
        assert undone[4].startswith("<h1>Report draft</h1>"), undone
        paths = sandbox.page.evaluate(MOUNT_PREVIEW, SESSION)
        assert paths == ["data/numbers.csv", "report.html"]
    finally:
        sandbox.page.context.close()
