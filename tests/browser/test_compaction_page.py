"""Compaction in the page (headless Chromium, the mock provider server): a send past the
threshold asks for a summary first and then sends the summary and the kept messages; the
transcript marks the cut and shows the summary; ``/compact focus on X``; an overflow error
compacts once and retries once; a failing summary leaves the session as it was and says why.
The automatic path in Firefox and WebKit: tests/engines/test_engines.py. The same behaviour in
CPython, in more detail: tests/app/test_compaction_app.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.session.compaction import SUMMARIZATION_SYSTEM_PROMPT
from py_agent.testing.mock_server import MockProviderServer

KEY = "sk-mock-compaction-0001"
BIG = 48_000  # characters: 12,000 tokens by pi's estimate; three of them pass the 20,000 tokens pi keeps
SUMMARY = "## Goal\nThree long messages were sent; FOCUS-MARK."
MODELS = [
    {"id": "small", "name": "Small window", "contextWindow": 40_000, "maxTokens": 4096},
    {"id": "large", "name": "Large window", "contextWindow": 200_000, "maxTokens": 4096},
]


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        app.add_provider("Mock", mock, MODELS, key=KEY)
        yield app


def texts_sent(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out.extend(block["text"] for block in blocks if block.get("type") == "text")
    return out


def entry_types(app: App) -> list[str]:
    """The types of the open session's entries as stored in IndexedDB, in order."""
    session_id = app.current_session_id()
    records = sorted((r for r in app.idb_dump()["entries"] if r["sessionId"] == session_id), key=lambda r: r["seq"])
    return [json.loads(r["line"])["type"] for r in records]


def send_and_wait(app: App, text: str, reply: str) -> None:
    app.type_and_enter(text)
    app.page.locator("#transcript .msg.assistant", has_text=reply).wait_for(timeout=60_000)
    app.wait_idle()


def long_conversation(
    app: App, mock: MockProviderServer, model: str = "Large window", last_input: int = 30_000
) -> None:
    """Three turns of 12,000 tokens each; the last reply reports ``last_input`` input tokens (by
    default past the small model's threshold, 40,000 - 16,384, but not the large one's)."""
    app.new_chat()
    app.choose_model(model.lower(), model)
    mock.reset()
    mock.script(
        [
            {"text": "reply-one", "usage": {"input": 12_100, "output": 5}},
            {"text": "reply-two", "usage": {"input": 20_000, "output": 5}},
            {"text": "reply-three", "usage": {"input": last_input, "output": 5}},
        ]
    )
    for word, reply in (("FIRST", "reply-one"), ("SECOND", "reply-two"), ("THIRD", "reply-three")):
        send_and_wait(app, f"{word} " + "x" * BIG, reply)
    assert len(mock.requests) == 3
    mock.reset()


def test_a_send_past_the_threshold_compacts_first(app: App, mock: MockProviderServer) -> None:
    page = app.page
    long_conversation(app, mock)
    app.choose_model("small window", "Small window")
    mock.script([{"text": SUMMARY, "delay_ms": 60, "chunk_size": 4}, {"text": "fourth answer"}])
    app.type_and_enter("FOURTH question")
    status = page.locator("#compaction-status")
    status.wait_for()
    assert "summarizing the earlier messages" in status.inner_text()
    assert page.locator("#stop-button").is_visible()
    app.wait_idle()
    status.wait_for(state="hidden")

    summary_request, reply_request = (r["body"] for r in mock.requests)
    assert summary_request["system"][0]["text"] == SUMMARIZATION_SYSTEM_PROMPT
    assert texts_sent(summary_request)[0].startswith("<conversation>\n[User]: FIRST ")
    sent = texts_sent(reply_request)
    assert SUMMARY in sent[0] and sent[0].startswith("The conversation history before this point was compacted")
    assert not any(text.startswith("FIRST") for text in sent)
    assert [text.split(" ")[0] for text in sent[1:]] == ["SECOND", "reply-two", "THIRD", "reply-three", "FOURTH"]

    # The transcript keeps every message and marks the cut; the summary opens from its card.
    transcript = page.locator("#transcript")
    assert app.user_texts()[0].startswith("FIRST")
    order = transcript.locator(".msg").evaluate_all(
        "nodes => nodes.map(n => n.classList.contains('compaction') ? 'cut' : n.classList.contains('user') ? 'user' : 'reply')"
    )
    assert order[:4] == ["user", "reply", "cut", "user"]
    assert transcript.locator(".msg.compacted").count() == 2
    card = transcript.locator(".msg.compaction")
    assert "Earlier messages compacted" in card.inner_text()
    assert not card.locator(".compaction-summary").is_visible()
    card.locator("summary", has_text="Summary").click()
    card.locator(".compaction-summary", has_text="FOCUS-MARK").wait_for()
    assert entry_types(app).count("compaction") == 1


