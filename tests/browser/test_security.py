"""Hostile content, the Content-Security-Policy and API keys, in Chromium.

- Hostile content: an XSS corpus (script, event handlers, javascript:/data: URLs, SVG/MathML
  mutation tricks, attribute break-outs) goes into every place the app shows text it did not
  write: model output (streamed, so half-written tags are rendered too), thinking, tool-call
  names and arguments, tool output, workspace file names, provider errors, session titles,
  imported files, custom provider and model names, the URL. Nothing runs: a global canary the
  payloads set stays unset, no alert/confirm/prompt opens, nothing is logged by a payload, the
  page's policy reports no violation (so nothing even tried), and no element of the page carries
  an event-handler attribute or a script URL.
- CSP: the page's policy is the required one, the site has no inline script, no third-party
  origin, and the app works under it; an injected script does not run.
- The tools' sandbox frames cannot be used by another site to run code with the app's origin.
- Keys: never in a console line, a URL, an export, an error shown or saved, a message to a
  sandbox, the DOM, a command's answer, or a request to any host but their provider; "Forget all
  keys" (through Settings) erases them from IndexedDB and sessionStorage, and from every tab.
  An MCP server's bearer token likewise: only in requests to that server.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from reliability_helpers import GuardedApp, open_guarded, wait_ready
from web_app_helpers import serve_folder, wait_until

from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer

KEY = "sk-ant-security-KEY-0001-abcdefgh"
KEY_OTHER = "sk-gpt-security-KEY-0002-ijklmnop"


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer, mock2: MockProviderServer) -> Iterator[GuardedApp]:
    gpt = {"id": "mock-gpt", "name": "Mock GPT"}
    with open_guarded(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key=KEY)
        # A tab-only key.
        app.add_provider("Mock GPT", mock2, [gpt], api="openai-completions", key=KEY_OTHER, remember=False)
        yield app


# ---------------------------------------------------------------------------------------------
# The corpus


def js(n: int) -> str:
    return f"window.__pwned='p{n}';alert('p{n}');console.log('PWNED p{n}')"


TEMPLATES = [
    "<script>{js}</script>",
    '<img src=x onerror="{js}">',
    "<img src=x onerror={js_bare}>",
    '<svg onload="{js}"><circle r=5 /></svg>',
    "<svg><script>{js}</script></svg>",
    '<svg><a xlink:href="javascript:{js}"><text y=20>svg link</text></a></svg>',
    '<svg><animate onbegin="{js}" attributeName=x dur=1s /></svg>',
    '<iframe src="javascript:{js}"></iframe>',
    '<iframe srcdoc="<script>parent.{js}</script>"></iframe>',
    '<a href="javascript:{js}">html js link</a>',
    '<a href="jav&#x09;ascript:{js}">encoded js link</a>',
    '<a href="data:text/html,<script>{js}</script>">data link</a>',
    "[markdown js link](javascript:{js_bare})",
    "[spaced link]( javascript:{js_bare} )",
    '<details open ontoggle="{js}"><summary>d</summary></details>',
    '<input autofocus onfocus="{js}">',
    '<body onload="{js}">',
    '<video><source onerror="{js}"></video>',
    '<audio src=x onerror="{js}"></audio>',
    '<object data="javascript:{js}"></object>',
    '<embed src="javascript:{js}">',
    '<math><mtext><table><mglyph><style><img src=x onerror="{js}">',
    '<form><math><mtext></form><form><mglyph><style></math><img src onerror="{js}">',
    '<svg></p><style><a id="</style><img src=1 onerror="{js}">">',
    '<noscript><p title="</noscript><img src=x onerror="{js}">">',
    '"><img src=x onerror="{js}">',
    "'><script>{js}</script>",
    '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    '<base href="javascript:{js}//">',
    '<form action="javascript:{js}"><button>go</button></form>',
    '<button formaction="javascript:{js}">fa</button>',
    '<div style="background:url(javascript:{js})" onclick="{js}">click me</div>',
    '<template><img src=x onerror="{js}"></template>',
    '<img src="x` `<script>{js}</script>"` `>',
    "<style>@import 'javascript:{js}';</style>",
    '<link rel=stylesheet href="javascript:{js}">',
    '`<img src=x onerror="{js}">`',
    '```html\n<img src=x onerror="{js}">\n```',
    '<img src=x onerror="{js}"',  # unterminated: what a stream shows half-way
]


def corpus(start: int = 0) -> list[str]:
    out = []
    for i, template in enumerate(TEMPLATES):
        n = start + i
        out.append(template.replace("{js}", js(n)).replace("{js_bare}", f"window.__pwned='p{n}'"))
    return out


CORPUS_TEXT = "\n\n".join(corpus())
SHORT = [
    "<img src=x onerror=\"window.__pwned='s1';alert('s1')\">",
    "<svg onload=\"window.__pwned='s2'\">",
    "<script>window.__pwned='s3'</script>",
]

# Checks the whole page: no event-handler attribute, no script URL, no unsandboxed frame, no
# object/embed, no script element the app did not load.
DOM_AUDIT = """() => {
  const problems = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase().replace(/[\\s\\x00-\\x1f]/g, '');
      if (name.startsWith('on')) problems.push(`${el.tagName} ${name}`);
      if (['href', 'src', 'action', 'formaction', 'xlink:href', 'data'].includes(name) && (value.startsWith('javascript:') || value.startsWith('data:text/html')))
        problems.push(`${el.tagName} ${name}=${value.slice(0, 40)}`);
    }
    if (el.tagName === 'IFRAME') {
      const sandbox = el.getAttribute('sandbox');
      if (sandbox === null || sandbox.includes('allow-same-origin') || el.hasAttribute('srcdoc')) problems.push(`IFRAME sandbox=${sandbox}`);
    }
    if (['OBJECT', 'EMBED', 'BASE'].includes(el.tagName)) problems.push(el.tagName);
    if (el.tagName === 'SCRIPT' && !(el.src && new URL(el.src).origin === location.origin)) problems.push(`SCRIPT ${el.src}`);
    if (el.tagName === 'META' && el.closest('body')) problems.push('META in body');
  }
  return problems;
}"""


def assert_nothing_ran(app: GuardedApp, where: str) -> None:
    page = app.page
    page.wait_for_timeout(300)  # let any image error or toggle event fire
    assert app.pwned() is None, f"{where}: a payload ran ({app.pwned()})"
    assert app.dialogs == [], f"{where}: {app.dialogs}"
    assert not [c for c in app.console if "PWNED" in c], where
    assert app.violations() == [], f"{where}: {app.violations()}"
    assert page.evaluate(DOM_AUDIT) == [], where
    assert app.page_errors == [], where


# ---------------------------------------------------------------------------------------------
# Hostile content


def test_hostile_model_output_streamed_and_final(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script(
        [
            {
                "content": [
                    {"type": "thinking", "text": CORPUS_TEXT},
                    {"type": "text", "text": "Hostile reply follows.\n\n" + CORPUS_TEXT},
                ],
                "chunk_size": 7,  # every half-written tag is rendered on the way
                "delay_ms": 2,
            }
        ]
    )
    app.type_and_enter("Show me hostile content")
    page.locator("#transcript .msg.assistant.streaming").wait_for(timeout=15_000)
    app.settle(60)
    reply = page.locator("#transcript .msg.assistant").last
    assert "Hostile reply follows." in reply.inner_text()
    reply.locator("details.thinking > summary").first.click()  # renders the thinking
    for link in reply.locator(".blocks a").all():
        href = link.get_attribute("href") or ""
        assert href == "" or href.startswith(("https:", "http:", "mailto:", "#")), href
        if not href:
            link.click()
    clickable = reply.locator(".blocks div", has_text="click me")
    if clickable.count():  # the div survives sanitizing, its onclick does not
        clickable.first.click(force=True)
    assert_nothing_ran(app, "model output")


def test_hostile_tool_calls_outputs_and_file_names(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    tools = app.state()["tools"]
    assert {"write", "read", "ls", "javascript", "python"} <= set(tools), tools
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    names = [
        f"{i}-{p}.md"
        for i, p in enumerate(
            [
                "<img src=x onerror=\"window.__pwned='f1'\">",
                "\"><svg onload=window.__pwned='f2'>",
                "<script>window.__pwned='f3'</script>",
            ]
        )
    ]
    calls = [
        {"id": f"call_w{i}", "name": "write", "arguments": {"path": name, "content": CORPUS_TEXT}}
        for i, name in enumerate(names)
    ]
    calls.append({"id": "call_r", "name": "read", "arguments": {"path": names[0]}})
    calls.append({"id": "call_ls", "name": "ls", "arguments": {"path": "."}})
    calls.append(
        {"id": "call_x", "name": SHORT[0], "arguments": {"payload": CORPUS_TEXT}}
    )  # an unknown, hostile tool name
    script: list[dict[str, Any]] = [{"tool_calls": calls}]
    code = "return " + json.dumps(CORPUS_TEXT) + ";"
    script.append({"tool_calls": [{"id": "call_js", "name": "javascript", "arguments": {"code": code}}]})
    script.append({"text": "Done with the files."})
    mock.script(script)
    app.type_and_enter("Write hostile files")
    page.locator("#transcript .msg.assistant", has_text="Done with the files.").wait_for(timeout=60_000)
    app.settle()
    cards = page.locator("#transcript details.tool")
    for card in cards.all():
        card.locator("summary").click()
    assert cards.count() >= len(calls)
    assert SHORT[0] in page.locator("#transcript").inner_text()  # shown as text
    # The workspace panel lists the hostile file names (as text) and previews each file (in a
    # sandboxed frame).
    files = page.locator("#side-panel .pa-file")
    wait_until(lambda: files.count() >= len(names))
    listed = files.evaluate_all("els => els.map((e) => e.dataset.path)")
    assert set(names) <= set(listed), listed
    for button in files.all():
        button.click()
        page.wait_for_timeout(100)
    assert_nothing_ran(app, "tool calls, tool output, file names")


def test_hostile_provider_errors(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    body = {"type": "error", "error": {"type": "api_error", "message": CORPUS_TEXT}}
    mock.script([{"fault": {"type": "http", "status": 400, "body": body}}])
    app.send("Trigger a hostile error")
    page.locator("#transcript .msg-error[role='alert']").wait_for()
    # A rejected key: the key dialog shows the provider's words too.
    mock.script(
        [
            {
                "fault": {
                    "type": "http",
                    "status": 401,
                    "body": {"type": "error", "error": {"type": "authentication_error", "message": SHORT[0]}},
                }
            }
        ]
    )
    app.type_and_enter("Trigger a hostile 401")
    dialog = page.locator("dialog[open]")
    dialog.locator("h2", has_text="API key for Mock Claude").wait_for(timeout=15_000)
    assert SHORT[0] in dialog.inner_text()
    assert_nothing_ran(app, "provider errors")
    dialog.locator("button", has_text="Cancel").click()
    dialog.wait_for(state="detached")
    app.settle()


def test_hostile_titles_names_providers_and_urls(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script([{"text": "ok"}])
    app.send(SHORT[1] + " as a first message, so as the title")
    page.locator("#session-title", has_text="<svg").wait_for()
    app.py("rename_session", id=app.current_session_id(), name=SHORT[0])
    page.locator("#session-title", has_text="<img").wait_for()
    page.locator(".session-row .session-title", has_text="<img").first.wait_for()
    # A custom provider and model with hostile names: picker, settings, key dialog.
    hostile_provider = "Evil <img src=x onerror=\"window.__pwned='prov'\">"
    app.add_provider(hostile_provider, mock, [{"id": SHORT[2], "name": SHORT[1]}])
    page.locator("#model-button").click()
    page.locator("#model-search").fill("evil")
    page.locator("#model-list[data-query='evil']").wait_for()  # the search is debounced
    page.keyboard.press("Enter")
    page.locator("#model-button", has_text="<svg").wait_for()
    app.type_and_enter("needs a key")
    dialog = page.locator("dialog[open]")
    dialog.locator("h2", has_text="API key for Evil <img").wait_for()
    dialog.locator("button", has_text="Cancel").click()
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Custom providers").click()
    page.locator(".provider-card", has_text="Evil <img").wait_for()
    page.locator("[role=tab]", has_text="API keys").click()
    page.locator(".key-row", has_text="Evil <img").wait_for()
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")
    # A hostile session id in the URL.
    page.evaluate("(id) => { location.hash = '#/s/' + encodeURIComponent(id); }", SHORT[0])
    page.locator("#toasts .toast", has_text="does not exist").last.wait_for()
    assert_nothing_ran(app, "titles, provider and model names, URL")
    app.py("delete_custom_provider", name=hostile_provider)


def test_hostile_imported_file(app: GuardedApp, tmp_path: Path) -> None:
    page = app.page
    payloads = corpus(100)
    header = {
        "type": "session",
        "version": 3,
        "id": "hostile-import-1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": payloads[0],
    }
    entries: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        parent = entries[-1]["id"] if entries else None
        entries.append(
            {
                "type": kind,
                "id": f"e{len(entries):07d}",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                **fields,
            }
        )

    add("session_info", name=payloads[1])
    add("model_change", provider=payloads[2], modelId=payloads[3])
    add("message", message={"role": "user", "content": payloads[4], "timestamp": 1})
    add(
        "message",
        message={
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": payloads[5]},
                {"type": "text", "text": "\n\n".join(payloads[6:20])},
                {
                    "type": "toolCall",
                    "id": payloads[20],
                    "name": payloads[21],
                    "arguments": {payloads[22]: payloads[23]},
                },
            ],
            "api": "anthropic-messages",
            "provider": payloads[24],
            "model": payloads[25],
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "error",
            "errorMessage": payloads[26],
            "timestamp": 2,
        },
    )
    add(
        "message",
        message={
            "role": "toolResult",
            "toolCallId": payloads[20],
            "toolName": payloads[21],
            "content": [{"type": "text", "text": payloads[27]}],
            "isError": True,
            "timestamp": 3,
        },
    )
    add("custom_message", customType=payloads[28], content=payloads[29], display=True)
    add("compaction", summary=payloads[30], firstKeptEntryId="e0000002", tokensBefore=10)
    add("branch_summary", fromId="e0000001", summary=payloads[31])
    add("label", targetId="e0000003", label=payloads[32])
    add(payloads[33], data=payloads[34])  # an unknown entry type
    text = "\n".join(json.dumps(x) for x in [header, *entries]) + "\n{" + payloads[35] + "\n"  # and a broken line
    file = tmp_path / (SHORT[0].replace("/", "_") + ".jsonl")
    file.write_text(text, encoding="utf-8")
    page.locator("#import-file").set_input_files(str(file))
    page.locator("#transcript .msg.user .user-text", has_text="PWNED p104").wait_for()
    for card in page.locator("#transcript details").all():
        card.locator("summary").first.click()
    app.page.locator("#transcript").evaluate("el => el.scrollIntoView()")
    assert_nothing_ran(app, "imported file")
    export = app.py("export_session")["text"]
    assert payloads[4] in export  # kept as data, exactly


# ---------------------------------------------------------------------------------------------
# CSP


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline: list[str] = []
        self.handlers: list[str] = []
        self.urls: list[str] = []
        self.csp: str | None = None
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.handlers += [f"{tag} {name}" for name, _ in attrs if name.startswith("on")]
        for name in ("src", "href"):
            if values.get(name):
                self.urls.append(str(values[name]))
        if tag == "script":
            self.scripts.append(values)
            self._in_script = not values.get("src")
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = values.get("content")

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data.strip()[:60])

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def parse_html(path: Path) -> _Html:
    parser = _Html()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def directives(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            out[words[0].lower()] = words[1:]
    return out


def test_the_page_declares_the_required_policy(app_site: Path) -> None:
    page = parse_html(app_site / "index.html")
    assert page.csp, "index.html must declare a Content-Security-Policy"
    policy = directives(page.csp)
    assert sorted(policy["script-src"]) == sorted(["'self'", "'wasm-unsafe-eval'"])
    assert policy["object-src"] == ["'none'"]
    assert policy["base-uri"] in (["'self'"], ["'none'"])
    assert policy["form-action"] == ["'none'"]
    for name in ("style-src", "img-src", "font-src", "media-src", "script-src"):
        for source in policy.get(name, []):
            assert source in ("'self'", "'none'", "'wasm-unsafe-eval'", "data:", "blob:"), f"{name} {source}"
    assert "unsafe-inline" not in page.csp and "'unsafe-eval'" not in page.csp
    assert page.inline == [] and page.handlers == []
    assert all(s.get("src") for s in page.scripts)
    for url in page.urls:
        assert not re.match(r"^([a-z][a-z0-9+.-]*:|//)", url, re.IGNORECASE), f"not a relative URL: {url}"


def test_no_inline_script_or_third_party_origin_anywhere_in_the_site(app_site: Path) -> None:
    sandbox_frames = {"sandbox/frame.html", "sandbox/frame-net.html", "files/preview.html"}
    for path in sorted(app_site.rglob("*.html")):
        rel = path.relative_to(app_site).as_posix()
        if rel.startswith("pyodide/"):
            continue
        parsed = parse_html(path)
        assert parsed.handlers == [], rel
        for url in parsed.urls:
            assert not re.match(r"^(https?:)?//", url), f"{rel}: {url}"
        if rel in sandbox_frames:
            # Tool sandboxes run code by design, but only in opaque-origin frames, offline unless
            # the user allowed the network (frame-net.html), never with plugins or forms.
            policy = directives(parsed.csp or "")
            assert policy["object-src"] == ["'none'"] and policy["form-action"] == ["'none'"], rel
            assert policy["default-src"] == ["'none'"], rel
            if rel != "sandbox/frame-net.html":
                assert policy["connect-src"] == ["'none'"], rel
                assert not [s for s in policy["script-src"] if s.startswith(("http", "*"))], rel
        else:
            assert parsed.inline == [], f"{rel} has an inline script"
    for path in [*app_site.rglob("*.js"), *app_site.rglob("*.mjs")]:
        rel = path.relative_to(app_site).as_posix()
        if rel.startswith(("pyodide/", "vendor/")):
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""(import\s*\(|from)\s*["'](https?:)?//""", text), f"{rel} imports from another origin"


