"""Page faults, two tabs, storage faults and long sessions, in Chromium.

- Page faults: reload or close during a stream or a tool run: every completed message is still
  there, the interrupted one is marked interrupted, nothing is duplicated on retry or on the
  next reload.
- Two tabs on one session: the second tab gets it read-only and writes nothing (not even the
  recovery of a reply the first tab is still streaming); it follows the first tab's saves; taking
  the session over reloads it first, so nothing is overwritten; without Web Locks, the
  append-only store refuses the stale tab's write and it says so.
- Storage faults: quota exceeded (a test hook makes every write transaction fail at commit the
  way Chromium reports a full quota) shows a clear error, loses nothing already saved, and saving
  resumes with everything that was pending; a write that fails half-way commits nothing; damaged
  records are skipped with a warning while the rest loads; data written by every earlier schema
  version opens; data of a newer version is left alone with a clear message.
- A 10,000-message session, written through the app's own storage API, opens, scrolls and goes on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from reliability_helpers import (
    OBSERVERS,
    GuardedApp,
    assert_no_duplicates,
    messages_of,
    open_guarded,
    wait_ready,
)
from web_app_helpers import wait_until

from py_agent.testing.mock_server import MockProviderServer

KEY = "sk-ant-resilience-KEY-0001-abcdefgh"
SLOW = {"text": " ".join(f"part{i}" for i in range(400)), "delay_ms": 40, "chunk_size": 8}


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[GuardedApp]:
    mock.stall_seconds = 10  # a "stall" fault without its own seconds
    with open_guarded(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key=KEY)
        yield app


def use_mock(app: GuardedApp) -> None:
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")


def use_demo(app: GuardedApp) -> None:
    app.new_chat()
    app.choose_model("demo", "Demo")


def reload(app: GuardedApp) -> None:
    app.page.reload()
    wait_ready(app.page)


def open_tab(app: GuardedApp, session_id: str, context: Any = None) -> GuardedApp:
    return open_guarded(None, app.base, hash=f"#/s/{session_id}", context=context or app.page.context)


# ---------------------------------------------------------------------------------------------
# Page faults


def test_reload_during_a_stream_then_retry_duplicates_nothing(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    use_mock(app)
    mock.reset()
    mock.script([SLOW])
    app.type_and_enter("Interrupted by a reload")
    page.locator("#transcript .msg.assistant.streaming", has_text="part20").wait_for(timeout=15_000)
    page.wait_for_timeout(700)  # the draft is saved twice a second
    session_id = app.current_session_id()
    reload(app)
    assert mock.wait_closed(0, timeout=5)  # the reply's connection went with the page
    note = page.locator("#transcript .msg.assistant .msg-error", has_text="Interrupted")
    note.wait_for()
    partial = app.assistant_texts()[-1]
    assert partial.startswith("part0 part1") and "part399" not in partial
    mock.script([{"text": "The full answer."}])
    note.locator("button", has_text="Retry").click()
    page.locator("#transcript .msg.assistant", has_text="The full answer.").wait_for(timeout=15_000)
    app.settle()
    # The retried request does not carry the interrupted reply; nothing is stored twice.
    sent = mock.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user"]
    reload(app)
    page.locator("#transcript .msg.assistant", has_text="The full answer.").wait_for()
    lines = app.stored_lines(session_id)
    assert_no_duplicates(lines)
    stored = messages_of(lines)
    assert [m["role"] for m in stored] == ["user", "assistant", "assistant"]
    assert stored[1]["stopReason"] == "aborted" and stored[1]["errorMessage"].startswith("Interrupted")
    assert app.user_texts() == ["Interrupted by a reload"]
    assert page.locator("#transcript .msg.assistant .branch-count").inner_text() == "2 / 2"
    assert app.idb_dump()["drafts"] == []


def test_closing_the_tab_during_a_stream_keeps_everything(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    use_mock(app)
    mock.reset()
    mock.script([{"text": "First answer, complete."}, SLOW])
    app.send("A first question")
    app.type_and_enter("A second question, then the tab closes")
    page.locator("#transcript .msg.assistant.streaming", has_text="part20").wait_for(timeout=15_000)
    page.wait_for_timeout(700)
    session_id = app.current_session_id()
    context = page.context
    other = open_guarded(None, app.base, context=context)  # keeps the context alive
    page.close()
    assert mock.wait_closed(1, timeout=5)
    other.page.evaluate("(id) => { location.hash = '#/s/' + id; }", session_id)
    other.page.locator("#transcript .msg-error", has_text="Interrupted").wait_for()
    assert other.user_texts() == ["A first question", "A second question, then the tab closes"]
    texts = other.assistant_texts()
    assert texts[0] == "First answer, complete." and texts[1].startswith("part0")
    stored = messages_of(other.stored_lines(session_id))
    assert [m.get("stopReason") for m in stored if m["role"] == "assistant"] == ["stop", "aborted"]
    # The fixture's page is gone: continue the module in the new one.
    app.page = other.page
    app.requests, app.console, app.page_errors, app.dialogs = (
        other.requests,
        other.console,
        other.page_errors,
        other.dialogs,
    )


def test_reload_during_a_tool_run_marks_it_unfinished(app: GuardedApp, mock: MockProviderServer) -> None:
    page = app.page
    assert "javascript" in app.state()["tools"], (
        "the javascript tool (default_plugins() in py_agent/app/plugins.py) must be enabled"
    )
    use_mock(app)
    mock.reset()
    code = "await new Promise((r) => setTimeout(r, 20000)); return 'never';"
    mock.script(
        [
            {
                "text": "Running it.",
                "tool_calls": [{"id": "call_slow_1", "name": "javascript", "arguments": {"code": code}}],
            }
        ]
    )
    app.type_and_enter("Run something slow")
    card = page.locator("#transcript details.tool[data-status='running']")
    card.wait_for(timeout=20_000)
    session_id = app.current_session_id()
    reload(app)
    card = page.locator("#transcript details.tool").first
    card.wait_for()
    assert card.get_attribute("data-status") == "interrupted"
    card.locator("summary").click()
    assert "did not finish" in card.inner_text()
    # The conversation goes on: the unfinished call is answered "No result provided" for the model.
    mock.script([{"text": "Understood, it was interrupted."}])
    app.send("What happened?")
    page.locator("#transcript .msg.assistant", has_text="Understood, it was interrupted.").wait_for()
    sent = json.dumps(mock.requests[-1]["body"]["messages"])
    assert "No result provided" in sent
    lines = app.stored_lines(session_id)
    assert_no_duplicates(lines)
    assert [m["role"] for m in messages_of(lines)] == ["user", "assistant", "user", "assistant"]


# ---------------------------------------------------------------------------------------------
# Two tabs


def test_second_tab_is_read_only_and_recovers_nothing_while_the_first_streams(
    app: GuardedApp, mock: MockProviderServer
) -> None:
    page = app.page
    use_mock(app)
    mock.reset()
    mock.script([{"text": "Setup reply."}, SLOW])
    app.send("Two tabs: first message")
    session_id = app.current_session_id()
    app.type_and_enter("Two tabs: a long reply")
    page.locator("#transcript .msg.assistant.streaming", has_text="part20").wait_for(timeout=15_000)
    page.wait_for_timeout(700)  # a draft exists now
    assert len(app.idb_dump()["drafts"]) == 1
    second = open_tab(app, session_id)
    try:
        banner = second.page.locator("#banner")
        banner.wait_for()
        assert "another tab" in banner.inner_text()
        assert second.page.locator("#input").is_disabled()
        # It recovered nothing: the draft belongs to the tab that is still streaming.
        assert [m["role"] for m in messages_of(app.stored_lines(session_id))] == ["user", "assistant", "user"]
        app.settle()
        stored = messages_of(app.stored_lines(session_id))
        assert [m.get("stopReason") for m in stored if m["role"] == "assistant"] == ["stop", "stop"]
        assert "save-error" not in json.dumps(app.toasts()) and not app.state()["readOnly"]
        # The read-only tab follows the saves of the writing tab.
        second.page.locator("#transcript .msg.assistant", has_text="part399").wait_for(timeout=10_000)
        assert second.user_texts() == ["Two tabs: first message", "Two tabs: a long reply"]

        # Taking over reads the session again first, then writes after the other tab's entries.
        second.page.locator("#banner button", has_text="Edit here instead").click()
        second.page.locator("#banner").wait_for(state="hidden")
        page.locator("#banner", has_text="another tab").wait_for()
        assert page.locator("#input").is_disabled()
        mock.script([{"text": "Written by the second tab."}])
        second.send("From the second tab")
        second.page.locator("#transcript .msg.assistant", has_text="Written by the second tab.").wait_for()
        assert second.state()["readOnly"] is False
        assert not any("changed in another tab" in t for t in second.toasts())
        page.locator("#transcript .msg.assistant", has_text="Written by the second tab.").wait_for(timeout=10_000)
        lines = app.stored_lines(session_id)
        assert_no_duplicates(lines)
        assert [m["role"] for m in messages_of(lines)] == ["user", "assistant"] * 3
    finally:
        second.page.close()
    page.locator("#banner button", has_text="Edit here instead").click()
    page.locator("#banner").wait_for(state="hidden")


def test_without_web_locks_a_stale_tab_cannot_overwrite(app: GuardedApp, browser: Any) -> None:
    page = app.page
    use_demo(app)
    app.send("Show me what this app can do")
    session_id = app.current_session_id()
    # A browser without Web Locks: both tabs think they may write; the store is the backstop.
    context = page.context
    stale_page = context.new_page()
    stale_page.add_init_script("Object.defineProperty(Navigator.prototype, 'locks', { get: () => undefined });")
    stale_page.goto(f"{app.base}/?demo-tps=0#/s/{session_id}")
    wait_ready(stale_page)
    stale = GuardedApp(stale_page, app.base)
    stale.dialogs = []
    try:
        stale_page.locator("#transcript .msg.assistant").first.wait_for()
        assert stale.state()["readOnly"] is False
        app.send("Write some code")  # the first tab adds entries
        before = app.stored_lines(session_id)
        stale.type_and_enter("A stale tab writes")
        notice = stale_page.locator("#toasts .toast.error", has_text="changed in another tab")
        notice.wait_for(timeout=15_000)
        stale_page.locator("#banner", has_text="changed in another tab").wait_for()
        after = app.stored_lines(session_id)
        assert after == before  # not one entry overwritten or added by the stale tab
        assert_no_duplicates(after)
    finally:
        stale_page.close()


def test_forgetting_keys_in_one_tab_forgets_them_in_every_tab(app: GuardedApp) -> None:
    second = open_guarded(None, app.base, context=app.page.context)
    try:
        assert [k["provider"] for k in second.py("key_status")["keys"]] == ["Mock Claude"]
        app.py("forget_all_keys")
        wait_until(lambda: second.py("key_status")["keys"] == [])
        # A key saved in one tab reaches the other (device keys only).
        app.py("save_key", provider="Mock Claude", key=KEY, remember=True)
        wait_until(lambda: [k["provider"] for k in second.py("key_status")["keys"]] == ["Mock Claude"])
        second.py("delete_key", provider="Mock Claude")
        wait_until(lambda: app.py("key_status")["keys"] == [])
    finally:
        second.page.close()
    app.py("save_key", provider="Mock Claude", key=KEY, remember=True)


# ---------------------------------------------------------------------------------------------
# Storage faults

# Every readwrite transaction fails at commit with QuotaExceededError, as a full origin does in
# Chromium ("sync-second-add": the second add() of a transaction throws at once instead, so a
# transaction that is not aborted would commit the first one).
QUOTA_HOOK = """(mode) => {
  if (!window.__quotaHook) {
    window.__quotaHook = { mode: null };
    const errorGetter = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "error").get;
    Object.defineProperty(IDBTransaction.prototype, "error", {
      configurable: true,
      get() { return this.__quota ? new DOMException("The quota has been exceeded.", "QuotaExceededError") : errorGetter.call(this); },
    });
    for (const method of ["add", "put"]) {
      const original = IDBObjectStore.prototype[method];
      IDBObjectStore.prototype[method] = function (...args) {
        const mode = window.__quotaHook.mode;
        const tx = this.transaction;
        if (mode === "sync-second-add" && method === "add") {
          tx.__adds = (tx.__adds || 0) + 1;
          if (tx.__adds === 2) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
        }
        const request = original.apply(this, args);
        if (mode === "commit" && !tx.__quota) {
          tx.__quota = true;
          queueMicrotask(() => { try { tx.abort(); } catch {} });
        }
        return request;
      };
    }
    // The page commits its writes at once (web/boot/idb.js write): that commit fails as a full
    // disk's would, with the transaction aborted.
    const commit = IDBTransaction.prototype.commit;
    IDBTransaction.prototype.commit = function () {
      if (this.__quota) { try { this.abort(); } catch {} return; }
      return commit.call(this);
    };
  }
  window.__quotaHook.mode = mode;
}"""


def test_quota_exceeded_loses_nothing_and_saving_resumes(app: GuardedApp) -> None:
    page = app.page
    use_demo(app)
    app.send("Show me what this app can do")
    session_id = app.current_session_id()
    saved = app.stored_lines(session_id)
    assert len(messages_of(saved)) == 2

    try:
        # The origin is full: the message and its reply cannot be saved.
        page.evaluate(QUOTA_HOOK, "commit")
        app.send("Write some code")
        error = page.locator("#toasts .toast.error", has_text="storage for this site is full")
        error.wait_for()
        assert "not saved yet" in error.inner_text() and "saving resumes" in error.inner_text()
        assert app.state()["unsaved"] == 2 and not app.state()["readOnly"]
        assert app.stored_lines(session_id) == saved  # nothing lost, nothing half-written
        # Still full, and this time a write fails half-way (after its first record): the
        # transaction commits nothing, so the pending entries keep their places.
        page.evaluate(QUOTA_HOOK, "sync-second-add")
        app.send("Give me a long answer")
        assert app.state()["unsaved"] == 4 and not app.state()["readOnly"]
        assert app.stored_lines(session_id) == saved
    finally:
        page.evaluate(QUOTA_HOOK, None)
    # Space again: everything pending is saved with the next message, in order.
    app.send("Show me what this app can do")
    page.locator("#toasts .toast", has_text="Saved again: nothing was lost.").last.wait_for()
    assert app.state()["unsaved"] == 0
    lines = app.stored_lines(session_id)
    assert lines[: len(saved)] == saved
    assert_no_duplicates(lines)
    assert [m["role"] for m in messages_of(lines)] == ["user", "assistant"] * 4
    reload(app)
    page.locator("#transcript .msg.user").first.wait_for()
    assert app.user_texts() == [
        "Show me what this app can do",
        "Write some code",
        "Give me a long answer",
        "Show me what this app can do",
    ]


def test_damaged_records_are_skipped_with_a_warning(app: GuardedApp) -> None:
    page = app.page
    use_demo(app)
    app.send("Show me what this app can do")
    good = app.current_session_id()
    use_demo(app)
    app.send("Write some code")
    damaged = app.current_session_id()
    page.evaluate(
        """async ([damaged]) => {
          const db = await new Promise((ok) => { const r = indexedDB.open("py-agent"); r.onsuccess = () => ok(r.result); });
          const tx = db.transaction(["entries", "sessions", "drafts", "settings", "keys", "providers"], "readwrite");
          tx.objectStore("entries").put({ sessionId: damaged, seq: 5, line: "{not json" });   // an unreadable entry
          tx.objectStore("entries").put({ sessionId: damaged, seq: 6, line: 42 });            // not a line at all
          tx.objectStore("drafts").put({ sessionId: damaged, message: "{truncated" });          // unreadable draft
          tx.objectStore("sessions").put({ id: "junk-1", updated: "2031-01-01", meta: "junk" }); // metadata of the wrong type
          tx.objectStore("sessions").put({ id: "junk-2", updated: "2031-01-02", meta: { id: 5, title: [] } });
          tx.objectStore("settings").put(["not", "a", "theme"], "theme");
          tx.objectStore("keys").put(12345, "Broken Provider");
          tx.objectStore("providers").put("garbage", "Broken Provider");
          await new Promise((ok) => { tx.oncomplete = ok; });
          db.close();
        }""",
        [damaged],
    )
    reload(app)
    page.locator("#toasts .toast", has_text="2 stored sessions are damaged").wait_for()
    page.locator("#toasts .toast", has_text="Broken Provider").wait_for()
    listed = [s["id"] for s in app.py("list_sessions")["sessions"]]
    assert good in listed and damaged in listed and "junk-1" not in listed and "junk-2" not in listed
    page.evaluate("(id) => { location.hash = '#/s/' + id; }", damaged)
    page.locator("#toasts .toast", has_text="interrupted reply could not be read").wait_for()
    page.locator("#toasts .toast", has_text="not valid JSON").first.wait_for()
    page.locator("#transcript .msg.assistant .code-block").first.wait_for()
    assert app.user_texts() == ["Write some code"]
    # It goes on: new entries go after the damaged records, which stay as they were.
    app.send("Show me what this app can do")
    assert not app.state()["readOnly"] and app.state()["unsaved"] == 0
    records = sorted((r for r in app.idb_dump()["entries"] if r["sessionId"] == damaged), key=lambda r: r["seq"])
    assert [r["seq"] for r in records] == list(range(9)) and records[5]["line"] == "{not json"
    page.evaluate("(id) => { location.hash = '#/s/' + id; }", good)
    page.locator("#transcript .msg.assistant table").first.wait_for()
    assert app.py("key_status")["keys"] == [
        {"provider": "Mock Claude", "place": "device", "savedAt": app.py("key_status")["keys"][0]["savedAt"]}
    ]
    assert app.page_errors == []


# Each earlier schema version, frozen as it was released: the stores it had and records in its
# format. A new version of web/boot/idb.js's UPGRADES must add its predecessor here.
SCHEMA_FIXTURES = {
    1: """async () => {
      const db = await new Promise((ok, no) => {
        const r = indexedDB.open("py-agent", 1);
        r.onupgradeneeded = () => {
          const d = r.result;
          d.createObjectStore("sessions", { keyPath: "id" }).createIndex("updated", "updated");
          d.createObjectStore("entries", { keyPath: ["sessionId", "seq"] });
          d.createObjectStore("drafts", { keyPath: "sessionId" });
          for (const s of ["settings", "keys", "providers"]) d.createObjectStore(s);
        };
        r.onsuccess = () => ok(r.result);
        r.onerror = () => no(r.error);
      });
      const id = "0195a000-0000-7000-8000-000000000001";
      const header = JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" });
      const lines = [
        { type: "model_change", id: "e0000001", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", provider: "demo", modelId: "demo" },
        { type: "message", id: "e0000002", parentId: "e0000001", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text: "Saved by schema version 1" }], timestamp: 1767225601000 } },
        { type: "message", id: "e0000003", parentId: "e0000002", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: "An answer from version 1." }], api: "faux", provider: "demo", model: "demo", usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 1767225602000 } },
      ];
      const tx = db.transaction(["sessions", "entries", "drafts", "settings", "keys", "providers"], "readwrite");
      lines.forEach((e, seq) => tx.objectStore("entries").add({ sessionId: id, seq, line: JSON.stringify(e) }));
      tx.objectStore("sessions").put({ id, updated: "2026-01-01T00:00:02.000Z", header, meta: {
        id, title: "Saved by schema version 1", name: null, created: "2026-01-01T00:00:00.000Z", updated: "2026-01-01T00:00:02.000Z",
        messageCount: 2, userMessageCount: 1, leafId: "e0000003", preview: "Saved by schema version 1",
        model: { provider: "demo", modelId: "demo" }, thinkingLevel: "off",
        usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      } });
      tx.objectStore("settings").put("dark", "theme");
      tx.objectStore("keys").put({ key: "sk-schema-v1-KEY-000000000001", savedAt: 1767225600000 }, "anthropic");
      await new Promise((ok) => { tx.oncomplete = ok; });
      db.close();
      return id;
    }""",
}


def test_data_of_every_earlier_schema_version_opens(browser: Any, base_url: str) -> None:
    probe = browser.new_context()
    page = probe.new_page()
    page.goto(base_url + "/README.md")
    version = page.evaluate("() => import('./boot/idb.js').then((m) => m.SCHEMA_VERSION)")
    probe.close()
    assert set(SCHEMA_FIXTURES) == set(range(1, version + 1)), "add a fixture for each released schema version"
    for fixture_version, fixture in SCHEMA_FIXTURES.items():
        context = browser.new_context()
        context.add_init_script(OBSERVERS)
        try:
            page = context.new_page()
            page.goto(base_url + "/README.md")  # same origin, no app: the old data goes in first
            session_id = page.evaluate(fixture)
            app = open_guarded(None, base_url, context=context, hash=f"#/s/{session_id}")
            app.page.locator(
                "#transcript .msg.assistant", has_text=f"An answer from version {fixture_version}."
            ).wait_for()
            assert app.user_texts() == [f"Saved by schema version {fixture_version}"]
            assert app.page.get_attribute("html", "data-theme") == "dark"
            assert [k["provider"] for k in app.py("key_status")["keys"]] == ["anthropic"]
            assert (
                app.page.evaluate(
                    "() => new Promise((ok) => { const r = indexedDB.open('py-agent'); r.onsuccess = () => { ok(r.result.version); r.result.close(); }; })"
                )
                == version
            )
            # And it goes on: a new message is appended after the old entries.
            app.send("Show me what this app can do")
            lines = app.stored_lines(session_id)
            assert [line["id"] for line in lines[:3]] == ["e0000001", "e0000002", "e0000003"]
            assert len(messages_of(lines)) == 4
        finally:
            context.close()


def test_data_of_a_newer_version_is_left_alone(browser: Any, base_url: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(base_url + "/README.md")
        page.evaluate(
            """() => new Promise((ok) => { const r = indexedDB.open("py-agent", 99);
                 r.onupgradeneeded = () => r.result.createObjectStore("future");
                 r.onsuccess = () => { r.result.close(); ok(); }; })"""
        )
        page.goto(base_url + "/?demo-tps=0")
        page.locator("html[data-app='error']").wait_for(state="attached", timeout=120_000)
        text = page.locator("#boot-error").inner_text()
        assert "newer format" in text and "reload" in text.lower() and "private window" not in text
        version = page.evaluate(
            "() => new Promise((ok) => { const r = indexedDB.open('py-agent'); r.onsuccess = () => { ok(r.result.version); r.result.close(); }; })"
        )
        assert version == 99
    finally:
        context.close()


# ---------------------------------------------------------------------------------------------
# Long sessions

GENERATE = """
import json
from py_agent.browser.main import _app
from py_agent.session import Session
from py_agent.ai.types import AssistantMessage, TextContent, UserMessage, Usage

