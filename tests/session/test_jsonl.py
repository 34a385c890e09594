"""Export and import of pi's .jsonl session files, upgrades from versions 1 and 2, damaged input,
and sessions rebuilt from store records."""

from __future__ import annotations

import json

from session_helpers import (
    Clock,
    CountingIds,
    build_sample,
    context_json,
    jsonl_objects,
    load_json_fixture,
    new_session,
    read_fixture,
    remap_ids,
    user,
)

from py_agent.session import (
    CURRENT,
    CompactionEntry,
    MessageEntry,
    Session,
    UnknownEntry,
    entry_to_line,
    export_jsonl,
    header_to_line,
    import_jsonl,
    load_session,
    secret_redactor,
)

# ---- round trips ----


def test_export_then_import_is_the_identity() -> None:
    session = build_sample()
    text = export_jsonl(session)
    again = import_jsonl(text)
    assert again.warnings == []
    assert again.header == session.header
    assert again.entries == session.entries
    assert again.leaf_id == session.leaf_id
    assert export_jsonl(again) == text
    assert again.metadata == session.metadata
    assert context_json(again.build_context()) == context_json(session.build_context())


def test_export_format() -> None:
    session = build_sample()
    text = export_jsonl(session)
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.split("\n")[:-1]
    assert len(lines) == 1 + len(session)
    assert lines[0] == header_to_line(session.header)
    assert lines[0] == (
        '{"type":"session","version":3,"id":"01a229fe-0000-7000-8000-000000000001",'
        '"timestamp":"2026-11-30T01:02:03.456Z","cwd":"/"}'
    )
    assert lines[1:] == [entry_to_line(entry) for entry in session]
    for line, entry in zip(lines[1:], session, strict=True):
        assert json.loads(line) == entry.to_json()


def test_pi_written_file_round_trips_byte_for_byte() -> None:
    # fixtures/pi_full.jsonl was written by pi's own SessionManager (pi-coding-agent 0.79.10):
    # every entry type, labels set and cleared, two compactions, two branches, a branch summary.
    text = read_fixture("pi_full.jsonl")
    session = import_jsonl(text)
    assert session.warnings == []
    assert session.source_version == 3
    assert export_jsonl(session) == text


def test_pi_written_file_reads_as_pi_reads_it() -> None:
    session = import_jsonl(read_fixture("pi_full.jsonl"))
    expected = load_json_fixture("pi_full.expected.json")  # what pi's SessionManager reports
    assert session.leaf_id == expected["leafId"]
    assert session.name == expected["name"]
    assert session.labels == expected["labels"]
    assert context_json(session.build_context()) == expected["context"]
    assert set(expected["contexts"]) == {entry.id for entry in session}
    for entry_id, context in expected["contexts"].items():
        assert context_json(session.build_context(entry_id)) == context, entry_id


# ---- older versions ----


def _same_up_to_ids(ours: str, theirs: str) -> None:
    mine, pis = jsonl_objects(ours), jsonl_objects(theirs)
    assert len(mine) == len(pis)
    mapping = {a["id"]: b["id"] for a, b in zip(mine[1:], pis[1:], strict=True)}
    for a, b in zip(mine, pis, strict=True):
        assert remap_ids(a, mapping) == b


def test_version_1_is_upgraded_as_pi_upgrades_it() -> None:
    # v1: no ids, compaction's firstKeptEntryIndex; pi-migrated: what pi rewrote the file to.
    session = import_jsonl(read_fixture("v1_session.jsonl"))
    assert session.source_version == 1
    assert session.header.version == 3
    assert [w.line for w in session.warnings] == [5]  # the line that is not JSON
    _same_up_to_ids(export_jsonl(session), read_fixture("v1_session.pi-migrated.jsonl"))
    entries = session.entries
    assert len({entry.id for entry in entries}) == len(entries) == 8
    assert all(len(entry.id) == 8 for entry in entries)
    assert [entry.parent_id for entry in entries] == [None, *(entry.id for entry in entries[:-1])]
    compaction = entries[6]
    assert isinstance(compaction, CompactionEntry)
    kept = session[compaction.first_kept_entry_id]
    assert isinstance(kept, MessageEntry) and kept.message["content"][0]["text"] == "Summarize the tests."
    assert "firstKeptEntryIndex" not in compaction.to_json()
    expected = load_json_fixture("v1_session.expected.json")
    assert context_json(session.build_context()) == expected["context"]


def test_version_2_is_upgraded_as_pi_upgrades_it() -> None:
    session = import_jsonl(read_fixture("v2_session.jsonl"))
    assert session.source_version == 2 and session.warnings == []
    # Ids are kept, so the export is pi's migrated file line for line.
    assert export_jsonl(session) == read_fixture("v2_session.pi-migrated.jsonl")
    roles = [entry.message["role"] for entry in session if isinstance(entry, MessageEntry)]
    assert roles == ["user", "custom", "assistant"]
    expected = load_json_fixture("v2_session.expected.json")
    assert context_json(session.build_context()) == expected["context"]
    assert session.name == expected["name"] == "Checks"