def test_the_app_works_under_the_policy_and_injected_script_does_not_run(app: GuardedApp) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("demo", "Demo")
    app.send("Show me what this app can do")
    page.locator("#transcript .msg.assistant table").wait_for()
    assert app.violations() == []
    # Something that slipped past every other defence still cannot run.
    page.evaluate(
        """() => {
          const s = document.createElement('script');
          s.textContent = "window.__pwned = 'inline'";
          document.body.append(s);
          const d = document.createElement('div');
          d.innerHTML = '<img src=x onerror="window.__pwned=`handler`">';
          document.body.append(d);
        }"""
    )
    page.wait_for_timeout(300)
    assert app.pwned() is None
    assert any("script-src" in v for v in app.violations())
    page.evaluate(
        "() => { window.__violations.length = 0; document.querySelectorAll('body > div:last-child').forEach((d) => d.remove()); }"
    )


def test_another_site_cannot_use_the_sandbox_frames(browser: Any, app: GuardedApp) -> None:
    """A page of another origin frames sandbox/frame.html (not sandboxed) and sends it code that
    reads the app's IndexedDB. The frame must refuse to run anything outside an opaque origin."""
    attacker_dir = Path(tempfile.mkdtemp())
    steal = (
        "self.onmessage = (e) => { const port = e.ports[0];"
        " const r = indexedDB.open('py-agent');"
        " r.onsuccess = () => { try { const q = r.result.transaction('keys').objectStore('keys').getAll();"
        " q.onsuccess = () => port.postMessage('STOLEN ' + JSON.stringify(q.result)); } catch (err) { port.postMessage('ERR ' + err); } };"
        " r.onerror = () => port.postMessage('ERR ' + r.error); };"
    )
    html = f"""<!doctype html><meta charset=utf-8><body>
<script>
window.results = [];
for (const path of ["sandbox/frame.html", "sandbox/frame-net.html", "files/preview.html"]) {{
  const name = path.split("/").pop();
  const f = document.createElement("iframe");
  f.src = {json.dumps(app.base)} + "/" + path;
  f.onload = () => {{
    const ch = new MessageChannel();
    ch.port1.onmessage = (e) => window.results.push(name + ": " + e.data);
    f.contentWindow.postMessage({{ kind: "py-agent-sandbox-init", token: "t", source: {json.dumps(steal)}, init: {{}} }}, "*", [ch.port2]);
    f.contentWindow.postMessage({{ kind: "py-agent-preview", html: "<script>parent.parent.postMessage('PREVIEW RAN ' + document.domain, '*')<\\/script>" }}, "*");
  }};
  document.body.append(f);
}}
addEventListener("message", (e) => window.results.push("message: " + e.data));
</script>"""
    (attacker_dir / "attack.html").write_text(html, encoding="utf-8")
    attacker_base, stop = serve_folder(str(attacker_dir))
    try:
        page = app.page.context.new_page()  # same browser profile: the app's keys are stored there
        page.goto(attacker_base + "/attack.html")
        page.wait_for_timeout(3000)
        results = page.evaluate("() => window.results")
        assert not [r for r in results if "STOLEN" in r or KEY in r], results
        assert not [r for r in results if "PREVIEW RAN 127.0.0.1" in r], results
        page.close()
    finally:
        stop()


