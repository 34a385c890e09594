"""The web app's session wiring in CPython: WebApp + ChatSession over the in-memory backend.

The same code runs in the page over IndexedDB; these tests pin its behaviour without a browser:
append-only saves, reload, branches, retry, queueing, keys and export.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from app_helpers import call, idle

from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.testing.mock_server import MockProviderServer


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    def last(self, kind: str) -> dict[str, Any]:
        return next(payload for k, payload in reversed(self.events) if k == kind)


async def make_app(backend: MemoryBackend | None = None, tab: MemoryTabStore | None = None) -> tuple[WebApp, Recorder]:
    recorder = Recorder()
    app = WebApp(backend or MemoryBackend(), tab or MemoryTabStore(), recorder, demo_tokens_per_second=0, plugins=[])
    await app.start()
    return app, recorder


async def test_demo_chat_is_saved_append_only_and_reloads() -> None:
    backend = MemoryBackend()
    app, rec = await make_app(backend)
    await call(app, "new_session")
    assert (await call(app, "send", text="Hello there. More."))["status"] == "sent"
    await idle(app)
    session_id = app.chat.id
    lines = list(all_lines(backend, session_id))
    types = [json.loads(line)["type"] for line in lines]
    assert types == ["custom", "model_change", "thinking_level_change", "message", "message"]
    assert "persisted" in rec.kinds()
    assert rec.last("append")["item"]["message"]["role"] == "assistant"

    # A second turn only adds entries: the first lines are untouched.
    await call(app, "send", text="again")
    await idle(app)
    lines2 = list(all_lines(backend, session_id))
    assert lines2[: len(lines)] == lines and len(lines2) == len(lines) + 2

    listed = (await call(app, "list_sessions"))["sessions"]
    assert listed[0]["id"] == session_id and listed[0]["title"] == "Hello there."
    assert listed[0]["messageCount"] == 4

    # Reload: a new app over the same storage.
    app2, rec2 = await make_app(backend)
    result = await call(app2, "open_session", id=session_id)
    assert result["found"] is True
    items = rec2.last("transcript")["items"]
    assert [i["message"]["role"] for i in items] == ["user", "assistant", "user", "assistant"]
    state = rec2.last("session_state")
    assert state["model"]["provider"] == "demo" and state["title"] == "Hello there."


async def test_model_and_thinking_changes_are_entries_and_restored() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="hi")
    await idle(app)
    await call(app, "set_thinking", level="high")
    sid = app.chat.id
    types = [json.loads(line)["type"] for line in all_lines(backend, sid)]
    assert types[-1] == "thinking_level_change"
    app2, rec2 = await make_app(backend)
    await call(app2, "open_session", id=sid)
    assert rec2.last("session_state")["thinkingLevel"] == "high"


async def test_edit_makes_a_branch_and_switching_works() -> None:
    app, rec = await make_app()
    await call(app, "new_session")
    await call(app, "send", text="first question")
    await idle(app)
    first_user = rec.last("transcript")["items"] if False else None
    items = app.chat.transcript()
    user_entry = items[0]["entryId"]
    await call(app, "edit", entry_id=user_entry, text="edited question")
    await idle(app)
    items = app.chat.transcript()
    assert items[0]["message"]["content"][0]["text"] == "edited question"
    assert items[0]["branch"] == {"index": 1, "count": 2, "ids": [user_entry, items[0]["entryId"]]}
    await call(app, "switch_branch", entry_id=user_entry)
    items = app.chat.transcript()
    assert items[0]["entryId"] == user_entry and len(items) == 2
    assert first_user is None


async def test_failed_reply_can_be_retried_as_a_sibling() -> None:
    app, _ = await make_app()
    await call(app, "new_session")
    await call(app, "send", text="please fail with an error")
    await idle(app)
    items = app.chat.transcript()
    assert items[-1]["message"]["stopReason"] == "error"
    await call(app, "retry", entry_id=items[-1]["entryId"])
    await idle(app)
    items = app.chat.transcript()
    assert items[-1]["message"]["stopReason"] == "stop"
    assert items[-1]["branch"]["count"] == 2
    assert len(items) == 2  # no duplicate user message


async def test_rename_search_delete_export_import() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="alpha topic")
    await idle(app)
    sid = app.chat.id
    await call(app, "rename_session", id=sid, name="My <b>renamed</b> chat")
    assert (await call(app, "list_sessions", query="renamed"))["sessions"][0]["title"] == "My <b>renamed</b> chat"
    assert (await call(app, "list_sessions", query="zebra"))["sessions"] == []
    exported = await call(app, "export_session", id=sid)
    text = exported["text"]
    lines = text.splitlines()
    assert json.loads(lines[0])["type"] == "session" and json.loads(lines[0])["version"] == 3
    assert lines[1:] == list(all_lines(backend, sid))
    await call(app, "delete_session", id=sid)
    assert (await call(app, "list_sessions"))["sessions"] == []
    imported = await call(app, "import_session", text=text)
    assert imported["sessionId"] == sid
    again = await call(app, "export_session", id=sid)
    assert again["text"] == text
    # Importing the same file again keeps both.
    copy = await call(app, "import_session", text=text)
    assert copy["sessionId"] != sid and copy["warnings"]


async def test_steering_while_streaming_is_delivered() -> None:
    app, rec = await make_app()
    app.chat = None
    await call(app, "new_session")
    # A paced demo so the reply is still streaming when the message is queued.
    from py_agent.app.demo import register_demo_model

    register_demo_model(tokens_per_second=2000)
    try:
        await call(app, "send", text="tell me something long")
        for _ in range(100):
            if app.chat.agent.state.streaming_message is not None:
                break
            await asyncio.sleep(0.005)
        queued = await call(app, "queue", text="and now this", mode="steer")
        assert queued["status"] == "queued"
        assert rec.last("session_state")["queue"][0]["text"] == "and now this"
        await idle(app)
    finally:
        register_demo_model(tokens_per_second=0)
    roles = [(i["message"]["role"], i["message"]["content"]) for i in app.chat.transcript()]
    assert roles[2][0] == "user" and roles[2][1][0]["text"] == "and now this"
    assert roles[3][0] == "assistant"
    assert rec.last("session_state")["queue"] == []


async def test_abort_keeps_the_partial_reply() -> None:
    from py_agent.app.demo import register_demo_model

    app, _ = await make_app()
    await call(app, "new_session")
    register_demo_model(tokens_per_second=500)
    try:
        await call(app, "send", text="long please")
        for _ in range(200):
            message = app.chat.agent.state.streaming_message
            if message is not None and message.content and getattr(message.content[-1], "text", ""):
                break
            await asyncio.sleep(0.005)
        await call(app, "abort")
        await idle(app)
    finally:
        register_demo_model(tokens_per_second=0)
    last = app.chat.transcript()[-1]["message"]
    assert last["stopReason"] == "aborted"
    assert last["content"][0]["text"]


async def test_interrupted_stream_is_recovered_after_reload() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="hi")
    await idle(app)
    sid = app.chat.id
    leaf = app.chat.session.leaf_id
    backend.drafts[sid] = json.dumps(
        {
            "parentId": leaf,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "half a rep"}],
                "api": "x",
                "provider": "demo",
                "model": "demo-scripted",
                "usage": {},
                "stopReason": "stop",
                "timestamp": 1,
            },
        }
    )
    app2, _ = await make_app(backend)
    await call(app2, "open_session", id=sid)
    last = app2.chat.transcript()[-1]["message"]
    assert last["content"][0]["text"] == "half a rep" and last["stopReason"] == "aborted"
    assert "Interrupted" in last["errorMessage"]
    assert sid not in backend.drafts
    # Recovering twice does not duplicate it.
    app3, _ = await make_app(backend)
    await call(app3, "open_session", id=sid)
    assert len(app3.chat.transcript()) == len(app2.chat.transcript())


async def test_quota_failure_keeps_entries_and_saves_them_later() -> None:
    backend = MemoryBackend()
    app, rec = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="one")
    await idle(app)
    backend.fail_next = "quota"
    await call(app, "send", text="two")
    await idle(app)
    assert any(k == "notice" and p.get("id") == "save-error" and p["level"] == "error" for k, p in rec.events)
    await call(app, "send", text="three")
    await idle(app)
    sid = app.chat.id
    messages = [json.loads(line) for line in all_lines(backend, sid) if json.loads(line)["type"] == "message"]
    assert [m["message"]["role"] for m in messages] == ["user", "assistant"] * 3


def anthropic_custom(server: MockProviderServer, name: str = "Mock Claude") -> dict[str, Any]:
    return {
        "name": name,
        "kind": "openai-compatible",
        "api": "anthropic-messages",
        "baseUrl": server.url,
        "models": ["mock-claude"],
    }


async def test_key_is_asked_then_used_only_for_its_provider() -> None:
    with MockProviderServer() as server:
        app, rec = await make_app()
        await call(app, "save_custom_provider", provider=anthropic_custom(server), discover=False)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock Claude", id="mock-claude")
        result = await call(app, "send", text="hello")
        assert result["status"] == "need_key" and result["provider"]["provider"] == "Mock Claude"
        assert server.requests == []
        server.script([{"text": "ok"}, {"text": "**Bold** reply"}])
        saved = await call(app, "save_key", provider="Mock Claude", key="sk-secret-1234", remember=True, test=True)
        assert saved["ok"] is True
        assert (await call(app, "send", text="hello"))["status"] == "sent"
        await idle(app)
        assert len(server.requests) == 2
        assert all(r["headers"].get("x-api-key") == "sk-secret-1234" for r in server.requests)
        exported = (await call(app, "export_session"))["text"]
        assert "sk-secret-1234" not in exported
        assert all("sk-secret-1234" not in json.dumps(p) for _, p in rec.events)


async def test_failed_key_test_stores_nothing() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app, _ = await make_app(backend)
        await call(app, "save_custom_provider", provider=anthropic_custom(server), discover=False)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock Claude", id="mock-claude")
        server.script([{"fault": {"type": "http", "status": 401}}])
        result = await call(app, "save_key", provider="Mock Claude", key="sk-bad-key-999", remember=True, test=True)
        assert result["ok"] is False and result["problem"] == "401: invalid x-api-key"
        assert backend.kv["keys"] == {}


async def test_tab_only_keys_stay_out_of_storage() -> None:
    backend = MemoryBackend()
    tab = MemoryTabStore()
    app, _ = await make_app(backend, tab)
    await call(app, "save_key", provider="anthropic", key="sk-ant-tabonly", remember=False)
    assert backend.kv["keys"] == {} and tab.keys == {"anthropic": "sk-ant-tabonly"}
    status = await call(app, "key_status")
    assert status["keys"] == [{"provider": "anthropic", "place": "tab", "savedAt": None}]
    await call(app, "forget_all_keys")
    assert tab.keys == {}


async def test_custom_provider_discovery_and_cors_message() -> None:
    with MockProviderServer() as server:
        app, _ = await make_app()
        provider = {"name": "Local", "kind": "llama.cpp", "baseUrl": server.url}
        result = await call(app, "discover", provider=provider)
        # The mock has no /v1/models: discovery fails with a readable message.
        assert result["ok"] is False and "llama.cpp" in result["problem"]


@pytest.mark.parametrize("query", ["CLSN45", "clsn45"])
async def test_model_search_is_subsequence_and_case_insensitive(query: str) -> None:
    app, _ = await make_app()
    models = (await call(app, "search_models", query=query))["models"]
    assert any(m["id"].startswith("claude-sonnet-4-5") for m in models[:10])


async def test_system_prompt_is_saved_with_the_session_and_used_after_reload() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app, _ = await make_app(backend)
        await call(app, "save_custom_provider", provider=anthropic_custom(server), discover=False)
        await call(app, "save_key", provider="Mock Claude", key="sk-secret-1234", remember=True)
        await call(app, "set_system_prompt", prompt="You answer in haiku.", default=True)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock Claude", id="mock-claude")
        await call(app, "send", text="hello")
        await idle(app)
        sid = app.chat.id
        await call(app, "set_setting", key="systemPrompt", value="Default again.")
        app2, _ = await make_app(backend)
        await call(app2, "open_session", id=sid)
        assert app2.chat.system_prompt == "You answer in haiku."
        await call(app2, "send", text="again")
        await idle(app2)
        system = server.requests[-1]["body"]["system"]
        assert "You answer in haiku." in json.dumps(system)


async def test_a_rejected_key_reopens_the_key_dialog() -> None:
    with MockProviderServer() as server:
        app, rec = await make_app()
        await call(app, "save_custom_provider", provider=anthropic_custom(server), discover=False)
        await call(app, "save_key", provider="Mock Claude", key="sk-revoked-5678", remember=True)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock Claude", id="mock-claude")
        server.script([{"fault": {"type": "http", "status": 401}}])
        await call(app, "send", text="hello")
        await idle(app)
        assert rec.last("key_rejected")["provider"] == "Mock Claude"


async def test_custom_provider_requests_can_go_through_a_cors_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    from py_agent.app.network import ProxyTransport

    with MockProviderServer() as server:
        app, _ = await make_app()
        await call(app, "set_setting", key="proxyUrl", value="http://proxy.invalid:9")
        provider = {**anthropic_custom(server), "useProxy": True}
        await call(app, "save_custom_provider", provider=provider, discover=False)
        listed = (await call(app, "custom_providers"))["providers"][0]
        assert listed["useProxy"] is True
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock Claude", id="mock-claude")
        seen: list[str] = []

        class Recording(ProxyTransport):
            async def send(self, request, signal=None):  # type: ignore[no-untyped-def]
                seen.append(self.target(request.url))
                return await super().send(request, signal)

        import py_agent.app.chat as chat_module

        real = chat_module.provider_transport
        monkeypatch.setattr(
            chat_module, "provider_transport", lambda name, proxy: Recording(proxy) if real(name, proxy) else None
        )
        await call(app, "save_key", provider="Mock Claude", key="sk-proxy-0000", remember=True)
        await call(app, "send", text="hello")
        await idle(app)
        target = f"http://proxy.invalid:9/?url={server.url.replace(':', '%3A').replace('/', '%2F')}%2Fv1%2Fmessages"
        assert seen and set(seen) == {target}  # (connection errors are retried)
        assert server.requests == []  # nothing went to the server directly
        error = app.chat.transcript()[-1]["message"]["errorMessage"]
        assert "Connection error" in error or "proxy.invalid" in error


class SlowLoads(MemoryBackend):
    """Loading a session waits for `release` (as a long session's load takes a while in the page)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.release.set()

    async def load_session(self, session_id: str) -> Any:
        await self.release.wait()
        return await super().load_session(session_id)


async def saved_session(app: WebApp, text: str) -> str:
    await call(app, "new_session")
    await call(app, "send", text=text)
    await idle(app)
    assert app.chat is not None
    return app.chat.id


async def start_slow_open(app: WebApp, backend: SlowLoads, session_id: str) -> asyncio.Future[str]:
    """From a new chat, an open of `session_id` whose read waits for `backend.release`."""
    await call(app, "new_session")
    backend.release.clear()
    opening = asyncio.ensure_future(app.dispatch("open_session", json.dumps({"id": session_id})))
    await asyncio.sleep(0.01)
    return opening


async def test_a_new_chat_started_while_a_long_session_opens_stays_the_open_session() -> None:
    backend = SlowLoads()
    app, rec = await make_app(backend)
    old = await saved_session(app, "The long one.")
    opening = await start_slow_open(app, backend, old)
    fresh = await call(app, "new_session")
    backend.release.set()
    opened = json.loads(await opening)
    assert opened["superseded"] is True
    assert app.chat is not None and app.chat.id == fresh["sessionId"] != old
    # Nothing of the old session reached the page after the new chat's state.
    assert rec.last("session_state")["sessionId"] == fresh["sessionId"]
    assert rec.last("transcript") == {"sessionId": fresh["sessionId"], "items": []}


async def test_of_two_opens_the_later_wins_whichever_ends_first() -> None:
    backend = SlowLoads()
    app, rec = await make_app(backend)
    first = await saved_session(app, "First.")
    second = await saved_session(app, "Second.")
    a = await start_slow_open(app, backend, first)
    b = asyncio.ensure_future(app.dispatch("open_session", json.dumps({"id": second})))
    await asyncio.sleep(0.01)
    backend.release.set()
    results = [json.loads(r) for r in await asyncio.gather(a, b)]
    assert results[0]["superseded"] is True and "superseded" not in results[1]
    assert app.chat is not None and app.chat.id == second
    assert rec.last("session_state")["sessionId"] == second


async def test_a_message_sent_while_a_session_opens_goes_to_that_session() -> None:
    backend = SlowLoads()
    app, _ = await make_app(backend)
    target = await saved_session(app, "Earlier question.")
    opening = await start_slow_open(app, backend, target)
    send = asyncio.ensure_future(app.dispatch("send", json.dumps({"text": "A follow-up."})))
    await asyncio.sleep(0.01)
    assert not send.done()  # it waits for the open to finish
    backend.release.set()
    await opening
    assert json.loads(await send)["status"] == "sent"
    await idle(app)
    assert app.chat is not None and app.chat.id == target
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in (json.loads(line).get("message", {}) for line in all_lines(backend, target))
        if m.get("role") == "user"
    ]
    assert texts == ["Earlier question.", "A follow-up."]


