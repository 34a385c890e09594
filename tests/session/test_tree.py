"""The session tree: appending, ids, branching, paths, labels, names and context building."""

from __future__ import annotations

import re

import pytest
from session_helpers import CountingIds, RepeatingIds, assistant, context_json, new_session, tool_result, user

from py_agent.session import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    CompactionEntry,
    EntryNotFound,
    LabelEntry,
    MessageEntry,
    ModelRef,
    Session,
    SessionHeader,
    UnknownEntry,
    build_session_context,
    convert_to_llm,
)

HEX8 = re.compile(r"^[0-9a-f]{8}$")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_new_session_header() -> None:
    session = Session.create()
    header = session.header.to_json()
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == "/"
    assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", header["id"])
    assert ISO.match(header["timestamp"])
    assert len(session) == 0 and session.leaf_id is None and session.build_context().messages == []
    forked = Session.create(parent_session="abc", cwd="/w")
    assert forked.header.to_json()["parentSession"] == "abc"


def test_append_links_each_entry_to_the_leaf() -> None:
    session = Session.create()
    entries = [
        session.append_model_change("openai", "gpt-5"),
        session.append_thinking_level_change("high"),
        session.append_message(user("hi")),
        session.append_message(assistant("hello")),
    ]
    assert [e.parent_id for e in entries] == [None, entries[0].id, entries[1].id, entries[2].id]
    assert session.leaf_id == entries[-1].id and session.leaf is entries[-1]
    for entry in entries:
        assert HEX8.match(entry.id) and ISO.match(entry.timestamp)
        assert session[entry.id] is entry and entry.id in session


def test_ids_are_unique_even_when_candidates_collide() -> None:
    session = new_session(id_generator=RepeatingIds())
    ids = [session.append_message(user(str(i))).id for i in range(5)]
    assert ids[0] == "deadbeef"
    assert len(set(ids)) == 5
    assert all(len(i) == 36 for i in ids[1:])  # pi's fallback: a full UUID

    many = Session.create()
    all_ids = {many.append_custom("x").id for _ in range(3000)}
    assert len(all_ids) == 3000 and all(HEX8.match(i) for i in all_ids)


def test_append_refuses_a_duplicate_id() -> None:
    session = new_session()
    entry = session.append_message(user("a"))
    with pytest.raises(ValueError, match="duplicate"):
        session.append(entry)


def test_editing_an_earlier_user_message_starts_a_branch() -> None:
    session = new_session()
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    first = session.append_message(user("first question"))
    answer = session.append_message(assistant("first answer"))
    second = session.append_message(user("second question"))
    second_answer = session.append_message(assistant("second answer"))

    session.branch_before(second.id)  # edit the second question and resend
    assert session.leaf_id == answer.id
    edited = session.append_message(user("second question, edited"))
    edited_answer = session.append_message(assistant("another answer"))
    assert edited.parent_id == answer.id

    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in session.build_context().messages
    ]
    assert texts == ["first question", "first answer", "second question, edited", "another answer"]
    assert [e.id for e in session.siblings(edited.id)] == [second.id, edited.id]
    assert [e.id for e in session.leaves()] == [second_answer.id, edited_answer.id]

    # Switch back to the first version, then forward again.
    session.branch(session.latest_leaf(second.id))
    assert session.leaf_id == second_answer.id
    assert [m["role"] for m in session.build_context().messages] == ["user", "assistant", "user", "assistant"]
    assert session.path()[-2] is second
    session.branch(session.latest_leaf(edited.id))
    assert session.leaf_id == edited_answer.id

    # Editing the very first message makes a second root.
    session.branch_before(session.path()[0].id)
    assert session.leaf_id is None
    root2 = session.append_message(user("start over"))
    assert root2.parent_id is None
    assert [e.id for e in session.children(None)] == [session.entries[0].id, root2.id]
    assert session.build_context().messages == [root2.message]
    assert session.latest_leaf(first.id) == edited_answer.id


