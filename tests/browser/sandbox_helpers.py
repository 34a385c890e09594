"""Helpers of the sandbox security tests: a page with the agent's Python booted, the
tools made over a workspace in IndexedDB, a fake API key planted in every storage area of the
page, a "beacon" server that records every connection a sandbox manages to open, and
main-thread responsiveness probes.

Plain classes and functions: the test modules build module-scoped fixtures from them so that the
page (and the python tool's warm interpreter) boots once per module.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

FAKE_KEY = "sk-FAKE-test-key-7f3a9c21d4e8b6a0c5"
SESSION_ID = "sandbox-security-tests"
BOOT_TIMEOUT_MS = 120_000


class Beacon:
    """Records every TCP connection (and its first line): proof that a request left a sandbox.

    Answers HTTP with 200 and permissive CORS, so a request that is allowed succeeds visibly.
    """

    def __init__(self) -> None:
        self.hits: list[str] = []
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            try:
                data = conn.recv(4096)
            except OSError:
                data = b""
            with self._lock:
                self.hits.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
            body = b"beacon"
            with contextlib.suppress(OSError):
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: text/plain\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.hits)

    def close(self) -> None:
        self._sock.close()


PLANT_KEY_JS = """async (key) => {
  localStorage.setItem("py-agent.key.openai", key);
  sessionStorage.setItem("py-agent.key.anthropic", key);
  document.cookie = `provider_key=${key}; path=/`;
  window.__fakeKey = key;
  document.body.dataset.secret = key;
  await new Promise((resolve, reject) => {
    const request = indexedDB.open("py-agent-test-keys", 1);
    request.onupgradeneeded = () => request.result.createObjectStore("keys");
    request.onsuccess = () => {
      const tx = request.result.transaction("keys", "readwrite");
      tx.objectStore("keys").put(key, "openai");
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    };
    request.onerror = () => reject(request.error);
  });
  caches && await (await caches.open("py-agent-test")).put("/secret", new Response(key));
}"""

SETUP_PY = """
import json
import py_agent
from py_agent.ai.abort import AbortController
from py_agent.tools import ToolSettings
from py_agent.browser.sandbox import make_javascript_tool, make_python_tool
from py_agent.browser.workspace import open_page_workspace as open_workspace

py_agent._planted_key = KEY
_ws = await open_workspace(SESSION)
_controllers = {}
_updates = []  # the partial results of the runs (on_update)

async def _run_tool(name, code, settings_json, abort_id):
    settings = ToolSettings.from_json(json.loads(settings_json))
    tool = (make_javascript_tool if name == "javascript" else make_python_tool)(_ws, settings)
    controller = AbortController()
    _controllers[abort_id] = controller
    try:
        result = await tool.execute("call", {"code": code}, controller.signal, _updates.append)
        return json.dumps({"ok": True, "text": result.content[0].text, "details": result.details})
    except Exception as error:
        return json.dumps({"ok": False, "text": str(error)})
    finally:
        _controllers.pop(abort_id, None)

def _abort(abort_id):
    _controllers[abort_id].abort()