# ---------------------------------------------------------------------------------------------
# Keys


def test_keys_never_leak(app: GuardedApp, mock: MockProviderServer, mock2: MockProviderServer) -> None:
    page = app.page
    # Record every message the page posts (to frames, workers, ports, channels).
    page.evaluate(
        """() => {
          window.__posted = [];
          const text = (v) => { try { return JSON.stringify(v, (k, x) => (x instanceof ArrayBuffer || ArrayBuffer.isView(x)) ? new TextDecoder().decode(x) : x); } catch { return String(v); } };
          for (const [owner, name] of [[Window.prototype, 'postMessage'], [MessagePort.prototype, 'postMessage'], [Worker.prototype, 'postMessage'], [BroadcastChannel.prototype, 'postMessage']]) {
            const original = owner[name];
            owner[name] = function (message, ...rest) { window.__posted.push(text(message)); return original.call(this, message, ...rest); };
          }
        }"""
    )
    # A provider that echoes the key in its error: the chat, the saved message and the notice
    # show it redacted.
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    echo = {"type": "error", "error": {"type": "invalid_request_error", "message": f"bad request for key {KEY}"}}
    mock.script([{"fault": {"type": "http", "status": 400, "body": echo}}, {"text": "fine"}])
    app.send("Make the provider echo my key")
    shown = page.locator("#transcript .msg-error").last.inner_text()
    assert KEY not in shown and "[redacted key]" in shown
    stored = json.dumps(app.idb_dump()["entries"])
    assert KEY not in stored and "[redacted key]" in stored
    # Tools: run code in the sandboxes; nothing the page sends them holds a key.
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {
                    "id": "k_js",
                    "name": "javascript",
                    "arguments": {"code": "return JSON.stringify(Object.keys(self)).length"},
                }
            ]
        },
        {
            "tool_calls": [
                {"id": "k_py", "name": "python", "arguments": {"code": "import os\nprint(sorted(os.environ))"}}
            ]
        },
        {"text": "Tools done."},
    ]
    mock.script(script)
    app.send("Run some tools", timeout=120)
    page.locator("#transcript .msg.assistant", has_text="Tools done.").wait_for()
    # The second provider (a tab-only key) too.
    app.new_chat()
    app.choose_model("mock gpt", "Mock GPT")
    mock2.reset()
    mock2.script([{"text": "Hello from GPT."}])
    app.send("Hello GPT")
    assert mock2.requests[-1]["headers"]["authorization"] == f"Bearer {KEY_OTHER}"
    assert mock.requests[0]["headers"]["x-api-key"] == KEY

    secrets = (KEY, KEY_OTHER)
    for request in app.requests:
        blob = request.url + json.dumps(request.headers) + request.body
        for secret, owner in ((KEY, mock.url), (KEY_OTHER, mock2.url)):
            if secret in blob:
                assert request.url.startswith(owner + "/"), request.url
        assert not any(s in request.url for s in secrets)
    posted = "\n".join(page.evaluate("() => window.__posted"))
    assert posted and not any(s in posted for s in secrets), "a key was posted to a frame, worker or channel"
    console = "\n".join(app.console + app.page_errors)
    assert not any(s in console for s in secrets)
    assert not any(s in page.url for s in secrets)
    dom = page.evaluate(
        "() => document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((e) => e.value).join()"
    )
    assert not any(s in dom for s in secrets)
    assert page.evaluate("() => JSON.stringify(localStorage)") == "{}"
    for command, args in (
        ("init", {}),
        ("key_status", {}),
        ("custom_providers", {}),
        ("list_sessions", {}),
        ("provider_info", {}),
    ):
        answer = json.dumps(app.py(command, **args))
        assert not any(s in answer for s in secrets), command
    for meta in app.py("list_sessions")["sessions"]:
        text = app.py("export_session", id=meta["id"])["text"]
        assert not any(s in text for s in secrets)
    dump = app.idb_dump()
    for store in ("sessions", "entries", "drafts", "settings", "providers"):
        assert not any(s in json.dumps(dump[store]) for s in secrets), store
    assert KEY_OTHER not in json.dumps(dump["keys"])  # tab-only: never written to the device
    assert app.violations() == []


