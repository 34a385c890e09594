"""The chat app in headless Chromium, against static/ on a plain static server and the mock
provider servers on other ports (real cross-origin streaming).

One page is booted for the module and the tests run in order through it, as a user would: the
demo without a key, a first send that asks for the key, streaming Markdown, reload, stop, steering,
retry, branches, rename/search/delete, export/import, hostile content, keys, keyboard, phone size.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

KEY_1 = "sk-ant-test-KEY-0001-abcdefgh"
KEY_2 = "sk-other-KEY-0002-ijklmnop"

MARKDOWN_REPLY = """# Streaming works

Here is a list:

- first item
- second item with `inline code`

```python
def add(a: int, b: int) -> int:
    return a + b
```

| column | value |
|--------|-------|
| a      | 1     |

The end of the reply."""

XSS_REPLY = """Hostile content follows.

<script>window.__pwned = 'script'</script>
<img src=x onerror="window.__pwned='img'">
<svg onload="window.__pwned='svg'"><circle r="5"/></svg>
<svg><image href="missing" onerror="window.__pwned='svg-image'"/></svg>
<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>
<a href="javascript:window.__pwned='href'">html js link</a>
<details open ontoggle="window.__pwned='toggle'"><summary>x</summary></details>
<form action="javascript:window.__pwned='form'"><button>go</button></form>
<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned='math'">
<object data="data:text/html,<script>parent.__pwned='object'</script>"></object>
<style>body { display: none }</style>
<div style="position:fixed;inset:0" onclick="window.__pwned='div'">overlay</div>

