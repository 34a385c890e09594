"""A send's request leaves before the user's message is saved, and nothing is lost or reordered (CPython).

The page shows and saves the user's message while the request goes out (py_agent/app/chat.py
``_save_soon``; bench/first_token.py measures the delay): the save is handed to storage in the
same turn as the request (a reload right after cannot drop it), it is still done, before anything
appended after it, when the request fails; the stored entries keep the session's order.
tests/browser/test_first_token.py covers the page (IndexedDB, a reload right after sending).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from test_app import call, idle, make_app

from py_agent.ai.abort import AbortSignal
from py_agent.ai.transport import HttpRequest, HttpResponse, set_default_transport
from py_agent.app.network import SentSignalTransport
from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.testing.mock_server import MockProviderServer
from py_agent.transports.httpx import HttpxTransport

KEY = "sk-send-first-0001-abcdefgh"


class WatchingBackend(MemoryBackend):
    """Notes, when the user's message is written, whether the provider has its request already."""

    def __init__(self, server: MockProviderServer) -> None:
        super().__init__()
        self.server = server
        self.request_before_save: bool | None = None

    async def append_entries(
        self, session_id: str, first_seq: int, lines: Sequence[str], record: dict[str, Any], clear_draft: bool
    ) -> None:
        if self.request_before_save is None and any('"role":"user"' in line for line in lines):
            for _ in range(100):  # up to 1 s for the request to arrive, if it is on its way
                if self.server.requests:
                    break
                await asyncio.sleep(0.01)
            self.request_before_save = bool(self.server.requests)
        await super().append_entries(session_id, first_seq, lines, record, clear_draft)


async def mock_app(server: MockProviderServer, backend: MemoryBackend) -> Any:
    app, _ = await make_app(backend)
    provider = {"name": "Mock", "kind": "openai-compatible", "api": "openai-completions", "baseUrl": f"{server.url}/v1"}
    await call(app, "save_custom_provider", provider={**provider, "models": ["m"]}, discover=False)
    await call(app, "save_key", provider="Mock", key=KEY)
    await call(app, "new_session")
    await call(app, "set_model", provider="Mock", id="m")
    return app


def stored(backend: MemoryBackend, session_id: str) -> list[tuple[str, str]]:
    """(entry type, message role) of each stored entry, in the stored order."""
    entries = [json.loads(line) for line in all_lines(backend, session_id)]
    return [(e["type"], e.get("message", {}).get("role", "")) for e in entries]


PRELUDE = [("custom", ""), ("model_change", ""), ("thinking_level_change", "")]


async def test_the_request_leaves_before_the_users_message_is_saved() -> None:
    with MockProviderServer() as server:
        backend = WatchingBackend(server)
        app = await mock_app(server, backend)
        server.script([{"text": "hello back", "delay_ms": 20}, {"text": "second reply"}])
        assert (await call(app, "send", text="hello"))["status"] == "sent"
        await idle(app)
        assert backend.request_before_save is True
        await call(app, "send", text="again")
        await idle(app)
        assert stored(backend, app.chat.id) == [
            *PRELUDE,
            ("message", "user"),
            ("message", "assistant"),
            ("message", "user"),
            ("message", "assistant"),
        ]
        assert app.chat.state()["unsaved"] == 0


async def test_the_users_message_is_saved_when_the_request_fails() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await mock_app(server, backend)
        body = {"error": {"message": "bad request", "type": "invalid_request_error"}}
        server.script([{"fault": {"type": "http", "status": 400, "body": body}}])
        await call(app, "send", text="this one is kept")
        await idle(app)
        assert len(server.requests) == 1
        assert stored(backend, app.chat.id) == [*PRELUDE, ("message", "user"), ("message", "assistant")]
        user = json.loads(list(all_lines(backend, app.chat.id))[3])["message"]
        assert user["content"][0]["text"] == "this one is kept"
        assert app.chat.state()["unsaved"] == 0


