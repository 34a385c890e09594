"""Entry models: pi's camelCase JSON, key order, optional fields, unknown types and fields kept."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from py_agent.session import (
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    EntryError,
    LabelEntry,
    MessageEntry,
    SessionHeader,
    UnknownEntry,
    UsageEntry,
    entry_from_json,
    header_from_json,
    json_stringify,
)

BASE = {"id": "a1b2c3d4", "parentId": None, "timestamp": "2026-11-30T01:02:03.456Z"}


def test_each_type_writes_pi_key_order() -> None:
    # The orders pi's SessionManager writes (see fixtures/pi_full.jsonl, written by pi itself).
    cases = [
        {"type": "message", **BASE, "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "thinking_level_change", **BASE, "thinkingLevel": "high"},
        {"type": "model_change", **BASE, "provider": "openai", "modelId": "gpt-5"},
        {
            "type": "compaction",
            **BASE,
            "summary": "s",
            "firstKeptEntryId": "x",
            "tokensBefore": 5,
            "details": {"a": 1},
            "fromHook": True,
        },
        {"type": "branch_summary", **BASE, "fromId": "root", "summary": "s", "details": [1], "fromHook": False},
        {"type": "custom", "customType": "ext", "data": {"k": 1}, **BASE},
        {"type": "custom_message", "customType": "ext", "content": "c", "display": True, "details": 1, **BASE},
        {"type": "label", **BASE, "targetId": "x", "label": "bookmark"},
        {"type": "session_info", **BASE, "name": "Title"},
    ]
    for data in cases:
        entry, problem = entry_from_json(data)
        assert problem is None
        assert type(entry) is not UnknownEntry, data["type"]
        assert list(entry.to_json()) == list(data), data["type"]
        assert entry.to_json() == data
        assert entry.model_dump() == data
        assert json_stringify(entry.to_json()) == json_stringify(data)


def test_unset_optional_fields_are_left_out_and_none_is_null() -> None:
    entry = CompactionEntry(
        id="a", parent_id=None, timestamp="t", summary="s", first_kept_entry_id="b", tokens_before=3
    )
    assert entry.to_json() == {
        "type": "compaction",
        "id": "a",
        "parentId": None,
        "timestamp": "t",
        "summary": "s",
        "firstKeptEntryId": "b",
        "tokensBefore": 3,
    }
    custom = CustomEntry(custom_type="x", data=None, id="a", parent_id="p", timestamp="t")
    assert custom.to_json() == {
        "type": "custom",
        "customType": "x",
        "data": None,
        "id": "a",
        "parentId": "p",
        "timestamp": "t",
    }
    label = LabelEntry(id="a", parent_id="p", timestamp="t", target_id="b")
    assert "label" not in label.to_json()


def test_unknown_fields_are_kept_after_known_ones() -> None:
    data = {
        "type": "compaction",
        **BASE,
        "summary": "s",
        "firstKeptEntryId": "x",
        "tokensBefore": 9,
        "usage": {"input": 1},
    }
    data["systemMessage"] = {"role": "system"}
    data["parent_id"] = "not the parentId"
    entry, problem = entry_from_json(data)
    assert isinstance(entry, CompactionEntry) and problem is None
    assert entry.parent_id is None
    assert entry.to_json() == data


def test_unknown_types_are_kept_unchanged() -> None:
    for data in [
        {"type": "leaf", **BASE, "targetId": None},
        {"type": "active_tools_change", **BASE, "activeToolNames": ["read"]},
    ]:
        entry, problem = entry_from_json(data)
        assert isinstance(entry, UnknownEntry) and problem is None
        assert entry.type == data["type"]
        assert entry.to_json() == data and list(entry.to_json()) == list(data)


def test_pi_1x_entries_are_read_in_pi_key_order() -> None:
    usage = {"type": "usage", **BASE, "kind": "cache_warm", "provider": "p", "model": "m", "usage": {"input": 1}}
    edit = {"type": "context_edit", **BASE, "targetId": "x", "replacement": None}
    replace = {**edit, "replacement": {"content": "shorter"}}
    cases = [(usage, UsageEntry), ({**usage, "note": "n"}, UsageEntry), (edit, ContextEditEntry)]
    for data, cls in [*cases, (replace, ContextEditEntry)]:
        entry, problem = entry_from_json(data)
        assert type(entry) is cls and problem is None
        assert entry.to_json() == data and list(entry.to_json()) == list(data)
    assert ContextEditEntry.model_validate(edit, by_alias=True).replacement is None
    # pi's appendCompaction writes details, usage, fromHook, systemMessage in this order.
    compaction = {
        "type": "compaction",
        **BASE,
        "summary": "s",
        "firstKeptEntryId": "x",
        "tokensBefore": 9,
        "details": {},
        "usage": {"input": 1},
        "fromHook": False,
        "systemMessage": {"role": "system", "content": "", "timestamp": 1},
    }
    entry, _ = entry_from_json(compaction)
    assert isinstance(entry, CompactionEntry) and entry.system_message == compaction["systemMessage"]
    assert list(entry.to_json()) == list(compaction)
    broken, problem = entry_from_json({**edit, "replacement": "text"})
    assert isinstance(broken, UnknownEntry) and problem and "context_edit" in problem


def test_known_type_with_invalid_fields_is_kept_as_unknown_with_a_reason() -> None:
    data = {"type": "model_change", **BASE, "provider": 42, "modelId": "m"}
    entry, problem = entry_from_json(data)
    assert isinstance(entry, UnknownEntry)
    assert problem is not None and "model_change" in problem and "provider" in problem
    assert entry.to_json() == data
    with pytest.raises(EntryError):
        entry_from_json(data, lenient=False)


def test_json_values_are_never_coerced() -> None:
    # Strict: a string is not a number, 1 is not a boolean.
    entry, problem = entry_from_json(
        {"type": "compaction", **BASE, "summary": "s", "firstKeptEntryId": "x", "tokensBefore": "5"}
    )
    assert isinstance(entry, UnknownEntry) and problem
    entry, problem = entry_from_json(
        {"type": "custom_message", **BASE, "customType": "c", "content": "x", "display": 1}
    )
    assert isinstance(entry, UnknownEntry) and problem
    entry, problem = entry_from_json(
        {"type": "compaction", **BASE, "summary": "s", "firstKeptEntryId": "x", "tokensBefore": 5.5}
    )
    assert isinstance(entry, CompactionEntry) and entry.tokens_before == 5.5


def test_base_fields_are_required() -> None:
    for broken in [
        {"id": "a", "parentId": None, "timestamp": "t"},
        {"type": 3, "id": "a", "parentId": None, "timestamp": "t"},
        {"type": "custom", "parentId": None, "timestamp": "t", "customType": "x"},
        {"type": "custom", "id": "", "parentId": None, "timestamp": "t", "customType": "x"},
        {"type": "custom", "id": "a", "timestamp": "t", "customType": "x"},
        {"type": "custom", "id": "a", "parentId": 7, "timestamp": "t", "customType": "x"},
        {"type": "custom", "id": "a", "parentId": None, "customType": "x"},
    ]:
        with pytest.raises(EntryError):
            entry_from_json(broken)
    with pytest.raises(EntryError):
        entry_from_json(["not", "an", "object"])  # type: ignore[arg-type]


def test_entries_are_immutable() -> None:
    entry = MessageEntry(id="a", parent_id=None, timestamp="t", message={"role": "user", "content": "x"})
    with pytest.raises(ValidationError):
        entry.id = "b"  # type: ignore[misc]


def test_header() -> None:
    data = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-30T01:02:03.456Z", "cwd": "/"}
    header = header_from_json(data)
    assert header.to_json() == data and list(header.to_json()) == list(data)
    forked = SessionHeader(version=3, id="s2", timestamp="t", cwd="/", parent_session="/x/s1.jsonl")
    assert forked.to_json() == {
        "type": "session",
        "version": 3,
        "id": "s2",
        "timestamp": "t",
        "cwd": "/",
        "parentSession": "/x/s1.jsonl",
    }
    v1 = {"type": "session", "id": "s1", "timestamp": "t", "cwd": "/p"}
    assert header_from_json(v1).to_json() == v1
    for broken in [
        {"type": "message", "id": "x"},
        {"type": "session"},
        {"type": "session", "id": ""},
        {"type": "session", "id": "x", "cwd": 3},
    ]:
        with pytest.raises(EntryError):
            header_from_json(broken)


def test_custom_message_without_display_round_trips() -> None:
    data = {"type": "custom_message", "customType": "c", "content": [{"type": "text", "text": "x"}], **BASE}
    entry, problem = entry_from_json(data)
    assert isinstance(entry, CustomMessageEntry) and problem is None
    assert entry.display is None and entry.to_json() == data