def test_path_is_root_first_and_stops_at_damage() -> None:
    session = new_session()
    a = session.append_message(user("a"))
    b = session.append_message(assistant("b"))
    c = session.append_message(user("c"))
    assert session.path() == [a, b, c]
    assert session.path(b.id) == [a, b]
    assert session.path(None) == []
    with pytest.raises(EntryNotFound, match="Entry nope not found"):
        session.path("nope")
    with pytest.raises(KeyError):
        session.branch("nope")
    with pytest.raises(KeyError):
        session.append_label("nope", "x")
    # A cycle and a missing parent (only in damaged files) end the walk instead of looping.
    header = SessionHeader(version=3, id="s", timestamp="t", cwd="/")
    x = UnknownEntry(type="x", id="x", parent_id="y", timestamp="t")
    y = UnknownEntry(type="x", id="y", parent_id="x", timestamp="t")
    orphan = UnknownEntry(type="x", id="z", parent_id="missing", timestamp="t")
    damaged = Session(header, [x, y, orphan])
    assert [e.id for e in damaged.path("y")] == ["x", "y"]
    assert [e.id for e in damaged.path("z")] == ["z"]
    assert [node.entry.id for node in damaged.tree()] == ["z"]  # x and y only point at each other
    assert damaged.latest_leaf("x") == "x"


def test_tree() -> None:
    session = new_session()
    a = session.append_message(user("a"))
    b = session.append_message(assistant("b"))
    session.branch(a.id)
    c = session.append_message(assistant("c"))
    session.append_label(b.id, "keep")
    roots = session.tree()
    assert len(roots) == 1 and roots[0].entry is a
    assert [child.entry for child in roots[0].children] == [b, c]
    assert roots[0].children[0].label == "keep"


def test_labels_set_and_clear() -> None:
    session = new_session()
    a = session.append_message(user("a"))
    session.append_label(a.id, "first")
    assert session.label(a.id) == "first"
    session.append_label(a.id, "renamed")
    assert session.labels == {a.id: "renamed"}
    cleared = session.append_label(a.id, None)
    assert "label" not in cleared.to_json()
    assert session.label(a.id) is None
    session.append_label(a.id, "again")
    session.append_label(a.id, "")
    assert session.labels == {}
    # Label entries are on the path but contribute nothing to the context.
    assert [m["role"] for m in session.build_context().messages] == ["user"]


def test_session_name() -> None:
    session = new_session()
    session.append_message(user("What is the capital of France? Answer briefly."))
    assert session.name is None and session.title == "What is the capital of France?"
    info = session.append_session_info("  Geography\nquiz \r\n")
    assert info.name == "Geography quiz"
    assert session.name == "Geography quiz" and session.title == "Geography quiz"
    session.set_name("")
    assert session.name is None and session.title == "What is the capital of France?"


def test_thinking_level_and_model_follow_the_path() -> None:
    session = new_session()
    assert session.build_context().thinking_level == "off" and session.build_context().model is None
    session.append_model_change("openai", "gpt-5")
    level = session.append_thinking_level_change("high")
    assert session.build_context().model == ModelRef(provider="openai", model_id="gpt-5")
    session.append_message(user("q"))
    session.append_message(assistant("a", provider="anthropic", model="claude-opus-4"))
    context = session.build_context()
    assert context.thinking_level == "high"
    assert context.model is not None and context.model.model_dump() == {
        "provider": "anthropic",
        "modelId": "claude-opus-4",
    }
    session.branch(level.id)
    session.append_thinking_level_change("low")
    context = session.build_context()
    assert context.thinking_level == "low" and context.model == ModelRef(provider="openai", model_id="gpt-5")


def test_compaction_context() -> None:
    session = new_session()
    session.append_message(user("one"))
    session.append_message(assistant("two"))
    kept = session.append_message(user("three"))
    session.append_message(assistant("four"))
    compaction = session.append_compaction("one and two happened", kept.id, 5000)
    after = session.append_message(user("five"))
    messages = session.build_context().messages
    assert messages[0] == {
        "role": "compactionSummary",
        "summary": "one and two happened",
        "tokensBefore": 5000,
        "timestamp": 1_796_000_523_461,  # the compaction entry's timestamp, in ms
    }
    assert compaction.timestamp == "2026-11-30T01:02:03.461Z"
    assert messages[1:] == [kept.message, session.entries[3].message, after.message]

    # A second compaction replaces the first (only the last one on the path counts).
    session.append_compaction("all of it", after.id, 9000)
    session.append_message(assistant("six"))
    messages = session.build_context().messages
    assert [m.get("summary") for m in messages[:1]] == ["all of it"]
    assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant"]

    # A kept id that is not on the path keeps nothing before the compaction.
    other = new_session()
    other.append_message(user("x"))
    other.append_compaction("s", "not-on-path", 1)
    other.append_message(user("y"))
    assert [m["role"] for m in other.build_context().messages] == ["compactionSummary", "user"]

    llm = convert_to_llm(session.build_context().messages)
    assert llm[0].role == "user"
    assert llm[0].content[0].text == COMPACTION_SUMMARY_PREFIX + "all of it" + COMPACTION_SUMMARY_SUFFIX  # type: ignore[union-attr]


