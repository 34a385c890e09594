"""Compaction in the app (CPython, WebApp + ChatSession over the in-memory backend, the mock
provider server): automatic before a send, ``/compact [instructions]``, the overflow's one
compact-and-retry, Stop, a failing summary, and what the transcript and the export show.
The page itself: tests/browser/test_compaction_page.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from app_helpers import call, idle

from py_agent.app.compacting import OVERFLOW_RETRY_FAILED, compact_command
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.session.compaction import SUMMARIZATION_SYSTEM_PROMPT
from py_agent.testing.mock_server import MockProviderServer

WINDOW = 40_000  # threshold: 40,000 - 16,384 (pi's reserve) = 23,616 tokens
BIG = 50_000  # characters: 12,500 tokens by pi's estimate; three of them pass pi's 20,000 kept tokens
SUMMARY = "## Goal\nThe user sent three long messages."


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.items.append((kind, json.loads(payload)))

    def notices(self) -> list[str]:
        return [p["text"] for k, p in self.items if k == "notice"]

    def compacting(self) -> list[Any]:
        return [p.get("compacting") for k, p in self.items if k == "session_state"]


@pytest.fixture
async def setup() -> AsyncIterator[tuple[WebApp, Events, MockProviderServer, MemoryBackend]]:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        events = Events()
        app = WebApp(backend, MemoryTabStore(), events, demo_tokens_per_second=0, plugins=[])
        await app.start()
        provider = {
            "name": "Mock",
            "kind": "openai-compatible",
            "api": "anthropic-messages",
            "baseUrl": server.url,
            "models": [
                {"id": "small", "contextWindow": WINDOW, "maxTokens": 4096},
                {"id": "large", "contextWindow": 200_000, "maxTokens": 4096},
            ],
        }
        await call(app, "save_custom_provider", provider=provider, discover=False)
        await call(app, "save_key", provider="Mock", key="sk-mock-key-1234", remember=True)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock", id="small")
        yield app, events, server, backend


def user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(block.get("text", "") for block in content if block.get("type") == "text")
    return texts


def three_replies(last_input: int) -> list[dict[str, Any]]:
    return [
        {"text": "one", "usage": {"input": 12_600, "output": 5}},
        {"text": "two", "usage": {"input": 20_000, "output": 5}},
        {"text": "three", "usage": {"input": last_input, "output": 5}},
    ]


async def three_long_turns(app: WebApp, server: MockProviderServer, last_input: int = 100) -> None:
    """Three turns of 12,500 tokens each (by pi's estimate); the last reply reports ``last_input``."""
    server.script(three_replies(last_input))
    for word in ("FIRST", "SECOND", "THIRD"):
        assert (await call(app, "send", text=f"{word} " + "x" * BIG))["status"] == "sent"
        await idle(app)
    server.reset()


async def test_a_send_past_the_threshold_first_compacts(setup: Any) -> None:
    """The context passed the threshold of the model now chosen: the send asks for a summary first."""
    app, events, server, backend = setup
    await call(app, "set_model", provider="Mock", id="large")
    await three_long_turns(app, server, last_input=30_000)  # below the large model's threshold
    assert not any(events.compacting())
    await call(app, "set_model", provider="Mock", id="small")
    server.script([{"text": SUMMARY}, {"text": "fourth answer"}])
    await call(app, "send", text="FOURTH question")
    await idle(app)

    summary_request, reply_request = (r["body"] for r in server.requests)
    assert summary_request["system"][0]["text"] == SUMMARIZATION_SYSTEM_PROMPT
    prompt = user_texts(summary_request)[0]
    assert prompt.startswith("<conversation>\n[User]: FIRST ") and "[Assistant]: one" in prompt
    assert "SECOND" not in prompt  # kept, not summarized
    assert summary_request["max_tokens"] == 4096  # min(0.8 * 16,384, the model's max tokens)

    sent = user_texts(reply_request)
    assert sent[0].startswith("The conversation history before this point was compacted")
    assert SUMMARY in sent[0]
    assert not any(text.startswith("FIRST") for text in sent)
    assert [text.split(" ")[0] for text in sent[1:]] == ["SECOND", "two", "THIRD", "three", "FOURTH"]
    assert "threshold" in events.compacting()

    # The transcript keeps every message; the cut is marked with the summary's card.
    items = app.chat.transcript()
    kinds = ["card" if "compaction" in i else i["message"]["role"] for i in items]
    assert kinds == ["user", "assistant", "card", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert [bool(i.get("compacted")) for i in items[:3]] == [True, True, False]
    assert items[2]["compaction"]["summary"] == SUMMARY

    # Nothing is deleted: the stored session and the export hold the first message and the entry.
    lines = [json.loads(line) for line in all_lines(backend, app.chat.id)]
    assert [e["type"] for e in lines].count("compaction") == 1
    exported = (await call(app, "export_session"))["text"]
    assert "FIRST " in exported and '"type":"compaction"' in exported


async def test_a_reply_past_the_threshold_compacts_after_its_run(setup: Any) -> None:
    """pi checks after every run too: the summary is made at once, and the next send carries it."""
    app, events, server, _ = setup
    server.script([*three_replies(30_000), {"text": SUMMARY}, {"text": "fourth answer"}])
    for word in ("FIRST", "SECOND", "THIRD"):
        await call(app, "send", text=f"{word} " + "x" * BIG)
        await idle(app)
    assert len(server.requests) == 4
    assert user_texts(server.requests[3]["body"])[0].startswith("<conversation>\n[User]: FIRST")
    assert "threshold" in events.compacting()
    await call(app, "send", text="FOURTH question")
    await idle(app)
    sent = user_texts(server.requests[4]["body"])
    assert SUMMARY in sent[0] and not any(text.startswith("FIRST") for text in sent)


async def test_below_the_threshold_nothing_is_compacted(setup: Any) -> None:
    app, events, server, _ = setup
    await three_long_turns(app, server, last_input=23_000)
    server.script([{"text": "fourth answer"}])
    await call(app, "send", text="FOURTH question")
    await idle(app)
    assert len(server.requests) == 1
    assert user_texts(server.requests[0]["body"])[0].startswith("FIRST")
    assert not any(events.compacting())


async def test_compact_command_with_instructions(setup: Any) -> None:
    app, events, server, backend = setup
    await three_long_turns(app, server)
    assert compact_command("/compact focus on X") == "focus on X"
    assert compact_command("/compacting") is None
    assert (await call(app, "check_send", text="/compact focus on X"))["over"] is False
    server.script([{"text": SUMMARY}])
    assert (await call(app, "send", text="/compact focus on X"))["status"] == "sent"
    await idle(app)
    assert len(server.requests) == 1
    prompt = user_texts(server.requests[0]["body"])[0]
    assert prompt.endswith("Additional focus: focus on X")
    types = [json.loads(line)["type"] for line in all_lines(backend, app.chat.id)]
    assert types[-1] == "compaction"
    assert "manual" in events.compacting()
    # Straight after, there is nothing new to compact.
    await call(app, "compact")
    await idle(app)
    assert events.notices()[-1] == "Already compacted."


async def test_overflow_compacts_once_and_retries_once(setup: Any) -> None:
    app, events, server, _ = setup
    await three_long_turns(app, server)
    too_long = {"fault": {"type": "http", "status": 400, "message": "prompt is too long: 45000 tokens > 40000 maximum"}}
    server.script([too_long, {"text": SUMMARY}, {"text": "answer after the retry"}])
    await call(app, "send", text="FOURTH question")
    await idle(app)
    bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 3
    assert user_texts(bodies[1])[0].startswith("<conversation>")
    retried = user_texts(bodies[2])
    assert retried[0].startswith("The conversation history before this point was compacted")
    assert retried[-1] == "FOURTH question"
    items = app.chat.transcript()
    assert items[-1]["message"]["content"][0]["text"] == "answer after the retry"
    assert "overflow" in events.compacting()

    # A second overflow right after the retry is not compacted again: it says why.
    server.reset()
    server.script([too_long, {"text": SUMMARY}, too_long])
    await call(app, "send", text="FIFTH " + "x" * BIG)  # so that there is something before the cut again
    await idle(app)
    assert len(server.requests) == 3
    assert events.notices()[-1] == OVERFLOW_RETRY_FAILED


async def test_a_failing_summary_leaves_the_session_unchanged(setup: Any) -> None:
    app, events, server, backend = setup
    await three_long_turns(app, server)
    before = list(all_lines(backend, app.chat.id))
    context_before = app.chat.agent.state.messages
    server.script([{"fault": {"type": "http", "status": 500, "message": "summary service down"}}] * 4)
    await call(app, "compact")
    await idle(app)
    assert list(all_lines(backend, app.chat.id)) == before
    assert app.chat.agent.state.messages == context_before
    assert events.notices()[-1].startswith("Compaction failed: Summarization failed:")
    assert "summary service down" in events.notices()[-1] and "unchanged" in events.notices()[-1]
    assert app.chat.state()["compacting"] is None


async def test_stop_cancels_a_running_summary(setup: Any) -> None:
    app, events, server, backend = setup
    await three_long_turns(app, server)
    before = list(all_lines(backend, app.chat.id))
    server.script([{"text": SUMMARY, "delay_ms": 200, "chunk_size": 1}])
    await call(app, "compact", instructions="")
    for _ in range(200):
        if app.chat.state()["compacting"] == "manual" and server.requests:
            break
        await asyncio.sleep(0.01)
    assert app.chat.streaming  # the page shows Stop
    await call(app, "abort")
    await idle(app)
    assert list(all_lines(backend, app.chat.id)) == before
    assert events.notices()[-1] == "Compaction stopped: the session is unchanged."


async def test_an_early_length_stop_with_a_full_window_compacts_and_retries(setup: Any) -> None:
    app, events, server, _ = setup
    await three_long_turns(app, server)
    full = {"text": "", "stop_reason": "length", "usage": {"input": 39_800, "output": 0}}
    server.script([full, {"text": SUMMARY}, {"text": "answer after the retry"}])
    await call(app, "send", text="FOURTH question")
    await idle(app)
    bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 3
    assert user_texts(bodies[1])[0].startswith("<conversation>")
    retried = bodies[2]["messages"]
    assert retried[-1]["role"] == "user" and user_texts(bodies[2])[-1] == "FOURTH question"
    assert app.chat.transcript()[-1]["message"]["content"][0]["text"] == "answer after the retry"
    assert "overflow" in events.compacting()


async def test_nothing_before_the_cut_means_no_automatic_compaction(setup: Any) -> None:
    """Past the threshold, but the whole conversation is within the kept tokens: no summary request."""
    app, events, server, backend = setup
    server.script([{"text": "short reply", "usage": {"input": 39_000, "output": 5}}, {"text": "again"}])
    await call(app, "send", text="a short question")
    await idle(app)
    await call(app, "send", text="another")
    await idle(app)
    assert len(server.requests) == 2
    assert not any(events.compacting())
    assert "compaction" not in [json.loads(line)["type"] for line in all_lines(backend, app.chat.id)]


async def test_the_version_left_can_be_summarized_into_the_current_one(setup: Any) -> None:
    """pi's tree navigation with a summary: after switching versions, the one left is summarized here."""
    app, events, server, backend = setup
    server.script([{"text": "first answer"}, {"text": "answer to the edit"}, {"text": "## Goal\nTried X."}])
    await call(app, "send", text="try X")
    await idle(app)
    first = app.chat.transcript()[0]["entryId"]
    await call(app, "edit", entry_id=first, text="try Y instead")
    await idle(app)
    assert app.chat.state()["leftBranch"] is False  # nothing left yet: the edit made a new version
    await call(app, "switch_branch", entry_id=first)  # back to "try X" ...
    await call(app, "switch_branch", entry_id=app.chat.transcript()[0]["branch"]["ids"][1])  # ... and to "try Y"
    assert app.chat.state()["leftBranch"] is True
    await call(app, "summarize_left_branch", instructions="what failed")
    await idle(app)
    prompt = user_texts(server.requests[-1]["body"])[0]
    assert "[User]: try X" in prompt and "[Assistant]: first answer" in prompt and "try Y" not in prompt
    assert prompt.endswith("Additional focus: what failed")
    lines = [json.loads(line) for line in all_lines(backend, app.chat.id)]
    assert lines[-1]["type"] == "branch_summary" and "Tried X." in lines[-1]["summary"]
    items = app.chat.transcript()
    assert items[-1]["message"]["role"] == "branchSummary"
    assert app.chat.state()["leftBranch"] is False
    # The next request carries it.
    server.script([{"text": "ok"}])
    await call(app, "send", text="go on")
    await idle(app)
    sent = user_texts(server.requests[-1]["body"])
    assert any(text.startswith("The following is a summary of a branch") and "Tried X." in text for text in sent)
    assert "branch" in events.compacting()
