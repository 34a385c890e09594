"""The page's key flows, written once (engine_chat.py over engine_drivers.py) and run in Chromium, Firefox ESR and
WebKitGTK: boot from a sub-path, the offline demo, the key dialog and a streamed reply from the
mock provider, a reload that keeps the session, stop mid-reply, the `javascript` and `python`
tools in their sandboxes (with an escape attempt each), an attachment read in the page's document
worker and sent to the model, a send past the context threshold that compacts first, a DOCX zip
bomb refused with its limit on the chip (the page lives on), export and import, and the service
worker's offline reload; where there is no File System Access API (Firefox, WebKit) "Open a folder…"
says so and the upload route works.

One page per engine, booted once; the tests run in order through it, as a user would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_chat import SUB_PATH, Chat, Site
from engine_drivers import Driver

from py_agent.ai.types import AssistantMessage, TextContent, Usage, UserMessage
from py_agent.session import Session, export_jsonl
from py_agent.testing.hostile_files import zip_bomb
from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer


@pytest.fixture(scope="module")
def chat(driver: Driver, site: Site, mock: MockProviderServer) -> Iterator[Chat]:
    chat = Chat(driver, site.url)
    chat.open()
    yield chat


def test_boots_from_a_sub_path_and_the_offline_demo_answers(chat: Chat, site: Site) -> None:
    d = chat.driver
    assert d.attr("html", "data-state") == "ready"
    # Everything the page loaded came from its own folder.
    loaded = d.js("return performance.getEntriesByType('resource').map((e) => e.name);")
    outside = [url for url in loaded if not url.startswith(site.url)]
    assert not outside, outside
    assert "Demo" in d.text("#model-button")
    chat.send("Show me what this app can do")
    d.wait("#transcript .msg.assistant:not(.streaming) h2", "Hello from the offline demo")
    chat.wait_idle()
    assert d.count("#transcript .msg.assistant table") == 1
    assert d.count("#transcript .msg.assistant .code-block code.hljs .hljs-keyword") > 0
    assert d.js("return location.pathname;") == SUB_PATH
    assert str(d.js("return location.hash;")).startswith("#/s/")


KEY = "sk-ant-test-ENGINES-0001-abcdefgh"
STREAMED = "# Streaming works\n\n" + " ".join(f"token{i}" for i in range(120)) + "\n\nThe end of the reply."


def test_key_dialog_then_a_streamed_reply_from_the_mock_provider(chat: Chat, mock: MockProviderServer) -> None:
    d = chat.driver
    chat.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}])
    chat.new_chat()
    chat.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script([{"text": "ok"}, {"text": STREAMED, "delay_ms": 30, "chunk_size": 12}])  # the key check, the reply
    chat.send("Explain something, please")
    d.wait("dialog[open] h2", "API key for Mock Claude")
    assert mock.requests == []
    assert d.attr("#api-key-input", "type") == "password"
    d.fill("#api-key-input", KEY)
    d.click("#key-save")
    d.wait_gone("dialog[open]")
    # Incremental: the start of the reply is on the page while the server is still sending it.
    d.wait("#transcript .msg.assistant.streaming h1", "Streaming works", timeout=20)
    partial = d.js("return document.querySelector('#transcript .msg.assistant.streaming')?.innerText ?? null;")
    assert partial is not None and "The end of the reply" not in partial
    chat.wait_idle()
    assert chat.assistant_texts()[-1].endswith("The end of the reply.")
    assert d.text("#transcript .msg.assistant h1") == "Streaming works"
    assert len(mock.requests) == 2
    assert all(r["headers"]["x-api-key"] == KEY for r in mock.requests)


def test_a_reload_keeps_the_session(chat: Chat) -> None:
    d = chat.driver
    session_id = chat.session_id()
    chat.reload()
    assert d.js("return location.hash;") == f"#/s/{session_id}"
    d.wait("#transcript .msg.assistant h1", "Streaming works")
    assert chat.user_texts() == ["Explain something, please"]
    assert "Mock Claude" in d.text("#model-button")
    # It came from IndexedDB: one record per entry of the session.
    stored = d.js(
        """const db = await new Promise((ok, no) => {
             const r = indexedDB.open("py-agent"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
           const rows = await new Promise((ok) => {
             const q = db.transaction("entries").objectStore("entries").getAll(); q.onsuccess = () => ok(q.result); });
           db.close();
           return rows.filter((r) => r.sessionId === args[0]).map((r) => JSON.parse(r.line).type);""",
        session_id,
    )
    assert stored.count("message") == 2, stored


def test_stop_mid_reply_keeps_the_partial_reply(chat: Chat, mock: MockProviderServer) -> None:
    d = chat.driver
    chat.new_chat()
    mock.reset()
    # Long enough to still be streaming on a slow, busy machine (about a minute); stopped early.
    mock.script([{"text": " ".join(f"word{i}" for i in range(800)), "delay_ms": 80, "chunk_size": 10}])
    chat.send("Tell me a long story")
    d.wait("#transcript .msg.assistant.streaming", "word3", timeout=45)
    d.click("#stop-button")
    d.wait("#transcript .msg-error.aborted")
    chat.wait_idle()
    text = chat.assistant_texts()[-1]
    assert text.startswith("word0 word1") and "word799" not in text
    assert mock.wait_closed(0, timeout=5)
    last = json.loads(chat.py("export_session")["text"].splitlines()[-1])
    assert last["message"]["stopReason"] == "aborted"


# The sandboxed code tries to reach the page's stored sessions, then does its real work.
JAVASCRIPT_ESCAPE = """let storage;
try {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("py-agent"); r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
  storage = "opened [" + [...db.objectStoreNames].join(",") + "]";
} catch (error) {
  storage = "refused";
}
console.log("storage", storage);
return [1, 2, 3].reduce((a, b) => a + b, 0) * 7;"""

PYTHON_ESCAPE = """try:
    import js
    reached = "reached " + str(js.parent.document.title)
except Exception as error:
    reached = "refused " + type(error).__name__
print("parent", reached)
print("sum", sum(range(10)))"""


def tool_result(mock: MockProviderServer, request: int) -> str:
    """The text of the tool result that the page sent back to the model in request number `request`."""
    for message in mock.requests[request]["body"]["messages"]:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    raise AssertionError(f"no tool result in request {request}: {mock.requests[request]['body']}")


def run_tool(chat: Chat, mock: MockProviderServer, name: str, code: str) -> str:
    mock.reset()
    mock.script(
        [
            {"tool_calls": [{"id": f"call_{name}", "name": name, "arguments": {"title": "Try it", "code": code}}]},
            {"text": f"The {name} tool ran."},
        ]
    )
    chat.new_chat()
    chat.send(f"Run some {name}")
    chat.driver.wait("#transcript .msg.assistant", f"The {name} tool ran.", timeout=150)
    chat.wait_idle()
    assert chat.driver.attr("#transcript details.tool", "data-status") == "done"
    return tool_result(mock, 1)


def test_javascript_tool_runs_in_its_sandbox_and_cannot_reach_the_pages_storage(
    chat: Chat, mock: MockProviderServer
) -> None:
    result = run_tool(chat, mock, "javascript", JAVASCRIPT_ESCAPE)
    assert "=> 42" in result, result
    assert "storage refused" in result, result


def test_python_tool_runs_in_its_sandbox_and_cannot_reach_the_pages_dom(chat: Chat, mock: MockProviderServer) -> None:
    result = run_tool(chat, mock, "python", PYTHON_ESCAPE)
    assert "sum 45" in result, result
    assert "parent refused" in result, result


# Downloads are each browser's own UI: the flow takes the file the page hands to its download link.
CAPTURE_EXPORTS = """window.__flowExports = [];
const create = URL.createObjectURL;
URL.createObjectURL = (blob) => { window.__flowExports.push(blob); return create.call(URL, blob); };
const click = HTMLAnchorElement.prototype.click;
HTMLAnchorElement.prototype.click = function () { if (!this.download) click.call(this); };"""


def test_an_attached_file_reaches_the_model(chat: Chat, mock: MockProviderServer, tmp_path: Path) -> None:
    d = chat.driver
    table = tmp_path / "prices.csv"
    table.write_text("item,price\napple,3\npear,4\n", encoding="utf-8")
    chat.new_chat()
    mock.reset()
    mock.script([{"text": "Two items: apple and pear."}])
    d.set_files("#attach-input", [str(table)])  # the Attach button's file picker
    d.wait('#attachments .att-chip[data-status="ready"]', "prices.csv")
    chat.send("What is in the file?")
    d.wait("#transcript .msg.assistant", "Two items: apple and pear.", timeout=90)
    chat.wait_idle()
    assert d.count("#attachments .att-chip") == 0
    sent = json.dumps(mock.requests[-1]["body"])
    assert '<file name=\\"uploads/prices.csv\\">' in sent
    assert "apple,3" in sent and "pear,4" in sent


def long_session_jsonl() -> str:
    """Three turns of 12,000 tokens each (pi's estimate) with the mock's small-window model, whose
    last reply reports 30,000 input tokens: past the threshold (40,000 - 16,384 reserved)."""
    session = Session.create()
    for n, word in enumerate(("FIRST", "SECOND", "THIRD")):
        session.append_message(UserMessage(content=f"{word} " + "x" * 48_000))
        usage = Usage(input=(12_100, 20_000, 30_000)[n], output=5)
        text = [TextContent(text=f"reply {n + 1}")]
        session.append_message(
            AssistantMessage(content=text, api="anthropic-messages", provider="Mock", model="small", usage=usage)
        )
    return export_jsonl(session)


def test_a_send_past_the_context_threshold_compacts_first(chat: Chat, mock: MockProviderServer) -> None:
    d = chat.driver
    chat.add_provider("Mock", mock, [{"id": "small", "name": "Small window", "contextWindow": 40_000}])
    chat.py("save_key", provider="Mock", key=KEY, remember=True)
    imported = chat.py("import_session", text=long_session_jsonl())
    d.js("location.hash = '#/s/' + encodeURIComponent(args[0]);", imported["sessionId"])
    d.wait_until(lambda: len(chat.user_texts()) == 3, "the imported session")
    mock.reset()
    mock.script([{"text": "## Goal\nSUMMARY-MARK"}, {"text": "fourth answer"}])
    chat.send("FOURTH question")
    d.wait("#transcript .msg.assistant", "fourth answer", timeout=90)
    chat.wait_idle()
    summary_request, reply_request = (r["body"] for r in mock.requests)
    assert summary_request["messages"][0]["content"][0]["text"].startswith("<conversation>\n[User]: FIRST ")
    sent = json.dumps(reply_request["messages"])
    assert "SUMMARY-MARK" in sent and "FIRST " not in sent and "SECOND " in sent
    assert d.count("#transcript .msg.compaction") == 1
    assert chat.user_texts()[0].startswith("FIRST")  # still shown (and kept in the session)


def test_a_docx_zip_bomb_gets_its_limit_on_the_chip_and_the_page_lives(chat: Chat, tmp_path: Path) -> None:
    d = chat.driver
    bomb = zip_bomb(tmp_path / "bomb.docx", "docx")  # 0.6 MB, a zip64 part inflating to 400 MB
    chat.new_chat()
    d.fill("#input", "Keep this text")
    d.set_files("#attach-input", [str(bomb)])
    d.wait('#attachments .att-chip[data-status="error"]', "bomb.docx", timeout=90)
    assert d.text("#attachments .att-error") == (
        "bomb.docx unpacks to 400 MB; the limit is 20 MB (Settings → Attachments)."
    )
    assert d.value("#input") == "Keep this text"
    python = "return await (await window.pyAgent.ready).pyodide.runPythonAsync('sum(range(10))');"
    assert d.js(python) == 45  # the page and its Python live on
    d.click('#attachments .att-chip[data-name="bomb.docx"] .att-remove')
    assert d.count("#attachments .att-chip") == 0
    # A good DOCX is unpacked by the page itself (DecompressionStream) within the same limits.
    from docx import Document

    document = Document()
    document.add_paragraph("The migration plan has three phases.")
    document.save(str(tmp_path / "plan.docx"))
    d.set_files("#attach-input", [str(tmp_path / "plan.docx")])
    d.wait('#attachments .att-chip[data-status="ready"]', "plan.docx", timeout=90)
    d.click('#attachments .att-chip[data-name="plan.docx"] .att-remove')
    d.js("document.querySelector('#input').value = '';")


def test_export_then_import(chat: Chat, tmp_path: Path) -> None:
    d = chat.driver
    chat.new_chat()
    chat.choose_model("demo", "Demo")
    chat.send("Write some code")
    d.wait("#transcript .msg.assistant:not(.streaming) .code-block")
    chat.wait_idle()
    session_id = chat.session_id()
    d.js(CAPTURE_EXPORTS)
    d.click("#session-menu-btn")
    chat.click_text("#session-menu [role=menuitem]", "Export")
    text = d.wait_until(
        lambda: d.js("return window.__flowExports.length ? await window.__flowExports[0].text() : null;"), "the export"
    )
    lines = text.split("\n")[:-1]
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3 and header["id"] == session_id
    assert [json.loads(line)["type"] for line in lines[1:]][-2:] == ["message", "message"]

    path = tmp_path / "export.jsonl"
    path.write_text(text, encoding="utf-8")
    d.set_files("#import-file", [str(path)])
    d.wait_until(lambda: chat.session_id() != session_id, "the imported session")
    d.wait("#transcript .msg.assistant .code-block")
    copy = chat.py("export_session")["text"].split("\n")
    assert json.loads(copy[0])["id"] != session_id
    assert copy[1:] == text.split("\n")[1:]


def about_limits(chat: Chat) -> list[str]:
    d = chat.driver
    d.click("#open-settings")
    d.click("#settings-tab-about")
    d.wait("#settings-panel-about dl.versions")
    limits = d.texts("#browser-limits")
    d.press("#settings-tab-about", "Escape")
    d.wait_gone("dialog[open]")
    return limits


def test_an_mcp_servers_tools_added_in_settings_are_called(chat: Chat, mock: MockProviderServer) -> None:
    d = chat.driver
    with McpTestServer() as server:
        chat.add_provider("Mock MCP", mock, [{"id": "mock-mcp", "name": "Mock MCP", "input": ["text", "image"]}])
        chat.py("save_key", provider="Mock MCP", key="sk-ant-engines-mcp-0002")
        d.click("#open-settings")
        d.click("#settings-tab-mcp")
        d.wait("#mcp-add")  # the tab is drawn once Python answered
        d.fill("#mcp-name", "tools")
        d.fill("#mcp-url", server.url)
        d.click("#mcp-add")
        d.wait(".mcp-server[data-name='tools'] .mcp-tool[data-tool='add']", "Add two integers and return the sum")
        d.press("#mcp-add", "Escape")
        d.wait_gone("dialog[open]")
        chat.new_chat()
        chat.choose_model("mock mcp", "Mock MCP")
        mock.reset()
        add = {"id": "call_mcp", "name": "mcp__tools__add", "arguments": {"a": 2, "b": 3}}
        pixel = {"id": "call_px", "name": "mcp__tools__pixel", "arguments": {}}
        mock.script([{"tool_calls": [add]}, {"tool_calls": [pixel]}, {"text": "The sum is 5."}])
        chat.send("Add 2 and 3 with the MCP server, then show the pixel")
        d.wait("#transcript .msg.assistant:not(.streaming)", "The sum is 5.")
        chat.wait_idle()
        assert "tools/call" in server.seen
        requests = mock.requests
        assert "mcp__tools__add" in [tool["name"] for tool in requests[0]["body"]["tools"]]
        result = requests[1]["body"]["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and '"5"' in json.dumps(result["content"])
        image = requests[2]["body"]["messages"][-1]["content"][0]["content"]
        assert [block["source"]["media_type"] for block in image if block["type"] == "image"] == ["image/png"]
        # A tool switched off leaves the next request's tools.
        d.click("#open-settings")
        d.click("#settings-tab-mcp")
        d.wait(".mcp-server[data-name='tools'] .mcp-tool-switch[data-tool='add']")
        d.click(".mcp-server[data-name='tools'] .mcp-tool-switch[data-tool='add']")
        d.wait_until(lambda: "mcp__tools__add" not in d.js("return window.pyAgentApp.state.tools;"), "add switched off")
        d.press("#mcp-add", "Escape")
        d.wait_gone("dialog[open]")
        mock.reset()
        mock.script([{"text": "No adding."}])
        chat.send("Add again")
        d.wait("#transcript .msg.assistant:not(.streaming)", "No adding.")
        chat.wait_idle()
        names = [tool["name"] for tool in mock.requests[0]["body"]["tools"]]
        assert "mcp__tools__add" not in names and "mcp__tools__weather" in names
    chat.py("mcp_remove", name="tools")


def test_an_mcp_server_without_cors_is_named_in_settings(chat: Chat, request: pytest.FixtureRequest) -> None:
    d = chat.driver
    if d.engine == "webkit":
        # Found here: in WebKitGTK the page's own fetch to such a server rejects at once ("Load failed"),
        # but the MCP connection from Python does not end before the 30 s limit of the tab's test.
        reason = "WebKitGTK: the refused MCP request does not end (not investigated yet)"
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    with McpTestServer(cors=False) as refusing:
        d.click("#open-settings")
        d.click("#settings-tab-mcp")
        d.wait("#mcp-add")
        try:
            d.fill("#mcp-name", "refusing")
            d.fill("#mcp-url", refusing.url)
            d.click("#mcp-add")
            problem = ".mcp-server[data-name='refusing'] .mcp-problem[data-kind='cors']"
            d.wait(problem, "Access-Control-Allow-Origin", timeout=45)
        finally:
            d.press("#mcp-add", "Escape")
            d.wait_gone("dialog[open]")
            chat.py("mcp_remove", name="refusing")


FOLDER_LIMIT = "opening a folder on your disk (the File System Access API): upload a folder and download a zip instead"


def test_where_folders_cannot_be_opened_the_control_says_so_and_upload_works(chat: Chat, tmp_path: Path) -> None:
    d = chat.driver
    chat.new_chat()
    d.wait("#welcome-folder button", "Open a folder…")
    if d.engine == "chromium":  # Chromium has the API: the picker opens (tests/browser/test_folder.py)
        assert d.js("return typeof window.showDirectoryPicker;") == "function"
        return
    assert d.js("return typeof window.showDirectoryPicker;") == "undefined"
    d.click("#welcome-folder button")
    d.wait("#welcome-folder .pa-folder-explain", "This browser cannot open a folder on your disk")
    # Its "Upload a folder" opens the Files panel and the folder upload's own picker (seen, not shown).
    d.js(
        """const click = HTMLInputElement.prototype.click;
        window.__folderPicks = 0;
        HTMLInputElement.prototype.click = function () {
          if (this.type === "file" && this.hasAttribute("webkitdirectory")) window.__folderPicks += 1;
          else click.call(this);
        };"""
    )
    chat.click_text("#welcome-folder button", "Upload a folder")
    d.wait_until(lambda: d.js("return window.__folderPicks;") == 1, "the folder picker")
    d.wait("#side-panel .pa-folder-explain", "This browser cannot open a folder on your disk")
    # The upload route: files chosen in the panel's picker land in the workspace.
    notes = tmp_path / "notes.txt"
    notes.write_text("from my folder\n", encoding="utf-8")
    d.set_files("#side-panel .pa-preview > input[type=file]:not([webkitdirectory])", [str(notes)])
    d.wait("#side-panel .pa-file-name", "notes.txt")


def test_offline_reload_from_the_service_worker(chat: Chat, site: Site) -> None:
    d = chat.driver
    status = d.wait_until(lambda: d.attr("html", "data-offline"), "the offline status", timeout=180)
    assert status == "ready", d.js("return window.pyAgent.offline;")  # all three engines have service workers
    # Settings, About says what a browser lacks: nothing here; offline use in a browser without
    # service workers (e.g. an http:// origin other than localhost), made up here by hiding them.
    # Firefox and WebKit also lack the File System Access API (folders).
    folder = [] if d.engine == "chromium" else [FOLDER_LIMIT]
    limits = "; ".join(folder)
    assert about_limits(chat) == (
        [f"Not available in this browser: {limits}. Everything else works."] if folder else []
    )
    d.js("delete Navigator.prototype.serviceWorker;")
    offline = "offline use (this browser gives the page no service worker)"
    assert about_limits(chat) == [
        f"Not available in this browser: {'; '.join([offline, *folder])}. Everything else works."
    ]
    site.stop()  # the site's server is gone: the reload comes from the service worker's cache
    chat.reload()
    assert d.js("return navigator.serviceWorker.controller?.scriptURL ?? null;") == site.url + "sw.js"
    chat.new_chat()
    chat.choose_model("demo", "Demo")
    chat.send("Show me what this app can do")
    d.wait("#transcript .msg.assistant:not(.streaming) h2", "Hello from the offline demo")
    chat.wait_idle()
