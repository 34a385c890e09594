"""The workspace preview, attacked: HTML, SVG and Markdown files render only inside
sandboxed frames, and what they contain cannot reach the page, its storage, its keys or the
network, nor navigate or open windows. Other types render safely in the page."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_helpers import FAKE_KEY, Beacon, SandboxPage, open_sandbox_page


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    server = Beacon()
    yield server
    server.close()


@pytest.fixture(scope="module")
def sandbox(browser: Any, base_url: str) -> Iterator[SandboxPage]:
    page = open_sandbox_page(browser, base_url)
    page.page.evaluate(
        """async (session) => {
        window.__reports = [];
        window.addEventListener("message", (event) => {
            if (event.data && event.data.kind === "evil-report") window.__reports.push([event.data.name, event.data.value]);
        });
        const { pyodide } = await window.pyAgent.ready;
        await import("./sandbox/index.js");
        const source = await pyodide.pyimport("py_agent.browser.workspace").preview_source(session);
        const host = document.createElement("div");
        host.id = "preview-host";
        host.style.height = "600px";
        document.body.append(host);
        window.__preview = new pyAgentSandbox.WorkspacePreview(host, source);
    }""",
        "sandbox-security-tests",
    )
    yield page
    page.page.context.close()


REPORTER = """
const report = (name, value) => top.postMessage({ kind: "evil-report", name, value: String(value).slice(0, 300) }, "*");
const attempt = async (name, fn) => {
  try { report(name, "ok: " + await fn()); } catch (error) { report(name, "blocked: " + error); }
};
"""

EVIL_HTML = """<!doctype html><html><head><link rel="stylesheet" href="BEACON/css"></head><body>
<h1>Evil report</h1>
<img src="BEACON/img-tag">
<form id="f" action="BEACON/form" method="post" target="_top"><input name="k" value="v"></form>
<a id="a" href="javascript:top.__pwn = 4" target="_top">x</a>
<script>
REPORTER
(async () => {
  await attempt("origin", () => origin);
  await attempt("parent.document", () => parent.document.title);
  await attempt("top.document", () => top.document.body.dataset.secret);
  await attempt("top.__fakeKey", () => top.__fakeKey);
  await attempt("parent.__pwn", () => { parent.__pwn = 1; return "set"; });
  await attempt("localStorage", () => localStorage.getItem("py-agent.key.openai"));
  await attempt("sessionStorage", () => sessionStorage.getItem("py-agent.key.anthropic"));
  await attempt("cookie", () => document.cookie);
  await attempt("indexedDB", () => new Promise((resolve, reject) => {
    const r = indexedDB.open("py-agent-test-keys"); r.onsuccess = () => resolve("opened"); r.onerror = () => reject(r.error);
  }));
  await attempt("caches", () => caches.keys());
  await attempt("fetch", () => fetch("BEACON/fetch").then((r) => r.status));
  await attempt("xhr", () => { const x = new XMLHttpRequest(); x.open("GET", "BEACON/xhr", false); x.send(); return x.status; });
  await attempt("websocket", () => new Promise((resolve, reject) => {
    const ws = new WebSocket("BEACON/ws".replace("http", "ws")); ws.onopen = () => resolve("open"); ws.onerror = () => reject(new Error("ws error"));
  }));
  await attempt("sendBeacon", () => navigator.sendBeacon("BEACON/sendbeacon", "x"));
  await attempt("image", () => new Promise((resolve, reject) => {
    const img = new Image(); img.onload = () => resolve("loaded"); img.onerror = () => reject(new Error("img error")); img.src = "BEACON/image";
  }));
  await attempt("window.open", () => open("BEACON/popup"));
  await attempt("top.location javascript:", () => { top.location = "javascript:window.__pwn = 2"; return "assigned"; });
  await attempt("top.location data:", () => { top.location = "data:text/html,<script>alert(1)<\\/script>"; return "assigned"; });
  await attempt("top.location http:", () => { top.location = "BEACON/navigate"; return "assigned"; });
  await attempt("form to _top", () => { document.getElementById("f").submit(); return "submitted"; });
  await attempt("javascript: link to _top", () => { document.getElementById("a").click(); return "clicked"; });
  await attempt("forged sandbox message", () => { top.postMessage({ kind: "py-agent-sandbox-fatal", token: "x", message: "forged" }, "*"); return "posted"; });
  await attempt("restore fetch from the prototype", () =>
    (Object.getPrototypeOf(window).fetch ?? Window.prototype.fetch ?? fetch).call(window, "BEACON/proto").then((r) => r.status));
  await attempt("fetch from a nested frame", () => new Promise((resolve) => {
    const f = document.createElement("iframe");
    f.srcdoc = `<script>fetch("BEACON/nested").then(() => parent.postMessage("ok", "*"), (e) => parent.postMessage("blocked: " + e, "*"))<\\/script>`;
    addEventListener("message", (e) => resolve(e.data));
    document.body.append(f);
  }));
  report("done", "yes");
})();
</script></body></html>"""

EVIL_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"
  onload="top.postMessage({ kind: 'evil-report', name: 'svg onload', value: 'ran in ' + origin }, '*'); parent.__pwn = 5">
<image href="missing.png" onerror="top.postMessage({ kind: 'evil-report', name: 'svg onerror', value: 'ran in ' + origin }, '*'); top.__pwn = 6"/>
<script>top.postMessage({ kind: "evil-report", name: "svg script", value: document.cookie + "|" + origin }, "*"); fetch("BEACON/svg")</script>
<rect width="200" height="100" fill="teal"/><text x="10" y="50">evil svg</text>
</svg>"""