def test_compact_command_puts_its_instructions_in_the_request(app: App, mock: MockProviderServer) -> None:
    mock.reset()
    mock.script([{"text": SUMMARY}])
    types_before = entry_types(app)
    app.type_and_enter("/compact focus on X")
    wait_until(lambda: len(entry_types(app)) == len(types_before) + 1, timeout=30)
    app.wait_idle()
    assert len(mock.requests) == 1
    prompt = texts_sent(mock.requests[0]["body"])[0]
    assert prompt.endswith("Additional focus: focus on X")
    assert "<previous-summary>" in prompt  # the earlier summary is updated, not lost
    assert entry_types(app)[-1] == "compaction"
    assert app.page.locator("#input").input_value() == ""


def test_an_overflow_compacts_once_and_retries_once(app: App, mock: MockProviderServer) -> None:
    long_conversation(app, mock, "Small window", last_input=100)  # below the threshold: no compaction yet
    overflow = {"type": "http", "status": 400, "message": "prompt is too long: 41000 tokens > 40000 maximum"}
    mock.script([{"fault": overflow}, {"text": SUMMARY}, {"text": "answer after the retry"}])
    app.type_and_enter("FOURTH question")
    app.page.locator("#transcript .msg.assistant", has_text="answer after the retry").wait_for(timeout=60_000)
    app.wait_idle()
    bodies = [r["body"] for r in mock.requests]
    assert len(bodies) == 3
    assert texts_sent(bodies[1])[0].startswith("<conversation>\n[User]: FIRST ")
    retried = texts_sent(bodies[2])
    assert retried[0].startswith("The conversation history before this point was compacted")
    assert retried[-1] == "FOURTH question"


def test_a_failing_summary_leaves_the_session_unchanged(app: App, mock: MockProviderServer) -> None:
    page = app.page
    long_conversation(app, mock)
    types_before = entry_types(app)
    user_texts_before = app.user_texts()
    mock.script([{"fault": {"type": "http", "status": 500, "message": "summary service down"}, "repeat": 6}])
    page.locator("#session-menu-btn").click()
    page.locator("#session-menu button", has_text="Compact").click()
    dialog = page.locator("dialog[open]")
    dialog.locator("input").fill("keep the numbers")
    dialog.locator("button", has_text="Compact").click()
    toast = page.locator("#toasts .toast", has_text="Compaction failed")
    toast.wait_for(timeout=60_000)
    assert "summary service down" in toast.inner_text() and "unchanged" in toast.inner_text()
    app.wait_idle()
    assert "keep the numbers" in texts_sent(mock.requests[0]["body"])[0]
    assert entry_types(app) == types_before
    assert app.user_texts() == user_texts_before
    assert page.locator("#transcript .msg.compaction").count() == 0


def test_the_version_left_can_be_summarized_here(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("small window", "Small window")
    mock.reset()
    mock.script([{"text": "Answer to X."}, {"text": "Answer to Y."}, {"text": "## Goal\nX was tried: BRANCH-MARK."}])
    send_and_wait(app, "try X", "Answer to X.")
    user = page.locator("#transcript .msg.user").first
    user.hover()
    user.locator(".edit-msg").click()
    user.locator(".edit-area").fill("try Y instead")
    user.locator(".edit-area").press("Enter")
    page.locator("#transcript .msg.assistant", has_text="Answer to Y.").wait_for()
    app.wait_idle()
    page.locator("#session-menu-btn").click()
    assert page.locator("#summarize-left").is_disabled()  # no version left yet
    page.keyboard.press("Escape")
    switcher = page.locator("#transcript .msg.user .branch")
    switcher.locator("button[aria-label='Previous version']").click()
    page.locator("#transcript .msg.assistant", has_text="Answer to X.").wait_for()
    switcher.locator("button[aria-label='Next version']").click()
    page.locator("#transcript .msg.assistant", has_text="Answer to Y.").wait_for()
    page.locator("#session-menu-btn").click()
    page.locator("#summarize-left").click()
    dialog = page.locator("dialog[open]")
    dialog.locator("button", has_text="Summarize").click()
    page.locator("#transcript .msg.note", has_text="BRANCH-MARK").wait_for(timeout=60_000)
    app.wait_idle()
    prompt = texts_sent(mock.requests[-1]["body"])[0]
    assert "[User]: try X" in prompt and "try Y" not in prompt
    assert entry_types(app)[-1] == "branch_summary"