def test_version_3_hook_message_role_is_left_alone() -> None:
    text = read_fixture("v2_session.jsonl").replace('"version":2', '"version":3')
    session = import_jsonl(text)
    assert [e.message["role"] for e in session if isinstance(e, MessageEntry)][1] == "hookMessage"


def test_version_1_compaction_index_edge_cases() -> None:
    header = '{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'
    message = json.dumps({"type": "message", "timestamp": "t", "message": {"role": "user", "content": "hi"}})
    lines = [header, message]
    for index in [0, -1, 99, 1.5, "1"]:
        lines.append(
            json.dumps(
                {
                    "type": "compaction",
                    "timestamp": "t",
                    "summary": "s",
                    "firstKeptEntryIndex": index,
                    "tokensBefore": 1,
                }
            )
        )
    session = import_jsonl("\n".join(lines))
    compactions = session.entries[1:]
    # Index 0 is the header, -1/99/1.5 name nothing: pi drops the index and sets no id.
    for entry in compactions[:4]:
        assert isinstance(entry, UnknownEntry)
        assert "firstKeptEntryIndex" not in entry.to_json() and "firstKeptEntryId" not in entry.to_json()
    # A non-numeric index is left as it was.
    assert compactions[4].to_json()["firstKeptEntryIndex"] == "1"
    assert len(session) == 6


# ---- damaged input ----


def test_malformed_lines_are_skipped_with_their_line_numbers() -> None:
    good = export_jsonl(build_sample()).split("\n")
    damaged = [good[0], good[1], "{not json", good[2], "", "   ", "[1, 2]", "42", good[3], good[4][:-5], *good[5:]]
    session = import_jsonl("\n".join(damaged))
    assert {w.line: w.message.split(" (")[0] for w in session.warnings} == {
        3: "not valid JSON",
        7: "not a JSON object",
        8: "not a JSON object",
        10: "not valid JSON",
    }
    assert all(str(w).startswith(f"line {w.line}: ") for w in session.warnings)
    original = build_sample()
    lost = original.entries[3]
    assert [entry.id for entry in session] == [entry.id for entry in original if entry.id != lost.id]


def test_damaged_entries_are_repaired_not_lost() -> None:
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'

    def msg(text: str, **base: object) -> str:
        return json.dumps({"type": "message", **base, "message": {"role": "user", "content": text}})

    t = "2026-01-01T00:00:0{}.000Z".format
    lines = [
        header,
        msg("1", id="aaaaaaaa", parentId=None, timestamp=t(1)),
        msg("dup", id="aaaaaaaa", parentId="aaaaaaaa", timestamp=t(2)),
        msg("no id", parentId="aaaaaaaa", timestamp=t(3)),
        msg("no parent", id="bbbbbbbb", timestamp=t(4)),
        msg("no time", id="cccccccc", parentId="bbbbbbbb"),
        '{"type":"model_change","id":"dddddddd","parentId":"cccccccc","timestamp":"2026-01-01T00:00:06.000Z","provider":1}',
        '{"id":"eeeeeeee","parentId":null,"timestamp":"t"}',
        '{"type":"session","version":3,"id":"other"}',
    ]
    session = import_jsonl("\n".join(lines), id_generator=CountingIds())
    by_line = {w.line: w.message for w in session.warnings}
    assert set(by_line) == {3, 4, 5, 6, 7, 8, 9}
    assert "duplicate entry id aaaaaaaa" in by_line[3]
    assert "no id" in by_line[4] and "no parentId" in by_line[5] and "no timestamp" in by_line[6]
    assert "model_change entry is invalid" in by_line[7]
    assert "no string type" in by_line[8] and "second session header" in by_line[9]
    contents = [e.message["content"] for e in session if isinstance(e, MessageEntry)]
    assert contents == ["1", "dup", "no id", "no parent", "no time"]
    assert len({entry.id for entry in session}) == len(session) == 6
    assert session["bbbbbbbb"].parent_id is None
    assert session["cccccccc"].timestamp == "2026-01-01T00:00:04.000Z"  # the previous entry's
    assert isinstance(session["dddddddd"], UnknownEntry)
    # The damaged model_change still links the tree and is written back unchanged.
    assert session.leaf_id == "dddddddd"
    assert json.loads(export_jsonl(session).split("\n")[6]) == json.loads(lines[6])


def test_missing_or_broken_header() -> None:
    body = export_jsonl(build_sample()).split("\n", 1)[1]
    for text in [body, "not json\n" + body, '{"type":"session","version":"3"}\n' + body]:
        session = import_jsonl(text)
        assert len(session) == len(build_sample())
        assert session.header.version == 3 and session.header.cwd == "/"
        assert session.header.timestamp == session.entries[0].timestamp
        assert session.warnings
    no_ids = '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}\n' * 3
    session = import_jsonl(no_ids)
    assert session.source_version == 1 and len(session) == 3
    assert [e.parent_id for e in session] == [None, session.entries[0].id, session.entries[1].id]