EVIL_MD = """# Notes

<script>top.__pwn = 7</script>
<img src=x onerror="top.__pwn = 8">
[click](javascript:top.__pwn=9) and [ok](https://example.com)

| a | b |
|---|---|
| 1 | <b>2</b> |
"""


def select(sandbox: SandboxPage, path: str) -> None:
    sandbox.page.evaluate("(path) => window.__preview.select(path)", path)


def reports(sandbox: SandboxPage) -> dict[str, str]:
    return {name: value for name, value in sandbox.page.evaluate("() => window.__reports")}


def wait_for_report(sandbox: SandboxPage, name: str, timeout: float = 10.0) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while name not in reports(sandbox):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {name!r} report: {reports(sandbox)}")
        sandbox.page.wait_for_timeout(100)
    return reports(sandbox)


def nested_documents(sandbox: SandboxPage) -> list[str]:
    return [text for text in sandbox.frame_texts() if "py-agent preview" not in text and "py-agent sandbox" not in text]


def wait_for_document(sandbox: SandboxPage, needle: str, timeout: float = 15.0) -> str:
    """The HTML of the (nested, sandboxed) frame document that contains ``needle``."""
    deadline = time.monotonic() + timeout
    while True:
        found = [text for text in nested_documents(sandbox) if needle in text]
        if found:
            return found[-1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no frame shows {needle!r}")
        # Not time.sleep: Playwright holds new out-of-process frames until it handles its events.
        sandbox.page.wait_for_timeout(100)


def test_previewed_html_cannot_escape(sandbox: SandboxPage, beacon: Beacon) -> None:
    beacon.reset()
    url = sandbox.page.url
    sandbox.py(
        f"await _ws.write('evil.html', {EVIL_HTML.replace('REPORTER', REPORTER).replace('BEACON', beacon.url)!r})"
    )
    select(sandbox, "evil.html")
    results = wait_for_report(sandbox, "done")
    sandbox.page.wait_for_timeout(1000)
    assert results["origin"] == "ok: null", results
    expected_blocked = [
        "parent.document",
        "top.document",
        "top.__fakeKey",
        "parent.__pwn",
        "localStorage",
        "sessionStorage",
        "cookie",
        "indexedDB",
        "caches",
        "fetch",
        "xhr",
        "websocket",
        "image",
        "top.location javascript:",
        "top.location data:",
        "top.location http:",
        "restore fetch from the prototype",
    ]
    for name in expected_blocked:
        assert results[name].startswith("blocked"), (name, results[name])
    assert results["window.open"] in ("ok: null", "blocked: null") or results["window.open"].startswith("blocked"), (
        results
    )
    assert results["fetch from a nested frame"].startswith("ok: blocked"), results
    assert FAKE_KEY not in str(results)
    assert sandbox.page.url == url
    assert sandbox.page.evaluate("() => window.__pwn") is None
    assert len(sandbox.page.context.pages) == 1
    assert beacon.snapshot() == [], beacon.snapshot()
    # The preview frame and the frame inside it are sandboxed without allow-same-origin.
    frames = [f for f in sandbox.sandbox_frames() if f["title"] and f["title"].startswith("Preview of evil.html")]
    assert frames and all(f["sandbox"] == "allow-scripts" for f in frames), frames
    nested = sandbox.page.frames
    assert any(frame.url == "about:srcdoc" for frame in nested)
    assert "<h1>Evil report</h1>" not in sandbox.page.content()


def test_previewed_svg_runs_only_inside_the_sandbox(sandbox: SandboxPage, beacon: Beacon) -> None:
    beacon.reset()
    sandbox.page.evaluate("() => { window.__reports = []; }")
    sandbox.py(f"await _ws.write('evil.svg', {EVIL_SVG.replace('BEACON', beacon.url)!r})")
    select(sandbox, "evil.svg")
    results = wait_for_report(sandbox, "svg onerror")
    sandbox.page.wait_for_timeout(500)
    # Event handlers and scripts of the SVG ran, but in an opaque origin, not in the page.
    assert results["svg onerror"] == "ran in null", results
    assert results.get("svg script", "|null").endswith("|null"), results
    assert sandbox.page.evaluate("() => window.__pwn") is None
    assert beacon.snapshot() == []
    assert "evil svg" not in sandbox.page.content()  # never in the page's own DOM
    assert "evil svg" in wait_for_document(sandbox, "evil svg")


def test_previewed_markdown_is_inert(sandbox: SandboxPage) -> None:
    sandbox.py(f"await _ws.write('notes.md', {EVIL_MD!r})")
    select(sandbox, "notes.md")
    doc = wait_for_document(sandbox, "<h1>Notes</h1>")
    frame = next(f for f in sandbox.page.frames if f.url == "about:srcdoc" and "<h1>Notes</h1>" in f.content())
    active = frame.evaluate(
        "() => document.querySelectorAll('script, [onerror], [onload], a[href^=\\'javascript:\\']').length"
    )
    assert active == 0, doc
    assert "<script>top." in frame.evaluate("() => document.body.textContent")
    assert 'href="https://example.com"' in doc
    assert "<table>" in doc and "&lt;b&gt;2&lt;/b&gt;" in doc
    assert sandbox.page.evaluate("() => window.__pwn") is None


def test_other_types_render_safely_in_the_page(sandbox: SandboxPage) -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cf000000020001e221bc330000000049454e44ae426082"
    )
    sandbox.py(
        "await _ws.write('table.csv', 'name,comment\\nann,\"<img src=x onerror=top.__pwn=10>\"\\nbob,\"a, b\"\\n')\n"
        "await _ws.write('plain.txt', '<script>top.__pwn = 11</script>')\n"
        f"await _ws.write('pixel.png', bytes.fromhex({png.hex()!r}))\n"
        "await _ws.write('blob.bin', bytes([0, 1, 2, 255]))"
    )
    page = sandbox.page
    select(sandbox, "table.csv")
    assert page.locator("#preview-host table.pa-table tbody tr").count() == 2
    assert page.locator("#preview-host table.pa-table td").nth(1).text_content() == "<img src=x onerror=top.__pwn=10>"
    assert page.locator("#preview-host table.pa-table td").nth(3).text_content() == "a, b"
    select(sandbox, "plain.txt")
    assert page.locator("#preview-host pre.pa-text").text_content() == "<script>top.__pwn = 11</script>"
    select(sandbox, "pixel.png")
    src = page.locator("#preview-host img.pa-image").get_attribute("src")
    assert src is not None and src.startswith("blob:")
    page.wait_for_timeout(300)
    assert page.evaluate("() => document.querySelector('#preview-host img.pa-image').naturalWidth") == 1
    select(sandbox, "blob.bin")
    assert "Binary file" in (page.locator("#preview-host .pa-view-content").text_content() or "")
    assert page.evaluate("() => window.__pwn") is None
    assert page.locator("#preview-host img[src='x']").count() == 0