session = Session.create()
session.append_model_change("demo", "demo-scripted")
session.append_thinking_level_change("off")
for i in range(COUNT // 2):
    session.append_message(UserMessage(content=[TextContent(text=f"Question number {i}")], timestamp=1_700_000_000_000 + i))
    session.append_message(AssistantMessage(
        content=[TextContent(text=f"Answer number {i}: " + "lorem ipsum " * 8)],
        api="faux", provider="demo", model="demo-scripted", usage=Usage(input=10, output=20, total_tokens=30),
        timestamp=1_700_000_000_000 + i,
    ))
await _app.store.append(session, 0, session.entries, clear_draft=False)
session.id
"""


def test_a_10000_message_session_loads_scrolls_and_continues(app: GuardedApp) -> None:
    page = app.page
    started = time.monotonic()
    session_id = page.evaluate(
        "async (code) => { const { pyodide } = await window.pyAgent.ready; return await pyodide.runPythonAsync(code); }",
        GENERATE.replace("COUNT", "10_000"),
    )
    generated = time.monotonic() - started
    assert len(messages_of(app.stored_lines(session_id))) == 10_000

    started = time.monotonic()
    page.goto(f"{app.base}/?demo-tps=0&visit=2#/s/{session_id}")  # a new visit (not a hash change) straight to it
    wait_ready(page)
    page.locator("#transcript .msg.assistant", has_text="Answer number 4999:").wait_for(timeout=60_000)
    opened = time.monotonic() - started
    assert opened < 30, f"booting and opening took {opened:.1f}s"
    row = page.locator(f".session-row[data-id='{session_id}']")
    row.wait_for()
    assert "10000 messages" in row.inner_text().replace(",", "")

    # Scrolling: earlier messages come in pages as the top comes near, and the page stays responsive.
    scroller = page.locator("#scroller")
    earlier = page.locator("#transcript .msg.user", has_text="Question number 4840")
    for _ in range(50):
        if earlier.count():
            break
        scroller.evaluate("el => { el.scrollTop = 0; }")
        page.wait_for_timeout(50)
    earlier.wait_for()
    assert page.locator("#transcript .msg").count() <= 400  # windowed, not 10,000 nodes
    started = time.monotonic()
    page.evaluate("() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))")
    assert time.monotonic() - started < 2

    # It goes on: a new exchange is appended after entry 10,002, and survives a reload.
    app.send("And one more message", timeout=90)
    page.locator("#transcript .msg.assistant", has_text="You said: “And one more message”").wait_for()
    lines = app.stored_lines(session_id)
    assert len(messages_of(lines)) == 10_002
    assert_no_duplicates(lines[-6:])
    reload(app)
    page.locator("#transcript .msg.user", has_text="And one more message").wait_for(timeout=60_000)
    print(f"10k session: generated in {generated:.1f}s, opened in {opened:.1f}s")
