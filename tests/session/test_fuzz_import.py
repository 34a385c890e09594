"""Property tests (hypothesis, CPython only) of session import/export.

- import never raises, whatever the text or the JSON lines;
- export -> import is the identity on generated sessions (every entry type, branches, labels,
  compactions, unknown entry types, arbitrary JSON payloads), and so is import -> export;
- junk lines between valid ones lose no valid entry;
- arbitrary entry objects keep every field through a read and a write.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

# Imported, not importorskip'ed: CI must never skip these (hypothesis is in the test extras).
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_helpers import Clock, context_json

from py_agent.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UsageCost, UserMessage
from py_agent.session import (
    KNOWN_ENTRY_TYPES,
    Session,
    UnknownEntry,
    compute_metadata,
    entry_from_json,
    export_jsonl,
    import_jsonl,
    json_parse,
    json_stringify,
)

# The number of examples is the hypothesis profile's (tests/conftest.py).
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _no_surrogate_pairs(text: str) -> bool:
    # A high surrogate followed by a low one reads back as one character (as in JavaScript).
    return not any("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff" for a, b in itertools.pairwise(text))


any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=())).filter(_no_surrogate_pairs)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(any_text, json_values, max_size=5)
short = st.text(max_size=12)


# ---- import never raises ----


@SETTINGS
@given(st.text())
def test_import_never_raises_on_any_text(text: str) -> None:
    session = import_jsonl(text)
    assert isinstance(session, Session)
    export_jsonl(session)


@SETTINGS
@given(st.lists(json_values, max_size=8))
def test_import_never_raises_on_any_json_lines(values: list[Any]) -> None:
    text = "\n".join(json.dumps(value) for value in values)
    session = import_jsonl(text)
    again = import_jsonl(export_jsonl(session))
    assert again.entries == session.entries


base_fields = st.fixed_dictionaries(
    {"type": st.sampled_from([*KNOWN_ENTRY_TYPES, "session", "leaf", "usage"]) | short},
    optional={
        "id": st.one_of(st.just("a1b2c3d4"), st.just("b2c3d4e5"), short, st.integers()),
        "parentId": st.one_of(st.none(), st.just("a1b2c3d4"), st.just("b2c3d4e5"), st.integers()),
        "timestamp": st.one_of(st.just("2026-01-01T00:00:00.000Z"), short, st.none()),
        "version": st.one_of(st.integers(0, 5), st.floats(allow_nan=False, allow_infinity=False), short),
        "message": st.one_of(
            json_objects, st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "hookMessage"])})
        ),
        "firstKeptEntryIndex": st.integers(-2, 6),
        "summary": short,
        "content": json_values,
    },
)
entry_like = st.builds(lambda base, extra: {**extra, **base}, base_fields, json_objects)


@SETTINGS
@given(st.lists(entry_like, max_size=8))
def test_import_never_raises_on_entry_like_lines(objects: list[dict[str, Any]]) -> None:
    session = import_jsonl("\n".join(json.dumps(obj) for obj in objects))
    assert len({entry.id for entry in session}) == len(session)
    for entry in session:
        session.build_context(entry.id)
    again = import_jsonl(export_jsonl(session))
    assert again.entries == session.entries
    # Only what a re-read must report again: fields that do not validate, a newer version.
    assert all("kept unchanged" in w.message or "newer pi" in w.message for w in again.warnings)


# ---- export -> import identity on generated sessions ----


def _message(kind: int, text: str, payload: Any) -> Any:
    if kind == 0:
        return UserMessage(content=text, timestamp=1)
    if kind == 1:
        return AssistantMessage(
            content=[TextContent(text=text), ToolCall(id="c", name="t", arguments={"p": payload})],
            api="a",
            provider="p" + text[:3],
            model="m",
            usage=Usage(input=1, output=2, total_tokens=3, cost=UsageCost(input=0.5e-5, total=0.5e-5)),
            timestamp=2,
        )
    if kind == 2:
        return ToolResultMessage(
            tool_call_id="c", tool_name="t", content=[TextContent(text=text)], details=payload, timestamp=3
        )
    return {"role": "custom-" + text[:5], "payload": payload}


operation = st.one_of(
    st.tuples(st.just("message"), st.integers(0, 3), any_text, json_values),
    st.tuples(st.just("model"), short, short),
    st.tuples(st.just("thinking"), st.sampled_from(["off", "low", "high", "xhigh"])),
    st.tuples(
        st.just("compaction"), st.integers(0, 99), any_text, st.integers(0, 10**6) | st.floats(0, 1e6), json_values
    ),
    st.tuples(st.just("branch_summary"), st.integers(-1, 99), any_text, json_values, st.none() | st.booleans()),
    st.tuples(st.just("custom"), short, json_values),
    st.tuples(
        st.just("custom_message"),
        short,
        any_text | st.just([{"type": "text", "text": "b"}]),
        st.booleans(),
        json_values,
    ),
    st.tuples(st.just("label"), st.integers(0, 99), st.none() | any_text),
    st.tuples(st.just("info"), any_text),
    st.tuples(st.just("branch"), st.integers(0, 99)),
    st.tuples(st.just("reset")),
    st.tuples(st.just("unknown"), short.filter(lambda t: t not in KNOWN_ENTRY_TYPES and t != "session"), json_objects),
)


def _pick(session: Session, index: int) -> str | None:
    entries = session.entries
    return entries[index % len(entries)].id if entries else None


def _run(operations: list[tuple[Any, ...]]) -> Session:
    session = Session.create(clock=Clock(step=7))
    for op in operations:
        kind = op[0]
        if kind == "message":
            session.append_message(_message(op[1], op[2], op[3]))
        elif kind == "model":
            session.append_model_change(op[1], op[2])
        elif kind == "thinking":
            session.append_thinking_level_change(op[1])
        elif kind == "compaction":
            session.append_compaction(op[2], _pick(session, op[1]) or "none", op[3], details=op[4])
        elif kind == "branch_summary":
            target = _pick(session, op[1]) if op[1] >= 0 else None
            session.branch_with_summary(target, op[2], details=op[3], from_hook=op[4])
        elif kind == "custom":
            session.append_custom(op[1], op[2])
        elif kind == "custom_message":
            session.append_custom_message(op[1], op[2], display=op[3], details=op[4])
        elif kind == "label":
            target = _pick(session, op[1])
            if target is not None:
                session.append_label(target, op[2])
        elif kind == "info":
            session.append_session_info(op[1])
        elif kind == "branch":
            target = _pick(session, op[1])
            if target is not None:
                session.branch(target)
        elif kind == "reset":
            session.reset_leaf()
        elif kind == "unknown":
            fields = {k: v for k, v in op[2].items() if k not in ("type", "id", "parentId", "timestamp")}
            data = {
                "type": op[1],
                "id": session.new_entry_id(),
                "parentId": session.leaf_id,
                "timestamp": session.now_iso(),
                **fields,
            }
            entry, problem = entry_from_json(data)
            assert isinstance(entry, UnknownEntry) and problem is None
            session.append(entry)
    return session


@SETTINGS
@given(st.lists(operation, max_size=25))
def test_export_then_import_is_the_identity(operations: list[tuple[Any, ...]]) -> None:
    session = _run(operations)
    text = export_jsonl(session)
    again = import_jsonl(text)
    assert again.warnings == []
    assert again.header == session.header
    assert again.entries == session.entries
    assert [e.to_json() for e in again] == [e.to_json() for e in session]
    assert again.leaf_id == (session.entries[-1].id if len(session) else None)
    assert again.labels == session.labels and again.name == session.name
    assert again.metadata == compute_metadata(session.header, session.entries)
    for entry in session:
        assert context_json(again.build_context(entry.id)) == context_json(session.build_context(entry.id))
    assert export_jsonl(again) == text
    for line in text.split("\n")[:-1]:  # not splitlines(): U+2028, U+0085 ... are inside strings
        json_parse(line)


@SETTINGS
@given(st.lists(operation, min_size=1, max_size=15), st.lists(st.tuples(st.integers(0, 99), any_text), max_size=6))
def test_junk_lines_lose_no_valid_entry(operations: list[tuple[Any, ...]], junk: list[tuple[int, str]]) -> None:
    session = _run(operations)
    lines = export_jsonl(session).split("\n")[:-1]
    junk_lines: set[int] = set()
    for position, text in junk:
        text = text.replace("\n", " ")
        try:
            if isinstance(json_parse(text), dict):
                continue
        except ValueError:
            pass
        index = 1 + position % len(lines)  # after the header
        lines.insert(index, text)
    for number, line in enumerate(lines, start=1):
        if not line.startswith('{"type"'):
            junk_lines.add(number)
    again = import_jsonl("\n".join(lines))
    assert again.entries == session.entries
    assert {w.line for w in again.warnings} <= junk_lines


# ---- entries and JSON ----


@SETTINGS
@given(base_fields, json_objects)
def test_entry_objects_keep_every_field(base: dict[str, Any], extra: dict[str, Any]) -> None:
    data = {**extra, **base, "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}
    if data["type"] == "session":
        return
    entry, _ = entry_from_json(data)
    assert entry.to_json() == data
    assert json_parse(json_stringify(entry.to_json())) == data


@SETTINGS
@given(json_values)
def test_stringify_then_parse_is_the_identity(value: Any) -> None:
    text = json_stringify(value)
    assert json_parse(text) == value
    json.loads(text)  # standard JSON too (Python reads integral doubles beyond 2**53 as ints)