def test_panel_lists_files_follows_changes_and_downloads(sandbox: SandboxPage) -> None:
    page = sandbox.page
    sandbox.py("await _ws.write('fresh/new.txt', 'hello', source='write')")
    page.wait_for_timeout(300)
    assert page.locator("#preview-host .pa-file[data-path='fresh/new.txt']").count() == 1
    # A file a tool just wrote is selected.
    assert page.locator("#preview-host .pa-view-title").text_content() == "fresh/new.txt"
    if page.locator("#preview-host .pa-more").is_visible():  # a narrow preview folds the file's actions
        page.locator("#preview-host .pa-more").click()
    with page.expect_download() as info:
        page.get_by_role("button", name="Download", exact=True).click()
    assert info.value.suggested_filename == "new.txt"
    with page.expect_download() as info:
        page.locator("#preview-host button", has_text="Download all").click()
    zip_path = info.value.path()
    import zipfile

    with zipfile.ZipFile(zip_path) as archive:
        assert archive.read("fresh/new.txt") == b"hello"
        assert set(archive.namelist()) == set(json.loads(sandbox.py("import json\njson.dumps(_ws.paths())")))
    sandbox.py("await _ws.delete('fresh/new.txt')")
    page.wait_for_timeout(300)
    assert page.locator("#preview-host .pa-file[data-path='fresh/new.txt']").count() == 0