def test_branch_summary_context() -> None:
    session = new_session()
    q = session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.append_message(user("tangent"))
    summary = session.branch_with_summary(q.id, "We explored a tangent.", details={"files": ["x"]}, from_hook=True)
    assert summary.parent_id == q.id and summary.from_id == q.id and session.leaf_id == summary.id
    assert summary.to_json()["details"] == {"files": ["x"]} and summary.from_hook is True
    session.append_message(user("back on track"))
    messages = session.build_context().messages
    assert [m["role"] for m in messages] == ["user", "branchSummary", "user"]
    assert messages[1] == {
        "role": "branchSummary",
        "summary": "We explored a tangent.",
        "fromId": q.id,
        "timestamp": messages[1]["timestamp"],
    }
    assert convert_to_llm(messages)[1].content[0].text.startswith(BRANCH_SUMMARY_PREFIX)  # type: ignore[union-attr]

    root_summary = session.branch_with_summary(None, "Started over.")
    assert root_summary.parent_id is None and root_summary.from_id == "root"
    assert "details" not in root_summary.to_json() and "fromHook" not in root_summary.to_json()
    empty = session.branch_with_summary(q.id, "")
    assert [m["role"] for m in session.build_context(empty.id).messages] == ["user"]  # empty summaries add nothing


def test_custom_messages_and_custom_entries_in_context() -> None:
    session = new_session()
    session.append_custom("state", {"a": 1})
    note = session.append_custom_message("note", "Remember X.", display=False, details={"src": "ext"})
    session.append_custom_message("blocks", [{"type": "text", "text": "B"}])
    session.append_message({"role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 0, "timestamp": 5})
    messages = session.build_context().messages
    assert messages[0] == {
        "role": "custom",
        "customType": "note",
        "content": "Remember X.",
        "display": False,
        "details": {"src": "ext"},
        "timestamp": 1_796_000_523_458,
    }
    assert note.to_json()["display"] is False
    assert messages[1]["content"] == [{"type": "text", "text": "B"}] and "details" not in messages[1]
    assert messages[2]["role"] == "bashExecution"
    llm = convert_to_llm(messages)
    assert [m.role for m in llm] == ["user", "user", "user"]
    assert llm[2].content[0].text == "Ran `ls`\n```\na.txt\n```"  # type: ignore[union-attr]


def test_system_prompt_is_kept_per_path() -> None:
    session = new_session()
    first = session.append_system_prompt("Be brief.")
    assert first.to_json()["data"] == {"systemPrompt": "Be brief."}
    session.append_message(user("q"))
    assert session.build_context().system_prompt == "Be brief."
    session.append_system_prompt("Be thorough.")
    assert session.build_context().system_prompt == "Be thorough."
    assert session.build_context(first.id).system_prompt == "Be brief."
    assert session.build_context().messages == [session.entries[1].message]  # not a model message


def test_context_messages_restore_an_agent() -> None:
    session = new_session()
    originals = [user("q"), assistant("a", tool_call="c1"), tool_result("c1", "r")]
    for message in originals:
        session.append_message(message)
    session.append_message({"role": "note", "text": "custom role"})
    restored = session.build_context().agent_messages()
    assert restored[:3] == originals
    assert restored[3] == {"role": "note", "text": "custom role"}


def test_fork_keeps_only_the_path_and_its_labels() -> None:
    session = new_session()
    a = session.append_message(user("a"))
    b = session.append_message(assistant("b"))
    session.append_label(a.id, "start")
    session.branch(a.id)
    c = session.append_message(assistant("c"))
    session.append_label(c.id, "alt")
    forked = session.fork(b.id)
    assert forked.header.parent_session == session.id and forked.id != session.id
    kept = [e for e in forked if not isinstance(e, LabelEntry)]
    assert kept == [a, b]
    labels = [e for e in forked if isinstance(e, LabelEntry)]
    assert [(e.target_id, e.label, e.parent_id) for e in labels] == [(a.id, "start", b.id)]
    assert forked.labels == {a.id: "start"}
    assert context_json(forked.build_context()) == context_json(session.build_context(b.id))


def test_build_session_context_is_pure_over_a_path() -> None:
    session = new_session(id_generator=CountingIds())
    session.append_message(user("x"))
    compaction = session.append_compaction("s", "00000001", 3)
    assert isinstance(compaction, CompactionEntry)
    context = build_session_context(session.path())
    assert [m["role"] for m in context.messages] == ["compactionSummary", "user"]
    assert isinstance(session.entries[0], MessageEntry)
