"""Session-list metadata: incremental updates equal a full recomputation, titles, usage and cost."""

from __future__ import annotations

import statistics
import time
from typing import Any

from session_helpers import assistant, new_session, read_fixture, tool_result, user

from py_agent.ai.types import UserMessage
from py_agent.session import (
    PREVIEW_MAX_CHARS,
    MessageEntry,
    SessionMetadata,
    compute_metadata,
    derive_title,
    import_jsonl,
    message_text,
    new_metadata,
    typed_text,
    update_metadata,
)


def straightforward(session: Any) -> dict[str, Any]:
    """The metadata computed directly from the whole session, without the incremental code."""
    messages = [e.message for e in session if isinstance(e, MessageEntry)]
    assistants = [m for m in messages if m.get("role") == "assistant"]
    totals = {key: 0 for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")}
    costs = {key: 0.0 for key in ("input", "output", "cacheRead", "cacheWrite", "total")}
    for message in assistants:
        for key in totals:
            totals[key] += message["usage"][key]
        for key in costs:
            costs[key] += message["usage"]["cost"][key]
    texts = [" ".join(message_text(m).split()) for m in messages if m.get("role") in ("user", "assistant")]
    first_user = next(
        (" ".join(message_text(m).split()) for m in messages if m["role"] == "user" and message_text(m).strip()), ""
    )
    return {
        "messageCount": len(messages),
        "entryCount": len(session),
        "usage": {**totals, "cost": costs},
        "preview": "\n".join(t for t in texts if t)[:PREVIEW_MAX_CHARS],
        "firstMessage": first_user,
        "title": session.name or derive_title(first_user),
        "created": session.header.timestamp,
        "updated": max(e.timestamp for e in session),
    }


def test_incremental_equals_recomputed_on_a_pi_file() -> None:
    session = import_jsonl(read_fixture("pi_full.jsonl"))
    incremental = new_metadata(session.header)
    for entry in session:
        update_metadata(incremental, entry)
    assert incremental == compute_metadata(session.header, session.entries) == session.metadata
    expected = straightforward(session)
    data = incremental.to_json()
    for key, value in expected.items():
        assert data[key] == value, key
    assert data["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert data["thinkingLevel"] == "medium"
    assert data["name"] is None and data["title"] == "Plan a trip to Lisbon."


def test_incremental_equals_recomputed_while_appending() -> None:
    session = new_session()
    steps = [
        lambda: session.append_model_change("openai", "gpt-5"),
        lambda: session.append_message(user("   ")),
        lambda: session.append_message(user("Hello,\n  world! How are you today?")),
        lambda: session.append_message(assistant("Fine.", tool_call="c1", tokens=(100, 20), cost=0.0001)),
        lambda: session.append_message(tool_result("c1", "tool text is not in the preview")),
        lambda: session.append_message(assistant("Done.", provider="openai", model="gpt-5", tokens=(7, 3), cost=0.25)),
        lambda: session.append_thinking_level_change("high"),
        lambda: session.append_session_info("Greetings"),
        lambda: session.append_message({"role": "custom", "customType": "x", "content": "hidden", "timestamp": 1}),
        lambda: session.append_session_info(""),
    ]
    for step in steps:
        step()
        assert session.metadata == compute_metadata(session.header, session.entries)
    meta = session.metadata
    assert meta.message_count == 6 and meta.entry_count == 10
    assert meta.usage.input == 107 and meta.usage.output == 23 and meta.usage.total_tokens == 130
    assert abs(meta.usage.cost.total - (0.0003 + 0.75)) < 1e-12
    assert meta.preview == "Hello, world! How are you today?\nFine.\nDone."
    assert meta.model is not None and meta.model.model_id == "gpt-5"
    assert meta.thinking_level == "high" and meta.name is None
    assert meta.title == "Hello, world!"
    for key, value in straightforward(session).items():
        assert meta.to_json()[key] == value, key


def test_leaf_moves_are_in_the_metadata() -> None:
    session = new_session()
    a = session.append_message(user("a"))
    b = session.append_message(user("b"))
    assert session.metadata.leaf_id == b.id
    session.branch(a.id)
    assert session.metadata.leaf_id == a.id
    session.reset_leaf()
    assert session.metadata.leaf_id is None


def test_metadata_record_round_trips() -> None:
    session = import_jsonl(read_fixture("pi_full.jsonl"))
    record = session.metadata.to_json()
    assert set(record) >= {"id", "title", "created", "updated", "model", "messageCount", "usage", "preview", "leafId"}
    assert record["usage"]["cost"]["total"] > 0
    assert SessionMetadata.from_json(record) == session.metadata
    newer = {**record, "someFutureField": 1}
    assert SessionMetadata.from_json(newer).to_json()["someFutureField"] == 1


def test_derive_title() -> None:
    assert derive_title("Plan a trip. Then more.") == "Plan a trip."
    assert derive_title("  Why?  Because.") == "Why?"
    assert derive_title(".hidden file question") == ".hidden file question"
    assert derive_title("Fix the bug in app.py please. Thanks") == "Fix the bug in app.py please."
    assert derive_title("a" * 50) == "a" * 50
    assert derive_title("a" * 51) == "a" * 47 + "..."
    assert derive_title("x" * 60 + ". end") == "x" * 47 + "..."
    assert derive_title("line one\n\nline two") == "line one line two"
    assert derive_title("") == ""


def test_preview_and_first_message_are_capped() -> None:
    session = new_session()
    session.append_message(user("u" * 5000))
    for _ in range(10):
        session.append_message(assistant("a" * 1000))
    meta = session.metadata
    assert len(meta.preview) == PREVIEW_MAX_CHARS and len(meta.first_message) == 500
    assert meta == compute_metadata(session.header, session.entries)


def test_appending_the_1000th_message_costs_what_the_10th_does() -> None:
    session = new_session()
    question, answer = user("What next? " * 20), assistant("Something. " * 50)
    durations: list[float] = []
    for index in range(1200):
        started = time.perf_counter()
        entry = session.append_message(question if index % 2 == 0 else answer)
        entry.to_json()
        session.metadata.to_json()
        durations.append(time.perf_counter() - started)
    early = statistics.median(durations[10:110])
    late = statistics.median(durations[1000:1100])
    assert late < early * 3, (early, late)


def test_a_title_comes_from_what_was_typed_not_from_an_attachments_wrapper() -> None:
    doc = {"type": "text", "text": '<file name="uploads/report &quot;q3&quot;.pdf">\nPage one text.\n</file>'}
    image_note = {"type": "text", "text": '<file name="uploads/chart.png"></file>'}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    typed = {"role": "user", "content": [{"type": "text", "text": "doc please. And more"}, doc], "timestamp": 1}
    files_only = {"role": "user", "content": [doc, image_note, image], "timestamp": 2}
    assert typed_text(typed) == "doc please. And more"
    assert typed_text(files_only) == 'report "q3".pdf, chart.png'
    assert typed_text({"role": "user", "content": "plain <file name=x>", "timestamp": 3}) == "plain <file name=x>"

    session = new_session()
    session.append_message(UserMessage.model_validate(typed))
    assert session.metadata.title == "doc please."
    assert "<file" not in session.metadata.preview and "Page one" not in session.metadata.preview
    other = new_session(session_id="01a229fe-0000-7000-8000-000000000002")
    other.append_message(UserMessage.model_validate(files_only))
    assert other.metadata.title == 'report "q3".pdf, chart.png'
    assert other.metadata == compute_metadata(other.header, other.entries)