def test_an_mcp_token_goes_only_to_its_server(app: GuardedApp, mock: MockProviderServer) -> None:
    token = "mcp-security-TOKEN-0003-qrstuvwx"
    page = app.page
    with McpTestServer() as mcp:
        page.locator("#open-settings").click()
        page.locator("[role=tab]", has_text="MCP servers").click()
        page.locator("#mcp-name").fill("sec")
        page.locator("#mcp-url").fill(mcp.url)
        page.locator("#mcp-token").fill(token)
        page.locator("#mcp-add").click()
        page.locator(".mcp-server[data-name='sec'] .mcp-tool[data-tool='add']").wait_for()
        page.keyboard.press("Escape")
        app.new_chat()
        app.choose_model("mock claude", "Mock Claude")
        mock.reset()
        mock.script(
            [
                {"tool_calls": [{"id": "m_add", "name": "mcp__sec__add", "arguments": {"a": 1, "b": 2}}]},
                {"text": "Three."},
            ]
        )
        app.send("Add with MCP")
        page.locator("#transcript .msg.assistant", has_text="Three.").wait_for()
        mcp_headers = list(mcp.headers_seen)
        assert "tools/call" in mcp.seen
    assert all(h.get("authorization") == f"Bearer {token}" for h in mcp_headers if h.get("origin"))
    server = mcp.url.rsplit("/", 1)[0]
    for request in app.requests:
        blob = request.url + json.dumps(request.headers) + request.body
        if token in blob:
            assert request.url.startswith(server + "/"), request.url
    assert token not in json.dumps(mock.requests)
    console = "\n".join(app.console + app.page_errors)
    assert token not in console
    dom = page.evaluate(
        "() => document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((e) => e.value).join()"
    )
    assert token not in dom
    for command in ("init", "key_status", "mcp_servers", "list_sessions"):
        assert token not in json.dumps(app.py(command)), command
    for meta in app.py("list_sessions")["sessions"]:
        assert token not in app.py("export_session", id=meta["id"])["text"]
    dump = app.idb_dump()
    for store in ("sessions", "entries", "drafts", "settings", "providers"):
        assert token not in json.dumps(dump[store]), store
    app.py("mcp_remove", name="sec")
    assert token not in json.dumps(app.idb_dump()["keys"])
    assert app.violations() == []