def test_import_never_raises_on_junk() -> None:
    for text in [
        "",
        "\n\n",
        "\ufeff",
        "null",
        "[]",
        '{"type":"session"}',
        "\x00\x01",
        '{"type":"session","id":"x","version":1e400}',
    ]:
        session = import_jsonl(text)
        assert isinstance(session, Session)
    assert import_jsonl(None).warnings  # type: ignore[arg-type]


def test_bom_and_crlf_are_accepted() -> None:
    text = export_jsonl(build_sample())
    session = import_jsonl("\ufeff" + text.replace("\n", "\r\n"))
    assert session.warnings == [] and export_jsonl(session) == text


def test_newer_version_is_read_with_a_warning() -> None:
    text = export_jsonl(build_sample()).replace('"version":3', '"version":4', 1)
    session = import_jsonl(text)
    assert len(session) == len(build_sample())
    assert session.header.version == 4 and any("newer" in w.message for w in session.warnings)


# ---- records from a store ----


def test_load_session_from_records() -> None:
    session = build_sample()
    session.branch(session.entries[4].id)
    header = session.header.to_json()
    as_dicts = [entry.to_json() for entry in session]
    as_strings = [entry_to_line(entry) for entry in session]
    for records in (as_dicts, as_strings, session.entries):
        loaded = load_session(header, records, leaf_id=session.leaf_id)
        assert loaded.warnings == []
        assert loaded.entries == session.entries and loaded.leaf_id == session.leaf_id
        assert loaded.metadata == session.metadata
    assert as_dicts == [entry.to_json() for entry in session]  # the records were not changed


def test_load_session_skips_corrupt_records() -> None:
    session = build_sample()
    records: list[object] = [entry.to_json() for entry in session]
    records[2] = "{corrupt"
    records[5] = 17
    loaded = load_session(json.dumps(session.header.to_json()), records, leaf_id="ffffffff")
    assert [w.line for w in loaded.warnings if w.line] == [3, 6]
    assert any("stored leaf ffffffff not found" in w.message for w in loaded.warnings)
    assert len(loaded) == len(session) - 2
    assert loaded.leaf_id == loaded.entries[-1].id
    none_leaf = load_session(session.header, [entry.to_json() for entry in session], leaf_id=None)
    assert none_leaf.leaf_id is None and none_leaf.build_context().messages == []
    default = load_session(session.header, [entry.to_json() for entry in session], leaf_id=CURRENT)
    assert default.leaf_id == session.entries[-1].id


# ---- secrets and redaction ----


def test_export_scrubs_known_secrets_everywhere() -> None:
    key = "sk-ant-api03-SECRETSECRET"
    session = new_session()
    session.append_message(user(f"my key is {key}, oops"))
    session.append_custom("weird", {key: key, "quoted": 'x"' + key})
    text = export_jsonl(session, secrets=[key, ""])
    assert key not in text
    assert text.count("[redacted]") == 4
    again = import_jsonl(text)
    assert again.warnings == []
    assert again.entries[0].to_json()["message"]["content"] == "my key is [redacted], oops"
    assert key in export_jsonl(session)  # nothing is stripped unless asked


def test_secret_spanning_json_syntax_is_scrubbed_inside_strings() -> None:
    session = new_session()
    session.append_custom("t", {"a": "x", "b": 'he said "hi"'})
    text = export_jsonl(session, secrets=['"b":"he said'])  # never a real key, but must stay valid
    assert import_jsonl(text).warnings == []


def test_redact_hook_rewrites_lines() -> None:
    session = build_sample()
    hook = secret_redactor(["Lisbon"])
    text = export_jsonl(session, redact=hook)
    assert "Lisbon" not in text
    assert "Lisbon" in export_jsonl(session)  # the session itself is unchanged
    assert import_jsonl(text).warnings == []

    def drop_details(obj: dict[str, object]) -> dict[str, object]:
        return {key: value for key, value in obj.items() if key != "details"}

    objects = jsonl_objects(export_jsonl(session, redact=drop_details))
    assert all("details" not in obj for obj in objects)
    assert any("details" in obj for obj in jsonl_objects(export_jsonl(session)))


def test_clock_drives_timestamps() -> None:
    session = Session.create(clock=Clock(start=0, step=1000), session_id="s")
    entry = session.append_thinking_level_change("low")
    assert session.header.timestamp == "1970-01-01T00:00:00.000Z"
    assert entry.timestamp == "1970-01-01T00:00:01.000Z"


def test_hostile_nesting_is_refused_per_line() -> None:
    good = export_jsonl(build_sample()).split("\n")
    bomb = '{"type":"custom","customType":"x","id":"ffffffff","parentId":null,"timestamp":"t","data":' + "[" * 50_000
    session = import_jsonl("\n".join([*good[:3], bomb + "]" * 50_000, *good[3:]]))
    assert [(w.line, "nested deeper" in w.message) for w in session.warnings] == [(4, True)]
    assert len(session) == len(build_sample())