[markdown js link](javascript:window.__pwned='md-link')
[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
![tracking pixel](https://tracker.invalid/pixel.png?leak=conversation)

`<script>window.__pwned='code'</script>`

```html
<img src=x onerror="window.__pwned='fence'">
```
"""


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer, mock2: MockProviderServer) -> Iterator[App]:
    mock.stall_seconds = 10  # a "stall" fault without its own seconds
    claude = {"id": "mock-claude", "name": "Mock Claude", "reasoning": True, "cost": {"input": 3, "output": 15}}
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [claude])
        app.add_provider("Other", mock2, ["other-model"], api="openai-completions")
        yield app


def origin(url: str) -> str:
    match = re.match(r"^[a-z]+://[^/]+", url)
    return match.group(0) if match else url


# ---------------------------------------------------------------------------------------------


def test_first_run_and_offline_demo_without_key(app: App) -> None:
    page = app.page
    assert page.locator("#welcome").is_visible()
    assert page.locator("#welcome-title").inner_text() == "Chat with any model, from this page"
    assert "Demo" in page.locator("#model-button").inner_text()
    assert page.locator("#input").evaluate("el => el === document.activeElement")
    requests_before = len(app.requests)
    app.type_and_enter("Show me what this app can do")
    page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for()
    app.wait_idle()
    assert not page.locator("dialog[open]").count()
    reply = page.locator("#transcript .msg.assistant").last
    assert reply.locator("h2", has_text="Hello from the offline demo").count() == 1
    assert reply.locator(".code-block code.hljs .hljs-keyword").count() > 0
    assert reply.locator("table").count() == 1
    assert page.locator("#welcome").is_hidden()
    # The demo is offline: nothing left the page's origin.
    assert all(origin(r.url) == app.base for r in app.requests[requests_before:])
    assert re.match(r"^#/s/.+", page.evaluate("() => location.hash"))


def test_first_send_asks_for_the_key_then_streams_markdown(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script(
        [
            {"text": "ok"},  # the key check
            {"text": MARKDOWN_REPLY, "delay_ms": 40, "chunk_size": 6, "usage": {"input": 1200, "output": 345}},
        ]
    )
    app.type_and_enter("Explain something, please")
    dialog = page.locator("dialog[open]")
    dialog.locator("h2", has_text="API key for Mock Claude").wait_for()
    assert mock.requests == []
    assert page.locator("#input").input_value() == "Explain something, please"  # kept until sent
    assert dialog.locator("#api-key-input").get_attribute("type") == "password"
    dialog.locator("#api-key-input").fill(KEY_1)
    assert dialog.locator("#key-place-device").is_checked()
    assert dialog.locator("#key-test").is_checked()
    dialog.locator("#key-save").click()
    dialog.wait_for(state="detached")

    # Incremental: part of the reply is on the page while the server is still sending it.
    streaming = page.locator("#transcript .msg.assistant.streaming")
    streaming.locator("h1", has_text="Streaming works").wait_for(timeout=15_000)
    assert len(mock.requests) == 2 and not mock.requests[1]["completed"]
    assert "The end of the reply" not in streaming.inner_text()
    app.wait_idle()

    reply = page.locator("#transcript .msg.assistant").last
    assert reply.locator("h1").inner_text() == "Streaming works"
    assert reply.locator("li").count() == 2
    assert reply.locator(".code-block code.hljs").count() == 1
    assert reply.locator("table td").first.inner_text() == "a"
    assert "↑1.2k ↓345 · $0.0088" in reply.locator(".msg-foot .usage").inner_text()
    assert page.locator("#input").input_value() == ""
    for request in mock.requests:
        assert request["path"].endswith("/v1/messages")
        assert request["headers"]["x-api-key"] == KEY_1
    status = app.py("key_status")
    assert {"provider": "Mock Claude", "place": "device"} in [
        {k: v for k, v in k.items() if k != "savedAt"} for k in status["keys"]
    ]


def test_reload_restores_session_model_and_thinking_level(app: App) -> None:
    page = app.page
    page.locator("#thinking-select").select_option("high")
    page.locator("#thinking-select").evaluate("el => el.blur()")
    wait_until(lambda: app.py("list_sessions")["sessions"][0]["thinkingLevel"] == "high")
    session_id = app.current_session_id()
    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    assert page.evaluate("() => location.hash") == f"#/s/{session_id}"
    page.locator("#transcript .msg.assistant h1", has_text="Streaming works").wait_for()
    assert app.user_texts() == ["Explain something, please"]
    assert "Mock Claude" in page.locator("#model-button").inner_text()
    assert page.locator("#thinking-select").input_value() == "high"
    assert page.locator("#session-title").inner_text() == "Explain something, please"
    row = page.locator(f".session-row[data-id='{session_id}']")
    assert row.locator(".session-title").inner_text() == "Explain something, please"
    meta = row.locator(".session-meta").inner_text()
    assert "2 messages" in meta and "$0.0088" in meta and "mock-claude" in meta
    assert "↑1.2k ↓345 · $0.0088" in page.locator("#session-usage").inner_text()


def test_reload_during_a_reply_recovers_it_as_interrupted(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    mock.reset()
    mock.script([{"text": " ".join(f"part{i}" for i in range(300)), "delay_ms": 60, "chunk_size": 8}])
    app.type_and_enter("A reply that the reload interrupts")
    page.locator("#transcript .msg.assistant.streaming", has_text="part12").wait_for(timeout=15_000)
    page.wait_for_timeout(700)  # the draft is saved twice a second
    session_id = app.current_session_id()
    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    assert app.current_session_id() == session_id
    note = page.locator("#transcript .msg.assistant .msg-error", has_text="Interrupted")
    note.wait_for()
    assert app.assistant_texts()[-1].startswith("part0 part1")
    assert app.user_texts() == ["A reply that the reload interrupts"]
    # Saved once: opening the session again does not add it a second time.
    app.py("new_session")
    app.py("open_session", id=session_id)
    assert page.locator("#transcript .msg.assistant").count() == 1


def test_a_second_tab_gets_the_session_read_only(app: App) -> None:
    page = app.page
    session_id = app.current_session_id()
    other = page.context.new_page()
    try:
        other.goto(f"{app.base}/?demo-tps=0#/s/{session_id}")
        other.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        banner = other.locator("#banner")
        banner.wait_for()
        assert "another tab" in banner.inner_text()
        assert other.locator("#input").is_disabled()
        banner.locator("button", has_text="Edit here instead").click()
        other.locator("#banner").wait_for(state="hidden")
        assert other.locator("#input").is_enabled()
        page.locator("#banner", has_text="another tab").wait_for()
        assert page.locator("#input").is_disabled()
    finally:
        other.close()
    # The tab that still shows the session takes it back.
    page.locator("#banner button", has_text="Edit here instead").click()
    page.locator("#banner").wait_for(state="hidden")


def test_stop_mid_stream_keeps_the_partial_reply(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    mock.reset()
    long_text = " ".join(f"word{i}" for i in range(400))
    mock.script([{"text": long_text, "delay_ms": 50, "chunk_size": 10}])
    app.type_and_enter("Tell me a long story")
    page.locator("#transcript .msg.assistant.streaming", has_text="word3").wait_for(timeout=15_000)
    page.locator("#stop-button").click()
    page.locator("#transcript .msg-error.aborted").wait_for()
    app.wait_idle()
    text = app.assistant_texts()[-1]
    assert text.startswith("word0 word1") and "word399" not in text
    assert page.locator("#send-button").is_visible() and page.locator("#stop-button").is_hidden()
    assert mock.wait_closed(0, timeout=5)
    # The partial reply was saved.
    session = app.py("export_session")["text"].splitlines()
    last = json.loads(session[-1])
    assert last["message"]["stopReason"] == "aborted" and last["message"]["content"][0]["text"].startswith("word0")


def test_message_typed_while_streaming_is_delivered_as_steering(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    mock.reset()
    first = " ".join(f"alpha{i}" for i in range(120))
    mock.script(
        [
            {"text": first, "delay_ms": 40, "chunk_size": 12},
            {"text": "Steering received.", "delay_ms": 30},
            {"text": "Follow-up received."},
        ]
    )
    app.type_and_enter("Start something")
    page.locator("#transcript .msg.assistant.streaming", has_text="alpha2").wait_for(timeout=15_000)
    app.type_and_enter("And then summarize", key="Alt+Enter")
    app.type_and_enter("Actually, focus on beta")
    queued = page.locator("#queue .queued")
    queued.nth(1).wait_for()
    assert "follow-up" in queued.nth(0).inner_text().lower() and "And then summarize" in queued.nth(0).inner_text()
    assert "steering" in queued.nth(1).inner_text().lower() and "Actually, focus on beta" in queued.nth(1).inner_text()
    assert "queued" in queued.nth(1).inner_text().lower()
    page.locator("#transcript .msg.assistant", has_text="Follow-up received.").wait_for(timeout=30_000)
    app.wait_idle()
    # Steering is delivered first (after the current step), the follow-up when the agent would stop.
    assert app.user_texts() == ["Start something", "Actually, focus on beta", "And then summarize"]
    assert page.locator("#queue").is_hidden()
    second_request = mock.requests[1]["body"]["messages"]
    assert any("Actually, focus on beta" in json.dumps(m) for m in second_request)


def test_failed_reply_can_be_retried(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    mock.reset()
    mock.script([{"fault": {"type": "http", "status": 400, "message": "The server said boom"}}, {"text": "Recovered."}])
    app.type_and_enter("Try this")
    error = page.locator("#transcript .msg-error[role='alert']")
    error.wait_for(timeout=15_000)
    assert "The server said boom" in error.inner_text()
    error.locator("button", has_text="Retry").click()
    page.locator("#transcript .msg.assistant", has_text="Recovered.").wait_for(timeout=15_000)
    app.wait_idle()
    assert app.user_texts() == ["Try this"]
    assert page.locator("#transcript .msg.assistant").count() == 1
    assert page.locator("#transcript .msg.assistant .branch-count").inner_text() == "2 / 2"
    page.locator("#transcript .msg.assistant .branch button[aria-label='Previous version']").click()
    page.locator("#transcript .msg-error[role='alert']").wait_for()


def test_editing_an_earlier_message_makes_a_branch(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    mock.reset()
    mock.script([{"text": "Answer one."}, {"text": "Answer two."}])
    app.type_and_enter("Question one")
    page.locator("#transcript .msg.assistant", has_text="Answer one.").wait_for()
    app.wait_idle()
    user = page.locator("#transcript .msg.user").first
    user.hover()
    user.locator(".edit-msg").click()
    user.locator(".edit-area").fill("Question one, edited")
    user.locator(".edit-area").press("Enter")
    page.locator("#transcript .msg.assistant", has_text="Answer two.").wait_for()
    app.wait_idle()
    assert app.user_texts() == ["Question one, edited"]
    assert page.locator("#transcript .msg.user .branch-count").inner_text() == "2 / 2"
    page.locator("#transcript .msg.user .branch button[aria-label='Previous version']").click()
    page.locator("#transcript .msg.assistant", has_text="Answer one.").wait_for()
    assert app.user_texts() == ["Question one"]


def test_tool_calls_show_arguments_and_results(app: App, mock: MockProviderServer) -> None:
    page = app.page
    tools = page.evaluate("() => window.pyAgentApp.state.tools")
    assert "ls" in tools, "the workspace plugin must be enabled (py_agent/app/plugins.py default_plugins())"
    app.new_chat()
    mock.reset()
    mock.script(
        [
            {"tool_calls": [{"id": "call_ls_1", "name": "ls", "arguments": {"path": "."}}]},
            {"text": "The workspace is empty."},
        ]
    )
    app.type_and_enter("List the files")
    page.locator("#transcript .msg.assistant", has_text="The workspace is empty.").wait_for(timeout=20_000)
    app.wait_idle()
    card = page.locator("#transcript details.tool").first
    assert card.get_attribute("data-status") == "done"
    assert "ls" in card.locator(".tool-title").inner_text()
    card.locator("summary").click()
    assert card.locator(".tool-body").inner_text().strip()  # the generic card, or the tool's own renderer
    # The tool result went back to the model.
    assert any(
        block.get("type") == "tool_result"
        for message in mock.requests[1]["body"]["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def test_tools_can_be_switched_off_in_settings(app: App) -> None:
    page = app.page
    tools = page.evaluate("() => window.pyAgentApp.state.tools")
    assert "ls" in tools, "the workspace plugin must be enabled (py_agent/app/plugins.py default_plugins())"
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Tools").click()
    page.locator("#tool-ls").uncheck()
    wait_until(lambda: "ls" not in page.evaluate("() => window.pyAgentApp.state.tools"))
    assert app.py("tool_settings")["settings"]["disabled_tools"] == ["ls"]
    page.locator("#tool-ls").check()
    wait_until(lambda: "ls" in page.evaluate("() => window.pyAgentApp.state.tools"))
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")


def test_rename_search_and_delete_sessions(app: App) -> None:
    page = app.page
    session_id = app.current_session_id()
    row = page.locator(f".session-row[data-id='{session_id}']")
    row.hover()
    row.locator(".row-menu-btn").click()
    row.locator("[role=menuitem]", has_text="Rename").click()
    dialog = page.locator("dialog[open]")
    dialog.locator("input").fill("Branchy <b>talk</b>")
    dialog.locator("input").press("Enter")
    page.locator("#session-title", has_text="Branchy <b>talk</b>").wait_for()
    assert page.locator("#session-title b").count() == 0
    search = page.locator("#session-search")
    search.fill("branchy")
    page.locator(".session-row").first.wait_for()
    wait_until(lambda: page.locator(".session-row").count() == 1)
    search.fill("answer two")  # the preview (conversation text) is searched too
    wait_until(lambda: page.locator(".session-row").count() == 1)
    search.fill("zzz-nothing")
    page.locator(".empty-list", has_text="No session matches").wait_for()
    search.fill("")
    wait_until(lambda: page.locator(".session-row").count() >= 5)
    count = page.locator(".session-row").count()
    row = page.locator(f".session-row[data-id='{session_id}']")
    row.hover()
    row.locator(".row-menu-btn").click()
    row.locator("[role=menuitem]", has_text="Delete").click()
    page.locator("dialog[open] button", has_text="Delete").click()
    wait_until(lambda: page.locator(".session-row").count() == count - 1)
    page.locator("#session-title", has_text="New chat").wait_for()
    assert page.evaluate("() => location.hash") == "#/"
    assert session_id not in [r["id"] for r in app.idb_dump()["sessions"]]


def test_export_is_pi_format_line_for_line_and_import_round_trips(app: App, tmp_path: Path) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("demo", "Demo")
    app.type_and_enter("Write some code")
    page.locator("#transcript .msg.assistant:not(.streaming) .code-block").first.wait_for()
    app.wait_idle()
    session_id = app.current_session_id()
    page.locator("#session-menu-btn").click()
    with page.expect_download() as download_info:
        page.locator("#session-menu [role=menuitem]", has_text="Export").click()
    path = tmp_path / "export.jsonl"
    download_info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[-1] == "" and text.endswith("\n")
    lines = lines[:-1]
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3 and header["id"] == session_id
    assert header["cwd"] == "/" and "timestamp" in header
    previous = None
    for line in lines[1:]:
        entry = json.loads(line)
        assert set(entry) >= {"type", "id", "parentId", "timestamp"}
        assert entry["parentId"] == previous
        assert line == json.dumps(entry, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify's form
        previous = entry["id"]
    stored = sorted((r for r in app.idb_dump()["entries"] if r["sessionId"] == session_id), key=lambda r: r["seq"])
    assert [r["line"] for r in stored] == lines[1:]  # one record per entry, stored as pi writes it
    assert [json.loads(x)["type"] for x in lines[1:]] == [
        "custom",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]

    # Importing the same file keeps both: the copy gets a new id, the entries are identical.
    page.locator("#import-file").set_input_files(str(path))
    wait_until(lambda: app.current_session_id() != session_id)
    page.locator("#transcript .msg.assistant").first.wait_for()
    copy = app.py("export_session")["text"].split("\n")
    assert json.loads(copy[0])["id"] != session_id and copy[1:] == text.split("\n")[1:]

    # Delete the original, import again: the exact same file comes back out.
    app.py("delete_session", id=session_id)
    page.locator("#import-file").set_input_files(str(path))
    wait_until(lambda: app.current_session_id() == session_id)
    assert app.py("export_session", id=session_id)["text"] == text


def test_hostile_reply_title_and_file_execute_nothing(app: App, mock: MockProviderServer, tmp_path: Path) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script([{"text": XSS_REPLY}])
    app.type_and_enter("Show hostile content")
    page.locator("#transcript .msg.assistant", has_text="Hostile content follows.").wait_for()
    app.wait_idle()
    reply = page.locator("#transcript .msg.assistant").last
    for selector in (
        "script",
        "svg",
        "iframe",
        "img",
        "object",
        "style",
        "form",
        "math",
        "[onerror]",
        "[onload]",
        "[style]",
    ):
        assert reply.locator(f".blocks {selector}").count() == 0, selector
    hrefs = reply.locator(".blocks a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert all(h is None or h.startswith("https://") for h in hrefs), hrefs
    for link in reply.locator(".blocks a:not([href])").all():
        link.click()
    reply.locator(".blocks details").first.evaluate("d => { d.open = !d.open; }")
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.__pwned") is None
    # No request to the tracking image's host.
    assert not [r for r in app.requests if "tracker.invalid" in r.url]

    # A hostile session title and a hostile imported file are text too.
    hostile = "<img src=x onerror=\"window.__pwned='title'\">"
    app.py("rename_session", id=app.current_session_id(), name=hostile)
    page.locator("#session-title", has_text="<img").wait_for()
    page.locator(".session-row .session-title", has_text="<img").first.wait_for()
    file = tmp_path / "hostile.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "hostile-0001",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    user = {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "<svg onload=\"window.__pwned='import'\"></svg>", "timestamp": 1},
    }
    file.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    page.locator("#import-file").set_input_files(str(file))
    page.locator("#transcript .msg.user .user-text", has_text="<svg onload").wait_for()
    assert page.locator("#transcript svg:not(.icon)").count() == 0
    assert page.evaluate("() => window.__pwned") is None


def test_keys_go_only_to_their_provider(app: App, mock: MockProviderServer, mock2: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("other-model", "other-model")
    mock2.reset()
    mock2.script([{"text": "Hello from the other provider."}])
    app.type_and_enter("Hello other")
    dialog = page.locator("dialog[open]")
    dialog.locator("#api-key-input").fill(KEY_2)
    dialog.locator("#key-place-tab").check()
    dialog.locator("#key-test").uncheck()
    dialog.locator("#key-save").click()
    page.locator("#transcript .msg.assistant", has_text="Hello from the other provider.").wait_for()
    app.wait_idle()
    assert mock2.requests[-1]["headers"]["authorization"] == f"Bearer {KEY_2}"
    assert page.evaluate("() => sessionStorage.length") == 1  # the tab-only key

    for request in app.requests:
        blob = request.url + json.dumps(request.headers) + request.body
        if KEY_1 in blob:
            assert origin(request.url) == mock.url, request.url
        if KEY_2 in blob:
            assert origin(request.url) == mock2.url, request.url
        assert KEY_1 not in request.url and KEY_2 not in request.url
    assert any(KEY_1 in json.dumps(r.headers) for r in app.requests)
    console = "\n".join(app.console + app.page_errors)
    assert KEY_1 not in console and KEY_2 not in console
    for meta in app.py("list_sessions")["sessions"]:
        text = app.py("export_session", id=meta["id"])["text"]
        assert KEY_1 not in text and KEY_2 not in text
    dump = app.idb_dump()
    for store in ("sessions", "entries", "drafts", "settings", "providers"):
        assert KEY_1 not in json.dumps(dump[store]) and KEY_2 not in json.dumps(dump[store]), store
    assert KEY_2 not in json.dumps(dump["keys"])  # tab-only: never written to the device

    # Forget all keys: both gone, and the next send asks again.
    app.py("forget_all_keys")
    assert app.py("key_status")["keys"] == []
    assert page.evaluate("() => sessionStorage.length") == 0
    assert app.idb_dump()["keys"] == []


def test_a_damaged_record_is_skipped_with_a_warning(app: App) -> None:
    page = app.page
    sessions = app.py("list_sessions")["sessions"]
    current = app.current_session_id()
    target = next(s for s in sessions if s["messageCount"] >= 2 and s["id"] != current)
    # Damage one stored entry and add a session record without metadata.
    page.evaluate(
        """async (id) => {
          const db = await new Promise((ok) => { const r = indexedDB.open("py-agent"); r.onsuccess = () => ok(r.result); });
          const tx = db.transaction(["entries", "sessions"], "readwrite");
          tx.objectStore("entries").put({ sessionId: id, seq: 0, line: "{not json" });
          tx.objectStore("sessions").put({ id: "broken-record", updated: "2030-01-01T00:00:00.000Z" });
          await new Promise((ok) => { tx.oncomplete = ok; });
          db.close();
        }""",
        target["id"],
    )
    listed = [s["id"] for s in app.py("list_sessions")["sessions"]]
    assert "broken-record" not in listed and target["id"] in listed
    page.evaluate("(id) => { location.hash = '#/s/' + id; }", target["id"])
    page.locator("#toasts .toast", has_text="not valid JSON").wait_for()
    page.locator("#transcript .msg").first.wait_for()
    assert page.locator("#transcript .msg.user").count() >= 1


def test_every_control_has_an_accessible_name(app: App) -> None:
    page = app.page
    script = """() => {
      const unnamed = [];
      const name = (el) => {
        if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
        const by = el.getAttribute('aria-labelledby');
        if (by) return by.split(' ').map(id => document.getElementById(id)?.textContent ?? '').join(' ');
        if (el.labels && el.labels.length) return [...el.labels].map(l => l.textContent).join(' ');
        if (el.title) return el.title;
        return el.textContent;
      };
      for (const el of document.querySelectorAll('button, a[href], input, select, textarea, [role=menuitem], [role=option], [role=tab]')) {
        if (el.type === 'hidden' || el.closest('[hidden]') || !el.getClientRects().length) continue;
        if (!(name(el) || '').trim()) unnamed.push(el.outerHTML.slice(0, 120));
      }
      return unnamed;
    }"""
    assert page.evaluate(script) == []
    page.locator("#model-button").click()
    page.locator("#model-search").wait_for()
    assert page.evaluate(script) == []
    page.keyboard.press("Escape")
    page.locator("#open-settings").click()
    for tab in ("API keys", "Custom providers", "Tools", "Chat", "Storage", "About"):
        page.locator("[role=tab]", has_text=tab).click()
        page.wait_for_timeout(100)
        assert page.evaluate(script) == [], tab
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")


def test_model_picker_works_from_the_keyboard(app: App) -> None:
    page = app.page

    def shown(query: str) -> None:  # the list shows that query's results (the search is debounced)
        page.locator("#model-list").and_(page.locator(f"[data-query={json.dumps(query)}]")).wait_for()

    page.locator("#input").focus()
    page.keyboard.press("Control+k")
    search = page.locator("#model-search")
    search.wait_for()
    assert search.evaluate("el => el === document.activeElement")
    search.type("CLSN45")
    shown("CLSN45")
    ids = page.locator(".model-row").evaluate_all("els => els.slice(0, 10).map(e => e.dataset.id)")
    assert any(i.startswith("claude-sonnet-4-5") for i in ids), ids
    search.fill("claude")
    shown("claude")
    lower = page.locator(".model-row").evaluate_all("els => els.map(e => e.dataset.id)")
    search.fill("Claude")
    shown("Claude")
    assert page.locator(".model-row").evaluate_all("els => els.map(e => e.dataset.id)") == lower
    search.fill("gpt-5-mini")
    shown("gpt-5-mini")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    page.locator("#model-button", has_text="GPT-5 Mini").wait_for()
    page.keyboard.press("Control+k")
    search.wait_for()
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")
    assert "GPT-5 Mini" in page.locator("#model-button").inner_text()


def test_back_and_forward_move_between_sessions(app: App) -> None:
    page = app.page
    sessions = app.py("list_sessions")["sessions"]
    first, second = sessions[0], sessions[1]
    page.locator(f".session-row[data-id='{second['id']}'] .session-open").click()
    page.locator("#session-title", has_text=second["title"]).wait_for()
    page.locator(f".session-row[data-id='{first['id']}'] .session-open").click()
    page.locator("#session-title", has_text=first["title"]).wait_for()
    page.go_back()
    page.locator("#session-title", has_text=second["title"]).wait_for()
    app.switched()
    assert app.current_session_id() == second["id"]
    page.go_forward()
    page.locator("#session-title", has_text=first["title"]).wait_for()
    app.switched()
    assert app.current_session_id() == first["id"]


def test_custom_provider_form_explains_cors_failures(app: App) -> None:
    page = app.page
    # Nothing listens there: the browser reports it as it reports a CORS refusal (a failed fetch).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Custom providers").click()
    page.locator("#add-provider").click()
    page.locator("#provider-kind").select_option("ollama")
    page.locator("#provider-name").fill("Local Ollama")
    page.locator("#provider-url").fill(f"http://127.0.0.1:{closed_port}")
    page.locator("button", has_text="Test connection").click()
    result = page.locator(".discovery.bad")
    result.wait_for(timeout=15_000)
    text = result.inner_text()
    assert "OLLAMA_ORIGINS" in text and "CORS" in text
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")

    # A chat request the browser refuses says the same.
    app.py(
        "save_custom_provider",
        provider={
            "name": "Dead Ollama",
            "kind": "ollama",
            "baseUrl": f"http://127.0.0.1:{closed_port}",
            "models": ["llama3"],
        },
        discover=False,
    )
    app.new_chat()
    app.choose_model("dead ollama", "llama3")
    app.type_and_enter("Hello?")
    error = page.locator("#transcript .msg-error[role='alert']")
    error.wait_for(timeout=30_000)
    assert "OLLAMA_ORIGINS" in error.inner_text()
    app.py("delete_custom_provider", name="Dead Ollama")


def test_custom_providers_are_welcome_cards_and_the_welcome_is_the_same_every_time(app: App) -> None:
    page = app.page
    app.py(
        "save_custom_provider",
        provider={
            "name": "Desk LM Studio",
            "kind": "lmstudio",
            "baseUrl": "http://127.0.0.1:9",
            "models": ["qwen3-8b", "gemma-3-4b"],
        },
        discover=False,
    )
    app.new_chat()
    assert page.locator("#welcome-title").inner_text() == "Chat with any model, from this page"
    card = page.locator("#provider-cards button", has_text="Desk LM Studio")
    card.wait_for()
    assert "2 models · local" in card.inner_text() and "No key needed" in card.inner_text()
    card.click()
    page.locator("#model-button", has_text="qwen3-8b").wait_for()
    app.py("delete_custom_provider", name="Desk LM Studio")
    card.wait_for(state="detached")


def test_phone_sized_screen(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport={"width": 390, "height": 844})
    page = app.page
    try:
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        assert page.locator("#input").is_visible() and page.locator("#send-button").is_visible()
        sidebar_box = page.locator("#sidebar").bounding_box()
        assert sidebar_box is None or sidebar_box["x"] + sidebar_box["width"] <= 1
        page.locator("#open-sidebar").click()
        page.locator("#session-search").wait_for()
        wait_until(lambda: (page.locator("#sidebar").bounding_box() or {"x": -1})["x"] >= 0)
        page.keyboard.press("Escape")
        app.type_and_enter("Show me what this app can do")
        page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for()
        app.wait_idle()
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        page.context.close()
