"""Attachments (py_agent.session.export_attachments): plugin data a session's .jsonl export carries as
trailing ``custom`` entries, taken out again on import; the workspace's attachment
(py_agent.tools.workspace); and pi's own reader on such a file."""

from __future__ import annotations

import base64
import json
import pathlib
from typing import Any

from session_helpers import assistant, build_sample, context_json, new_session, user

from py_agent.session import (
    CustomEntry,
    Session,
    detach_attachments,
    export_jsonl,
    export_with_attachments,
    import_jsonl,
)
from py_agent.tools.workspace import (
    WORKSPACE_CUSTOM_TYPE,
    Workspace,
    WorkspaceFile,
    files_from_export,
    workspace_attachment,
)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\xff\xfe binary \x00 end"


async def sample_workspace() -> Workspace:
    workspace = await Workspace.open()
    await workspace.write("notes/todo.md", "# Todo\n- ünïcode ✓ 😀\r\nend", mtime=1_700_000_000_001)
    await workspace.write("données/été 2024/plan ☀.txt", "plage", mtime=1_700_000_000_002)
    await workspace.write("img/logo.png", PNG, mtime=1_700_000_000_003)
    await workspace.write("empty.txt", "", mtime=1_700_000_000_004)
    return workspace


def lines_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def assert_same_tree(ours: Session, original: Session) -> None:
    assert ours.header.to_json() == original.header.to_json()
    assert [e.to_json() for e in ours] == [e.to_json() for e in original]
    assert ours.leaf_id == original.leaf_id
    for entry in original:
        assert context_json(ours.build_context(entry.id)) == context_json(original.build_context(entry.id))


async def test_the_workspace_travels_in_one_trailing_custom_entry_and_comes_back() -> None:
    session = build_sample()
    workspace = await sample_workspace()
    data = workspace_attachment(workspace)
    assert data is not None
    text = export_with_attachments(session, [(WORKSPACE_CUSTOM_TYPE, data)])

    # The stored entries line for line, then one custom entry on the current leaf.
    plain = export_jsonl(session)
    assert text.startswith(plain) and text.endswith("\n")
    extra = lines_of(text[len(plain) :])
    assert len(extra) == 1
    entry = extra[0]
    assert list(entry) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert entry["type"] == "custom" and entry["customType"] == "py-agent/workspace"
    assert entry["parentId"] == session.leaf_id and entry["id"] not in session
    files = {f["path"]: f for f in entry["data"]["files"]}
    assert files["notes/todo.md"] == {
        "path": "notes/todo.md",
        "encoding": "utf8",
        "data": "# Todo\n- ünïcode ✓ 😀\r\nend",
        "mtime": 1_700_000_000_001,
    }
    assert files["img/logo.png"]["encoding"] == "base64"
    assert base64.b64decode(files["img/logo.png"]["data"]) == PNG
    assert "données/été 2024/plan ☀.txt" in files and files["empty.txt"]["data"] == ""

    # Import: the entry is taken out, the tree, leaf and contexts are the original's.
    imported, found = detach_attachments(import_jsonl(text), [WORKSPACE_CUSTOM_TYPE])
    assert_same_tree(imported, session)
    assert not imported.warnings
    assert list(found) == [WORKSPACE_CUSTOM_TYPE] and len(found[WORKSPACE_CUSTOM_TYPE]) == 1
    restored_files, problems = files_from_export(found[WORKSPACE_CUSTOM_TYPE][-1].data)
    assert problems == []
    restored = await Workspace.open()
    assert await restored.restore(restored_files) == []
    assert [(f.path, f.data, f.mtime) for f in restored.files()] == [
        (f.path, f.data, f.mtime) for f in workspace.files()
    ]
    assert isinstance(restored.get("img/logo.png").data, bytes)  # type: ignore[union-attr]


async def test_an_empty_workspace_adds_no_entry() -> None:
    session = build_sample()
    assert workspace_attachment(await Workspace.open()) is None
    assert export_with_attachments(session, []) == export_jsonl(session)
    same, found = detach_attachments(import_jsonl(export_jsonl(session)), [WORKSPACE_CUSTOM_TYPE])
    assert found == {}
    assert_same_tree(same, session)


async def test_entries_after_workspace_entries_are_reparented_and_the_last_one_wins() -> None:
    # pi went on with an exported file (entries on top of the workspace entry), then it was
    # exported again with a newer workspace: two workspace entries in one file.
    session = new_session()
    session.append_message(user("hello"))
    session.append_message(assistant("hi"))
    first = export_with_attachments(session, [(WORKSPACE_CUSTOM_TYPE, {"version": 1, "files": []})])
    resumed = import_jsonl(first)
    old_workspace = resumed.leaf_id
    assert isinstance(resumed.leaf, CustomEntry)
    question = resumed.append_message(user("more?"))
    assert question.parent_id == old_workspace
    resumed.append_message(assistant("more."))
    newer = {"version": 1, "files": [{"path": "new.txt", "encoding": "utf8", "data": "new", "mtime": 5}]}
    second = export_with_attachments(resumed, [(WORKSPACE_CUSTOM_TYPE, newer), ("other/kept", {"x": 1})])

    imported, found = detach_attachments(import_jsonl(second), [WORKSPACE_CUSTOM_TYPE])
    assert [e.to_json()["data"] for e in found[WORKSPACE_CUSTOM_TYPE]] == [{"version": 1, "files": []}, newer]
    ids = [e.id for e in imported]
    assert old_workspace not in ids and all(e.id not in ids for e in found[WORKSPACE_CUSTOM_TYPE])
    moved = imported[question.id]
    assert moved.parent_id == session.leaf_id  # its parent was the workspace entry
    # The other custom type is kept, on the reply (its parent, the newer workspace entry, is gone).
    other = imported.entries[-1]
    assert isinstance(other, CustomEntry) and other.custom_type == "other/kept"
    assert other.parent_id == resumed.leaf_id
    assert imported.leaf_id == other.id
    expected = [e.to_json() for e in session] + [
        {**e.to_json(), "parentId": session.leaf_id} if e.id == question.id else e.to_json()
        for e in resumed
        if e.id not in session and e.id != old_workspace
    ]
    assert [e.to_json() for e in imported][: len(expected)] == expected
    assert context_json(imported.build_context()) == context_json(resumed.build_context())


