"""The reliability fixes in the session wiring (SECURITY.md), in CPython over the in-memory backend (the browser tests
in tests/browser/test_faults.py and test_resilience.py cover the same through the page):

- a damaged entry record is skipped when a session is read, and the next save goes after it
  (not onto it, which the append-only store refuses as a conflict);
- a session opened read-only (another tab holds it) recovers and writes nothing; ``reload``
  reads it again;
- the stall timeout setting is checked and applies to the open session;
- retries are announced (``retry`` events, keys scrubbed); key changes are announced for the other
  tabs (``keys_changed``, never the key) and followed (``sync_keys``);
- damaged session records are counted and reported once.
"""

from __future__ import annotations

import json

from test_app import call, idle, make_app

from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.testing.mock_server import MockProviderServer

KEY = "sk-reliability-KEY-0001-abcdefgh"


async def test_a_damaged_record_is_skipped_and_the_session_goes_on() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="first")
    await idle(app)
    session_id = app.chat.id
    backend.entries[session_id][2] = "{not json"  # the thinking-level entry is damaged
    backend.entries[session_id][7] = ""  # and a junk record after the last one
    app2, _ = await make_app(backend)
    opened = await call(app2, "open_session", id=session_id)
    assert opened["found"] and opened["warnings"]
    await call(app2, "send", text="second")
    await idle(app2)
    assert not app2.chat.read_only and app2.chat.state()["unsaved"] == 0
    stored = backend.entries[session_id]
    assert sorted(stored) == [0, 1, 2, 3, 4, 7, 8, 9]  # appended after the junk, nothing overwritten
    assert stored[2] == "{not json"
    await call(app2, "rename_session", id=session_id, name="still fine")  # the open one
    await call(app2, "new_session")
    await call(app2, "rename_session", id=session_id, name="renamed while closed")
    assert sorted(backend.entries[session_id])[-2:] == [10, 11]


async def test_read_only_open_recovers_and_writes_nothing_and_reload_rereads() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="first")
    await idle(app)
    session_id = app.chat.id
    draft = {
        "parentId": None,
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "half"}],
            "api": "faux",
            "provider": "demo",
            "model": "demo",
            "stopReason": "stop",
        },
    }
    backend.drafts[session_id] = json.dumps(draft)
    lines = list(all_lines(backend, session_id))

    other, _ = await make_app(backend)
    await call(other, "open_session", id=session_id, read_only=True)
    assert other.chat.read_only and "another tab" in other.chat.read_only_reason
    assert list(all_lines(backend, session_id)) == lines and session_id in backend.drafts
    assert json.loads(await other.dispatch("send", json.dumps({"text": "x"})))["error"]

    # The writing tab goes on; the read-only tab reads it again on demand.
    await call(app, "send", text="second")
    await idle(app)
    await call(other, "open_session", id=session_id, read_only=True)
    assert len(other.chat.transcript()) == 2  # not re-read: the same object
    await call(other, "open_session", id=session_id, read_only=True, reload=True)
    assert len(other.chat.transcript()) == 4 and other.chat.read_only


async def test_stall_timeout_setting_is_checked_and_applied() -> None:
    app, _ = await make_app()
    await call(app, "new_session")
    for bad in (5, "12", True, 10**9, -1):
        result = json.loads(await app.dispatch("set_setting", json.dumps({"key": "idleTimeoutMs", "value": bad})))
        assert "stall timeout" in result["error"]
    await call(app, "set_setting", key="idleTimeoutMs", value=1500.0)
    assert app.chat.idle_timeout_ms == 1500 and app.settings["idleTimeoutMs"] == 1500
    assert (await call(app, "init"))["settings"]["idleTimeoutMs"] == 1500
    await call(app, "set_setting", key="idleTimeoutMs", value=0)
    assert app.chat.idle_timeout_ms == 0


async def test_retries_are_announced_without_the_key() -> None:
    with MockProviderServer() as server:
        app, rec = await make_app()
        await call(
            app,
            "save_custom_provider",
            provider={
                "name": "Mock",
                "kind": "openai-compatible",
                "api": "anthropic-messages",
                "baseUrl": server.url,
                "models": ["m"],
            },
            discover=False,
        )
        await call(app, "save_key", provider="Mock", key=KEY)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock", id="m")
        body = {"type": "error", "error": {"type": "rate_limit_error", "message": f"slow down, {KEY}"}}
        server.script([{"fault": {"type": "http", "status": 429, "retry_after": "0", "body": body}}, {"text": "ok"}])
        await call(app, "send", text="hi")
        await idle(app)
        retry = rec.last("retry")
        assert retry["attempt"] == 1 and retry["status"] == 429 and retry["sessionId"] == app.chat.id
        assert "limiting requests" in retry["text"] and "attempt 1 of 3" in retry["text"]
        assert KEY not in json.dumps(rec.events)


async def test_key_changes_are_announced_and_followed_by_other_tabs() -> None:
    backend = MemoryBackend()
    app, rec = await make_app(backend)
    other, _ = await make_app(backend)
    await call(app, "save_key", provider="anthropic", key=KEY)
    assert rec.last("keys_changed") == {"action": "set", "provider": "anthropic"}
    assert not other.keys.has("anthropic")
    await call(other, "sync_keys", action="set", provider="anthropic")
    assert other.keys.get("anthropic") == KEY
    await call(other, "save_key", provider="openai", key="sk-tab-only-0001", remember=False)
    await call(app, "forget_all_keys")
    assert rec.last("keys_changed") == {"action": "forget_all"}
    await call(other, "sync_keys", action="forget_all")
    assert other.keys.providers() == [] and backend.kv["keys"] == {}
    assert KEY not in json.dumps(rec.events)


async def test_damaged_session_records_are_reported_once() -> None:
    backend = MemoryBackend()
    app, rec = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="fine")
    await idle(app)
    backend.sessions["junk"] = {"id": "junk", "updated": "2031", "meta": {"id": 5}}
    backend.sessions["junk2"] = {"id": "junk2", "updated": "2031"}
    listed = await call(app, "list_sessions")
    assert [s["title"] for s in listed["sessions"]] == ["fine"] and listed["skipped"] == 2
    notices = [p for k, p in rec.events if k == "notice" and p.get("id") == "unreadable-sessions"]
    assert len(notices) == 1 and "2 stored sessions are damaged" in notices[0]["text"]
    await call(app, "list_sessions")
    assert len([p for k, p in rec.events if k == "notice" and p.get("id") == "unreadable-sessions"]) == 1