def test_forget_all_keys_erases_them_everywhere(app: GuardedApp) -> None:
    page = app.page
    second = open_guarded(None, app.base, context=page.context)
    try:
        second.py("save_key", provider="Mock GPT", key=KEY_OTHER, remember=False)  # the other tab's own tab-only key
        page.locator("#open-settings").click()
        page.locator("[role=tab]", has_text="API keys").click()
        page.locator("button", has_text="Forget all keys").click()
        page.locator("dialog[open] button", has_text="Forget all keys").last.click()
        page.locator(".key-row", has_text="Mock Claude").locator(".key-place", has_text="No key").wait_for()
        page.keyboard.press("Escape")
        assert app.idb_dump()["keys"] == []
        assert page.evaluate("() => sessionStorage.length") == 0
        assert app.py("key_status")["keys"] == []
        wait_until(lambda: second.py("key_status")["keys"] == [])
        assert second.page.evaluate("() => sessionStorage.length") == 0
        # The next send asks for a key again.
        app.new_chat()
        app.choose_model("mock claude", "Mock Claude")
        app.type_and_enter("Do you still know my key?")
        page.locator("dialog[open] h2", has_text="API key for Mock Claude").wait_for()
        page.locator("dialog[open] button", has_text="Cancel").click()
    finally:
        second.page.close()
    wait_ready(page)