async def test_a_model_picked_while_a_session_opens_is_that_sessions_model() -> None:
    backend = SlowLoads()
    app, rec = await make_app(backend)
    target = await saved_session(app, "Earlier question.")
    opening = await start_slow_open(app, backend, target)
    model = asyncio.ensure_future(app.dispatch("set_model", json.dumps({"provider": "openai", "id": "gpt-5-mini"})))
    await asyncio.sleep(0.01)
    assert not model.done()
    backend.release.set()
    await opening
    assert json.loads(await model)["model"]["id"] == "gpt-5-mini"
    assert app.chat is not None and app.chat.id == target and app.chat.model.id == "gpt-5-mini"
    assert rec.last("session_state")["model"]["id"] == "gpt-5-mini"


async def test_custom_models_are_described_from_discovery_and_the_users_description_wins() -> None:
    with MockProviderServer() as server:
        server.list_models(
            [
                {"id": "qwen2-vl-7b", "object": "model", "type": "vlm", "max_context_length": 32768},
                {"id": "llama-3.1-8b", "object": "model", "type": "llm", "max_context_length": 131072},
            ]
        )
        app, _ = await make_app()
        provider = {"name": "Desk", "kind": "lmstudio", "baseUrl": server.url}
        found = await call(app, "discover", provider=provider)
        assert found["ok"] is True, found
        details = {d["id"]: d for d in found["modelDetails"]}
        assert set(details) == {"qwen2-vl-7b", "llama-3.1-8b"}, found
        assert details["qwen2-vl-7b"]["vision"] is True and details["qwen2-vl-7b"]["contextWindow"] == 32768
        assert details["llama-3.1-8b"]["vision"] is False

        # The user says the llama model reasons and has a 65,536-token window; a typed id is added.
        spec = {"id": "llama-3.1-8b", "input": ["text"], "reasoning": True, "contextWindow": 65536, "maxTokens": 8192}
        saved = await call(
            app, "save_custom_provider", provider={**provider, "models": [spec, "extra-model"]}, discover=True
        )
        assert saved["ok"] is True and saved["models"] == ["qwen2-vl-7b", "llama-3.1-8b", "extra-model"]
        listed = next(p for p in (await call(app, "custom_providers"))["providers"] if p["name"] == "Desk")
        described = {d["id"]: d for d in listed["modelDetails"]}
        assert described["llama-3.1-8b"] == {
            "id": "llama-3.1-8b",
            "vision": False,
            "reasoning": True,
            "contextWindow": 65536,
            "maxTokens": 8192,
        }
        assert described["qwen2-vl-7b"]["vision"] is True  # the server's word where the user said nothing
        assert listed["modelSpecs"][0] == spec and listed["modelSpecs"][1] == {"id": "extra-model"}
        picked = (await call(app, "search_models", query="llama-3.1-8b"))["models"][0]
        assert picked["reasoning"] is True and picked["contextWindow"] == 65536


async def test_the_start_reads_the_stored_state_at_once() -> None:
    # In the page each read is a round trip to IndexedDB: the app's start does not wait for them in turn.
    class Counting(MemoryBackend):
        reading = 0
        most = 0

        async def kv_all(self, store: str) -> dict[str, Any]:
            self.reading += 1
            self.most = max(self.most, self.reading)
            await asyncio.sleep(0)
            self.reading -= 1
            return await super().kv_all(store)

    backend = Counting()
    await backend.kv_put("settings", "thinkingLevel", "high")
    app, _ = await make_app(backend)
    assert backend.most >= 3  # settings, keys and custom providers
    assert app.settings["thinkingLevel"] == "high"


async def test_open_session_says_whether_it_opened_read_only() -> None:
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    await call(app, "new_session")
    await call(app, "send", text="Hello")
    await idle(app)
    session_id = app.chat.id if app.chat else ""
    other, _ = await make_app(backend)
    assert (await call(other, "open_session", id=session_id, read_only=True))["readOnly"] is True
    third, _ = await make_app(backend)
    assert (await call(third, "open_session", id=session_id))["readOnly"] is False