"""

RESPONSIVENESS_JS = """() => {
  window.__longTasks = [];
  window.__gaps = [];
  if (!window.__ltObserver) {
    window.__ltObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    });
    window.__ltObserver.observe({ type: "longtask" });
  }
  let last = performance.now();
  window.__rafOn = true;
  const tick = (t) => {
    window.__gaps.push({ at: t, gap: t - last });
    last = t;
    if (window.__rafOn) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return performance.now();
}"""


@dataclass
class ToolRun:
    ok: bool
    text: str
    details: Any = None
    seconds: float = 0.0


@dataclass
class SandboxPage:
    """The page with py_agent booted and the tool helpers defined in its interpreter."""

    page: Any
    base_url: str
    console: list[str] = field(default_factory=list)

    def py(self, code: str) -> Any:
        return self.page.evaluate(
            "async (code) => (await window.pyAgent.ready).pyodide.runPythonAsync(code)",
            code,
        )

    def start_tool(self, name: str, code: str, abort_id: str = "run", **settings: Any) -> Any:
        """Start a run without waiting (returns a JS handle of the promise, kept on window)."""
        return self.page.evaluate(
            """async ([name, code, settings, id]) => {
                const { pyodide } = await window.pyAgent.ready;
                const run = pyodide.globals.get("_run_tool");
                window.__runs = window.__runs || {};
                window.__runs[id] = run(name, code, settings, id);
                return true;
            }""",
            [name, code, json.dumps(settings), abort_id],
        )

    def finish_tool(self, abort_id: str = "run") -> ToolRun:
        started = time.monotonic()
        raw = self.page.evaluate("async (id) => await window.__runs[id]", abort_id)
        data = json.loads(raw)
        return ToolRun(bool(data["ok"]), str(data["text"]), data.get("details"), time.monotonic() - started)

    def run_tool(self, name: str, code: str, **settings: Any) -> ToolRun:
        started = time.monotonic()
        self.start_tool(name, code, **settings)
        result = self.finish_tool()
        result.seconds = time.monotonic() - started
        return result

    def abort(self, abort_id: str = "run") -> None:
        self.py(f"_abort({abort_id!r})")

    def sandbox_frames(self) -> list[dict[str, str | None]]:
        return list(
            self.page.evaluate(
                """() => [...document.querySelectorAll("iframe")].map((f) => ({
                    sandbox: f.getAttribute("sandbox"), src: f.getAttribute("src"), srcdoc: f.getAttribute("srcdoc"),
                    title: f.title }))"""
            )
        )

    def frame_texts(self) -> list[str]:
        """The HTML of every frame of the page (sandbox frames included), as Chromium has them."""
        texts = []
        for frame in self.page.frames:
            try:
                texts.append(str(frame.evaluate("() => document.documentElement.outerHTML")))
            except Exception:
                continue
        return texts

    def start_responsiveness(self) -> float:
        return float(self.page.evaluate(RESPONSIVENESS_JS))

    def stop_responsiveness(self, since: float, until: float) -> tuple[float, float, float]:
        """Between two page times: the longest main-thread task (PerformanceObserver 'longtask'),
        the longest gap between animation frames, both in ms, and the animation frames per second."""
        data = self.page.evaluate("() => { window.__rafOn = false; return [window.__longTasks, window.__gaps]; }")
        # (Can be called again for another window of the same recording.)
        tasks, gaps = data
        window = [g for g in gaps if since <= g["at"] <= until]
        longest_task = max((t["duration"] for t in tasks if since <= t["start"] <= until), default=0.0)
        longest_gap = max((g["gap"] for g in window), default=0.0)
        return float(longest_task), float(longest_gap), len(window) / max((until - since) / 1000, 0.001)

    def now(self) -> float:
        return float(self.page.evaluate("() => performance.now()"))


@dataclass
class LoopMeasure:
    run: ToolRun
    task_while_looping: float
    gap_while_looping: float
    fps_while_looping: float
    task_whole_run: float

    def problems(self) -> list[str]:
        """What breaks "the page stays responsive while the loop runs" in this measure."""
        found = []
        if self.task_while_looping > 100:
            found.append(f"a main-thread task took {self.task_while_looping:.0f} ms while the loop ran")
        if self.gap_while_looping >= 1000:
            found.append(f"no animation frame for {self.gap_while_looping:.0f} ms")
        if self.fps_while_looping < 10:
            found.append(f"only {self.fps_while_looping:.0f} animation frames per second")
        if self.task_whole_run > 250:
            found.append(f"a main-thread task took {self.task_whole_run:.0f} ms")
        return found


def measure_endless_loop(sandbox: SandboxPage, tool: str, code: str, **settings: Any) -> LoopMeasure:
    """Run an endless loop to its timeout while watching the page's main thread.

    While the loop runs (its first 500 ms and the teardown left out) no main-thread task may take
    over 100 ms (PerformanceObserver 'longtask') and animation frames must keep coming (a frozen
    page shows one gap as long as the timeout); over the whole run, starting and removing the
    sandbox included, no task may take over 250 ms.
    """
    since = sandbox.start_responsiveness()
    run = sandbox.run_tool(tool, code, **settings)
    until = sandbox.now()
    task, gap, fps = sandbox.stop_responsiveness(since + 500, until - 300)
    whole_task, _, _ = sandbox.stop_responsiveness(since, until)
    print(f"{tool} loop: task {task:.0f} ms, gap {gap:.0f} ms, {fps:.0f} frames/s; whole run task {whole_task:.0f} ms")
    return LoopMeasure(run, task, gap, fps, whole_task)


def assert_responsive_during_endless_loop(
    sandbox: SandboxPage, tool: str, code: str, warm_up: str | None = None, **settings: Any
) -> LoopMeasure:
    """measure_endless_loop, measured again once if the first measure shows a slow task: long
    tasks are wall-clock times, and a busy machine (other test runs) can stretch an ordinary 30 ms
    task past 100 ms. A main thread that the loop really blocks fails both measures. ``warm_up``
    code runs before each measure (the python tool's interpreter starts again after a timeout)."""
    if warm_up is not None:
        sandbox.run_tool(tool, warm_up, **{**settings, f"{tool}_timeout_ms": 120000})
    first = measure_endless_loop(sandbox, tool, code, **settings)
    if not first.problems():
        return first
    if warm_up is not None:
        sandbox.run_tool(tool, warm_up, **{**settings, f"{tool}_timeout_ms": 120000})
    second = measure_endless_loop(sandbox, tool, code, **settings)
    assert not second.problems(), (first.problems(), second.problems())
    return second


def open_sandbox_page(browser: Any, base_url: str, *, plant_key: bool = True) -> SandboxPage:
    context = browser.new_context()
    page = context.new_page()
    sandbox_page = SandboxPage(page, base_url)
    page.on("console", lambda msg: sandbox_page.console.append(f"{msg.type}: {msg.text}"))
    page.goto(f"{base_url}/index.html")
    page.locator("html:not([data-state='loading'])").wait_for(state="attached", timeout=BOOT_TIMEOUT_MS)
    assert page.get_attribute("html", "data-state") == "ready", sandbox_page.console
    if plant_key:
        page.evaluate(PLANT_KEY_JS, FAKE_KEY)
    setup = SETUP_PY.replace("KEY", repr(FAKE_KEY)).replace("SESSION", repr(SESSION_ID))
    sandbox_page.py(setup)
    return sandbox_page