def test_tool_cards_show_arguments_and_results_as_text(sandbox: SandboxPage) -> None:
    card = sandbox.page.evaluate("""async () => {
        const { renderToolCall } = await import("./sandbox/renderers.js");
        window.__opened = [];
        document.addEventListener("py-agent:open-file", (e) => window.__opened.push(e.detail.path));
        const card = renderToolCall({
            toolName: "python",
            args: { title: "<b>Plot</b>", code: "print('<img src=x onerror=top.__pwn=12>')  # note\\nx = 42" },
            result: { content: [{ type: "text", text: "<script>top.__pwn = 13</script>" }], details: { files: [{ path: "out.png", size: 3 }] } },
            isError: false,
            running: false,
        });
        document.body.append(card);
        card.querySelector(".pa-chip").click();
        const edit = renderToolCall({
            toolName: "edit", args: { path: "a.txt", edits: [] },
            result: { content: [{ type: "text", text: "ok" }], details: { diff: "-1 old\\n+1 new" } }, isError: false,
        });
        const running = renderToolCall({ toolName: "javascript", args: { code: "for(;;){}" }, result: null, running: true });
        return {
            status: card.dataset.status,
            title: card.querySelector(".pa-tool-title").textContent,
            strings: [...card.querySelectorAll("code .tok-string")].map((s) => s.textContent),
            comments: [...card.querySelectorAll("code .tok-comment")].map((s) => s.textContent),
            keywords: [...card.querySelectorAll("code .tok-keyword")].map((s) => s.textContent),
            active: card.querySelectorAll("img, script, b").length,
            output: card.querySelector(".pa-output").textContent,
            opened: window.__opened,
            diff: [...edit.querySelectorAll(".pa-diff span")].map((s) => s.className),
            running: [running.dataset.status, running.querySelector(".pa-output").textContent],
            unknown: renderToolCall({ toolName: "subagent", args: {} }) === null,
        };
    }""")
    assert card["status"] == "done"
    assert card["title"] == "<b>Plot</b>"
    assert card["strings"] == ["'<img src=x onerror=top.__pwn=12>'"]
    assert card["comments"] == ["# note"]
    assert "print" in card["keywords"]
    assert card["active"] == 0
    assert card["output"] == "<script>top.__pwn = 13</script>"
    assert card["opened"] == ["out.png"]
    assert card["diff"] == ["pa-diff-removed", "pa-diff-added"]
    assert card["running"] == ["running", "Running…"]
    assert card["unknown"] is True
    assert sandbox.page.evaluate("() => window.__pwn") is None


def test_markdown_holding_the_previews_own_marks_is_shown_as_written(sandbox: SandboxPage) -> None:
    """The Markdown preview sets code spans aside behind NUL-number-NUL marks: a file's own NULs
    must not take a code span's place, or show "undefined" (web/files/markdown.js)."""
    html = sandbox.page.evaluate(
        "async (source) => (await import('./files/markdown.js')).markdownToHtml(source)",
        "x \u00000\u0000 y \u00009\u0000 z `c`",
    )
    assert "undefined" not in html
    assert html.count("<code>c</code>") == 1
    assert "\ufffd0\ufffd" in html and "\ufffd9\ufffd" in html