async def test_a_leaf_on_another_branch_is_kept() -> None:
    session = new_session()
    first = session.append_message(user("one"))
    session.append_message(assistant("1"))
    session.branch(first.id)
    session.append_message(user("two"))
    session.branch(first.id)  # the current leaf is not the last entry
    text = export_with_attachments(session, [(WORKSPACE_CUSTOM_TYPE, {"version": 1, "files": []})])
    assert lines_of(text)[-1]["parentId"] == first.id
    imported, _ = detach_attachments(import_jsonl(text), [WORKSPACE_CUSTOM_TYPE])
    assert_same_tree(imported, session)


async def test_secrets_are_scrubbed_from_file_contents_and_paths() -> None:
    key = "sk-live-SECRET-0123456789"
    workspace = await Workspace.open()
    await workspace.write(f"keys/{key}.txt", f"token={key}\n")
    await workspace.write("blob.bin", b"\x00\x01" + key.encode() + b"\xff")
    session = new_session()
    session.append_message(user("hi"))
    text = export_with_attachments(
        session, [(WORKSPACE_CUSTOM_TYPE, workspace_attachment(workspace, [key]))], secrets=[key]
    )
    assert key not in text
    data = lines_of(text)[-1]["data"]
    blob = next(f for f in data["files"] if f["path"] == "blob.bin")
    assert base64.b64decode(blob["data"]) == b"\x00\x01[redacted]\xff"
    assert key.encode() not in base64.b64decode(blob["data"])
    assert any(f["data"] == "token=[redacted]\n" for f in data["files"])


def test_malformed_workspace_data_names_the_problem_and_keeps_the_rest() -> None:
    for data, expected in [
        ("nope", "malformed (expected an object with a 'files' list, found str); no files were restored"),
        ({"files": {"a": 1}}, "found dict"),
        ({"version": 99, "files": []}, "unsupported version 99"),
    ]:
        files, problems = files_from_export(data)
        assert files == [] and len(problems) == 1 and expected in problems[0], problems
    files, problems = files_from_export(
        {
            "version": 1,
            "files": [
                {"path": "good.txt", "encoding": "utf8", "data": "ok", "mtime": 7},
                {"path": "bad.bin", "encoding": "base64", "data": "not base64!"},
                {"path": "../escape.txt", "data": "x"},
                {"path": "weird.txt", "encoding": "rot13", "data": "x"},
                "not a record",
                {"path": "raw.bin", "encoding": "base64", "data": base64.b64encode(b"\x00\x01").decode()},
            ],
        }
    )
    assert files == [WorkspaceFile("good.txt", "ok", 7), WorkspaceFile("raw.bin", b"\x00\x01", files[1].mtime)]
    assert len(problems) == 4
    assert "#2: bad.bin: invalid base64 data" in problems[0]
    assert "#3: Invalid path '../escape.txt'" in problems[1]
    assert "#4: weird.txt: unknown encoding 'rot13'" in problems[2]
    assert "#5 (not an object)" in problems[3]
    assert all(p.startswith("The workspace saved in this file") for p in problems)


async def test_restore_writes_what_fits_and_reports_the_rest() -> None:
    from py_agent.tools.workspace import WorkspaceLimits

    workspace = await Workspace.open(limits=WorkspaceLimits(max_file_bytes=10))
    await workspace.write("old.txt", "gone")
    problems = await workspace.restore([WorkspaceFile("a.txt", "small", 1), WorkspaceFile("b.txt", "x" * 20, 2)])
    assert workspace.paths() == ["a.txt"]
    assert len(problems) == 1 and "b.txt" in problems[0] and "limit" in problems[0]


async def test_pi_reads_an_export_with_a_workspace(reference_install: pathlib.Path) -> None:
    from test_pi_reference import pi_reads

    session = build_sample()
    data = workspace_attachment(await sample_workspace())
    text = export_with_attachments(session, [(WORKSPACE_CUSTOM_TYPE, data)])
    seen = pi_reads(text)
    attached = lines_of(text)[-1]["id"]
    assert seen["entryIds"] == [e.id for e in session] + [attached]
    # pi resumes at the workspace entry: the context of the session's current leaf.
    assert seen["leafId"] == attached
    assert seen["contexts"][attached] == context_json(session.build_context())
    for entry in session:
        assert seen["contexts"][entry.id] == context_json(session.build_context(entry.id)), entry.id
    assert seen["name"] == session.name and seen["labels"] == session.labels