async def test_the_page_is_told_of_the_run_once_its_request_is_on_its_way() -> None:
    """Between Enter and the request the page was sent the session's state four times (the send,
    the run's start, its turn, the user's message) and drew each: now once with the send (the
    composer knows a reply is coming), then the user's message and one state, in that order."""
    with MockProviderServer() as server:
        backend = WatchingBackend(server)
        app, recorder = await make_app(backend)
        provider = {"name": "Mock", "kind": "openai-compatible", "api": "openai-completions"}
        await call(app, "save_custom_provider", provider={**provider, "baseUrl": f"{server.url}/v1", "models": ["m"]})
        await call(app, "save_key", provider="Mock", key=KEY)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock", id="m")
        server.script([{"text": "hello back", "delay_ms": 20}])
        start = len(recorder.events)
        await call(app, "send", text="hello")
        kind, state = recorder.events[start]
        assert kind == "session_state" and state["streaming"] is True
        await idle(app)
        told = recorder.events[start:]
        kinds = [kind for kind, _ in told]
        before_reply = kinds[: kinds.index("stream")]
        assert before_reply.count("session_state") == 2, before_reply
        users = [i for i, (k, p) in enumerate(told) if k == "append" and p["item"]["message"]["role"] == "user"]
        assert len(users) == 1 and users[0] < kinds.index("session_state", 1)
        assert told[kinds.index("session_state", 1)][1]["streaming"] is True
        assert backend.request_before_save is True
        assert stored(backend, app.chat.id) == [*PRELUDE, ("message", "user"), ("message", "assistant")]


class TurnLog:
    """The request, the user's message handed to storage, and the next turn of the loop, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []


class LoggingTransport:
    def __init__(self, log: TurnLog) -> None:
        self.inner = HttpxTransport()
        self.log = log

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpResponse:
        self.log.events.append("request")
        asyncio.get_running_loop().call_soon(self.log.events.append, "next turn")
        return await self.inner.send(request, signal)


class LoggingBackend(MemoryBackend):
    def __init__(self, log: TurnLog) -> None:
        super().__init__()
        self.log = log

    async def append_entries(
        self, session_id: str, first_seq: int, lines: Sequence[str], record: dict[str, Any], clear_draft: bool
    ) -> None:
        if any('"role":"user"' in line for line in lines):
            self.log.events.append("save")
        await super().append_entries(session_id, first_seq, lines, record, clear_draft)


async def test_the_users_message_is_handed_to_storage_in_the_turn_its_request_leaves() -> None:
    """Storage gets the write before the loop turns once after the request: IndexedDB keeps a
    write it was handed even when the page reloads at once; a save queued for a later turn was
    lost by a reload within that turn's wait (tests/browser/test_first_token.py)."""
    log = TurnLog()
    with MockProviderServer() as server:
        app = await mock_app(server, LoggingBackend(log))
        server.script([{"text": "hello back"}, {"text": "again back"}])
        set_default_transport(LoggingTransport(log))
        try:
            await call(app, "send", text="hello")
            await idle(app)
            await call(app, "send", text="again")
            await idle(app)
        finally:
            set_default_transport(None)
        assert log.events == ["request", "save", "next turn"] * 2, log.events
        assert stored(backend_of(app), app.chat.id) == [
            *PRELUDE,
            ("message", "user"),
            ("message", "assistant"),
            ("message", "user"),
            ("message", "assistant"),
        ]


def backend_of(app: Any) -> MemoryBackend:
    backend = app.chat.store.backend
    assert isinstance(backend, MemoryBackend)
    return backend


async def test_a_failure_told_the_request_has_left_does_not_fail_the_request() -> None:
    """``_release`` runs inside the provider's request (SentSignalTransport): what fails there is
    reported as a failed callback was before, and the request goes on."""
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: reported.append(context))

    def fails() -> None:
        raise RuntimeError("a listener's bug")

    try:
        with MockProviderServer() as server:
            server.script([{"text": "fine"}])
            transport = SentSignalTransport(HttpxTransport(), fails)
            request = HttpRequest(
                method="POST",
                url=f"{server.url}/v1/chat/completions",
                headers={"content-type": "application/json", "authorization": f"Bearer {KEY}"},
                body=b'{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}',
            )
            response = await transport.send(request)
            assert b"fine" in await response.aread()
    finally:
        loop.set_exception_handler(None)
    assert [str(context["exception"]) for context in reported] == ["a listener's bug"]
