"""The javascript tool's sandbox, attacked: each security property is a test.

The code runs in a worker inside an opaque-origin <iframe sandbox="allow-scripts"> whose CSP
blocks the network. A fake API key is planted in every storage area of the page first; a beacon
server records any connection a sandbox manages to open (and a positive control shows that it
does record one when the user allowed network access).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_helpers import FAKE_KEY, Beacon, SandboxPage, assert_responsive_during_endless_loop, open_sandbox_page

FAST = {"javascript_timeout_ms": 3000}


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    server = Beacon()
    yield server
    server.close()


@pytest.fixture(scope="module")
def sandbox(browser: Any, base_url: str) -> Iterator[SandboxPage]:
    page = open_sandbox_page(browser, base_url)
    yield page
    page.page.context.close()


ATTEMPTS = """
const out = {};
async function attempt(name, fn) {
  try {
    const value = await fn();
    out[name] = "ok: " + String(value).slice(0, 300);
  } catch (error) {
    out[name] = "blocked: " + String(error).slice(0, 300);
  }
}
"""


def wait_until(page: Any, predicate: str, timeout: float = 10.0) -> None:
    """Poll a page predicate (wait_for_function needs eval, which the page's CSP forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(predicate):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {predicate}")
        page.wait_for_timeout(50)


def corpus(code: str) -> str:
    return ATTEMPTS + code + "\nreturn JSON.stringify(out);"


def outcomes(run: Any) -> dict[str, str]:
    assert run.ok, run.text
    return dict(json.loads(run.text.split("=> ", 1)[1]))


def test_cannot_reach_the_page_dom_or_its_globals(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool(
        "javascript",
        corpus("""
await attempt("document", () => document.body.dataset.secret);
await attempt("window", () => window.__fakeKey);
await attempt("parent", () => parent.document.title);
await attempt("top", () => top.location.href);
await attempt("opener", () => opener.document);
await attempt("frameElement", () => frameElement.ownerDocument);
await attempt("globalThis.pyAgent", () => globalThis.pyAgent.pyodide);
await attempt("self.parent via constructor", () => self.constructor.prototype.parent.document);
"""),
        **FAST,
    )
    results = outcomes(run)
    assert all(value.startswith("blocked") for value in results.values()), results
    assert FAKE_KEY not in run.text


def test_cannot_read_or_write_the_app_storage(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool(
        "javascript",
        corpus("""
await attempt("indexedDB.open", () => new Promise((resolve, reject) => {
  const request = indexedDB.open("py-agent-test-keys");
  request.onsuccess = () => resolve("opened " + [...request.result.objectStoreNames]);
  request.onerror = () => reject(request.error);
}));
await attempt("indexedDB.databases", () => indexedDB.databases().then((d) => JSON.stringify(d)));
await attempt("caches", () => caches.open("py-agent-test").then((c) => c.match("/secret")).then((r) => r && r.text()));
await attempt("localStorage", () => localStorage.getItem("py-agent.key.openai"));
await attempt("sessionStorage", () => sessionStorage.getItem("py-agent.key.anthropic"));
await attempt("document.cookie", () => document.cookie);
await attempt("cookieStore", () => cookieStore.getAll().then((c) => JSON.stringify(c)));
await attempt("storage.getDirectory", () => navigator.storage.getDirectory().then((d) => d.name));
"""),
        **FAST,
    )
    results = outcomes(run)
    assert all(value.startswith("blocked") for value in results.values()), results
    assert "SecurityError" in results["indexedDB.open"], results
    assert FAKE_KEY not in run.text


NETWORK_ATTEMPTS = """
const B = "BEACON";
await attempt("fetch", () => fetch(B + "/fetch").then((r) => r.status));
await attempt("xhr", () => { const x = new XMLHttpRequest(); x.open("GET", B + "/xhr", false); x.send(); return x.status; });
await attempt("websocket", () => new Promise((resolve, reject) => {
  const ws = new WebSocket(B.replace("http", "ws") + "/ws");
  ws.onopen = () => resolve("open");
  ws.onerror = () => reject(new Error("websocket error"));
}));
await attempt("eventsource", () => new Promise((resolve, reject) => {
  const es = new EventSource(B + "/sse"); es.onopen = () => resolve("open"); es.onerror = () => reject(new Error("eventsource error"));
}));
await attempt("importScripts", () => importScripts(B + "/import.js"));
await attempt("dynamic import", () => import(B + "/module.js"));
await attempt("sendBeacon", () => navigator.sendBeacon(B + "/beacon", "x"));
await attempt("restore fetch from the prototype", () =>
  (Object.getPrototypeOf(self).fetch ?? WorkerGlobalScope.prototype.fetch).call(self, B + "/proto"));
await attempt("restore fetch from a nested worker", () => new Promise((resolve) => {
  const code = `fetch("${B}/nested").then(() => postMessage("ok"), (e) => postMessage("blocked: " + e))`;
  const worker = new Worker(URL.createObjectURL(new Blob([code])));
  worker.onmessage = (e) => resolve(e.data);
  worker.onerror = (e) => resolve("blocked: " + e.message);
})).then(() => { if (out["restore fetch from a nested worker"].includes("ok: ok")) throw new Error("leak"); });
await attempt("restore XHR via eval of a new realm", () => (0, eval)("XMLHttpRequest"));
await attempt("image bitmap from a URL", () => fetch(B + "/img").then((r) => r.blob()).then(createImageBitmap));
await new Promise((resolve) => setTimeout(resolve, 300));
"""


def test_cannot_reach_the_network(sandbox: SandboxPage, beacon: Beacon) -> None:
    beacon.reset()
    run = sandbox.run_tool("javascript", corpus(NETWORK_ATTEMPTS.replace("BEACON", beacon.url)), **FAST)
    results = outcomes(run)
    sandbox.page.wait_for_timeout(500)
    assert beacon.snapshot() == [], (beacon.snapshot(), results)
    assert not any("ok: 200" in v or v == "ok: open" for v in results.values()), results


def test_network_works_only_when_the_user_allowed_it(sandbox: SandboxPage, beacon: Beacon) -> None:
    """The positive control: with network access on, the same fetch reaches the beacon."""
    beacon.reset()
    run = sandbox.run_tool(
        "javascript", f"return await (await fetch({beacon.url + '/allowed'!r})).text()", javascript_network=True
    )
    assert run.ok and run.text == "=> beacon", run.text
    assert any("/allowed" in hit for hit in beacon.snapshot())


def test_cannot_navigate_or_open_the_top_page(sandbox: SandboxPage) -> None:
    url = sandbox.page.url
    run = sandbox.run_tool(
        "javascript",
        corpus("""
await attempt("top.location", () => { top.location = "javascript:window.__pwn=1"; });
await attempt("location of a data: URL", () => { self.location.href = "data:text/html,<script>top.__pwn=2</script>"; return self.location.href; });
await attempt("window.open", () => open("https://example.com/"));
await attempt("clients", () => clients.openWindow("https://example.com/"));
"""),
        **FAST,
    )
    results = outcomes(run)
    sandbox.page.wait_for_timeout(300)
    assert sandbox.page.url == url
    assert sandbox.page.evaluate("() => window.__pwn") is None
    assert len(sandbox.page.context.pages) == 1, results


def test_messages_are_checked_for_sender_and_token(sandbox: SandboxPage) -> None:
    """Forged messages to the page (with a guessed token, with the real one, from another frame,
    from the right frame with a wrong token) change nothing; the real frame with the real token
    is heard (the positive control that shows the check is what stops the others)."""
    page = sandbox.page
    # Learn the live run's token the way an attacker with a foothold in the page could: from the
    # messages the page sends to the sandbox.
    page.evaluate("""() => {
        window.__tokens = [];
        window.__realPost = MessagePort.prototype.postMessage;
        MessagePort.prototype.postMessage = function (message, ...rest) {
            if (message && typeof message.token === "string") window.__tokens.push(message.token);
            return window.__realPost.call(this, message, ...rest);
        };
    }""")
    try:
        sandbox.start_tool(
            "javascript",
            "await workspace.list(); await new Promise((r) => setTimeout(r, 2500)); return 'finished'",
            javascript_timeout_ms=10000,
        )
        wait_until(page, "() => window.__tokens.length > 0")
        token = page.evaluate("() => window.__tokens[0]")
        forged = [
            {"kind": "py-agent-sandbox-fatal", "token": "guessed", "message": "forged fatal"},
            {"kind": "py-agent-sandbox-fatal", "token": token, "message": "forged fatal with the token"},
            {"token": token, "type": "done", "ok": True, "value": "forged result"},
            {"token": token, "type": "fs", "id": 1, "op": "write", "path": "pwned.txt", "data": "x"},
        ]
        # From another opaque frame (what a previewed page could do), also re-initialising the
        # sandbox frame with code of its own.
        page.evaluate(
            """async ([messages, token]) => {
                const { sandboxedPreviewFrame } = await import("./files/preview.js");
                const html = `<script>for (const m of ${JSON.stringify(messages)}) top.postMessage(m, "*");
                  for (let i = 0; i < top.frames.length; i++) {
                    try { top.frames[i].postMessage({ kind: "py-agent-sandbox-init", token: "${token}",
                      source: "fetch('https://example.com')", init: {} }, "*"); } catch (e) {}
                  }<\\/script>`;
                const frame = sandboxedPreviewFrame(html, "attacker");
                frame.id = "attacker";
                document.body.append(frame);
            }""",
            [forged, token],
        )
        # From the sandbox frame itself, with a wrong token.
        frame = next(f for f in page.frames if f.url.endswith("/sandbox/frame.html"))
        frame.evaluate(
            "() => parent.postMessage({ kind: 'py-agent-sandbox-fatal', token: 'wrong', message: 'wrong token' }, '*')"
        )
        result = sandbox.finish_tool()
        assert result.ok and result.text == "=> finished", result.text
        assert sandbox.py("_ws.get('pwned.txt') is None") is True

        # The positive control: the sandbox frame, with its real token, is heard.
        page.evaluate("() => { window.__tokens = []; document.getElementById('attacker').remove(); }")
        sandbox.start_tool(
            "javascript",
            "await workspace.list(); await new Promise((r) => setTimeout(r, 5000)); return 'late'",
            javascript_timeout_ms=10000,
        )
        wait_until(page, "() => window.__tokens.length > 0")
        token = page.evaluate("() => window.__tokens[0]")
        frame = next(f for f in page.frames if f.url.endswith("/sandbox/frame.html"))
        frame.evaluate(
            "(token) => parent.postMessage({ kind: 'py-agent-sandbox-fatal', token, message: 'heard' }, '*')", token
        )
        heard = sandbox.finish_tool()
        assert not heard.ok and "heard" in heard.text, heard.text
        assert heard.seconds < 3
    finally:
        page.evaluate("() => { MessagePort.prototype.postMessage = window.__realPost; }")


def test_syntax_errors_come_back_at_once(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool("javascript", "import x from 'y'; return 1", javascript_timeout_ms=60000)
    assert not run.ok
    assert "SyntaxError" in run.text and "await import(url)" in run.text
    assert run.seconds < 2.5, run.seconds


def test_console_value_errors_and_workspace_files(sandbox: SandboxPage) -> None:
    sandbox.py("await _ws.write('in.txt', 'from the workspace')")
    run = sandbox.run_tool(
        "javascript",
        "console.log('read:', await workspace.read('in.txt'));\n"
        "await workspace.write('out/bytes.bin', new Uint8Array([1, 2, 3]));\n"
        "return (await workspace.list()).map((f) => f.path).filter((p) => p !== 'pwned.txt');",
        **FAST,
    )
    assert run.ok, run.text
    assert run.text.startswith("read: from the workspace\n=> [")
    assert '"out/bytes.bin"' in run.text and "[Workspace: wrote out/bytes.bin (3B)]" in run.text
    assert sandbox.py("list(_ws.get('out/bytes.bin').data)") is not None
    failed = sandbox.run_tool("javascript", "console.log('before'); throw new TypeError('boom')", **FAST)
    assert not failed.ok and failed.text.startswith("before\n\nTypeError: boom")
    missing = sandbox.run_tool("javascript", "await workspace.read('../etc/passwd')", **FAST)
    assert not missing.ok and "'..' is not allowed" in missing.text


def test_endless_loop_ends_at_the_timeout_and_the_page_stays_responsive(sandbox: SandboxPage) -> None:
    measure = assert_responsive_during_endless_loop(sandbox, "javascript", "for (;;) {}", javascript_timeout_ms=3000)
    run = measure.run
    assert not run.ok and "Execution timed out after 3 s" in run.text
    assert 2.9 <= run.seconds < 6, run.seconds
    assert sandbox.page.evaluate("() => document.querySelectorAll('iframe[data-sandbox]').length") == 0
    after = sandbox.run_tool("javascript", "6 * 7", **FAST)
    assert after.ok and after.text == "=> 42"


def test_abort_removes_the_sandbox_at_once(sandbox: SandboxPage) -> None:
    sandbox.start_tool("javascript", "await new Promise(() => {})", javascript_timeout_ms=60000)
    sandbox.page.wait_for_selector("iframe[data-sandbox]", state="attached")
    sandbox.page.wait_for_timeout(300)
    started = time.monotonic()
    sandbox.abort()
    run = sandbox.finish_tool()
    assert not run.ok and run.text == "Execution aborted"
    assert time.monotonic() - started < 1.5
    assert sandbox.page.evaluate("() => document.querySelectorAll('iframe[data-sandbox]').length") == 0


def test_no_key_anywhere_in_the_sandbox_frames(sandbox: SandboxPage) -> None:
    sandbox.start_tool("javascript", "await new Promise((r) => setTimeout(r, 800)); 1", **FAST)
    sandbox.page.wait_for_selector("iframe[data-sandbox]", state="attached")
    frames = sandbox.sandbox_frames()
    texts = sandbox.frame_texts()
    sandbox.finish_tool()
    for frame in frames:
        if frame["title"] and "sandbox" in frame["title"]:
            assert frame["sandbox"] == "allow-scripts", frame
    sandbox_docs = [t for t in texts if "py-agent sandbox" in t]
    assert sandbox_docs, "the sandbox frame's document was not found"
    for text in sandbox_docs:
        assert FAKE_KEY not in text
