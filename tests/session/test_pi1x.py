"""Sessions from pi 1.x: files written by pi 1.6.0's own SessionManager (tests/reference-1x, run with
Node.js by ``pi1x_sessions.mjs``) import without a warning, export byte for byte as pi wrote them,
build the context pi 1.6.0 builds at every entry (``buildSessionProjection``: context edits,
system checkpoints of compactions) and count the usage pi counts. And the other way: a session made
and compacted here opens in pi's CLI, 0.79.10 and 1.6.0 alike, at its compaction summary followed by
the kept messages.

CPython only (tests/session is not run in Pyodide). The ``reference_1x_install`` and
``reference_install`` fixtures install the pinned packages (``npm ci``) and fail, never skip.
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
from typing import Any

import pytest
from session_helpers import assistant, new_session, tool_result, user

from py_agent.ai.faux import faux_assistant_message, register_faux_provider
from py_agent.session import (
    ContextEditEntry,
    MessageEntry,
    UsageEntry,
    convert_to_llm,
    export_jsonl,
    import_jsonl,
    message_to_json,
)
from py_agent.session.compaction import CompactionSettings, compact_session

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "pi1x_sessions.mjs"
RANDOM_SESSIONS = 30


def node(*args: str) -> Any:
    done = subprocess.run(
        ["node", str(SCRIPT), *args], capture_output=True, text=True, encoding="utf-8", timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def pi_reads(modules: pathlib.Path, path: pathlib.Path) -> dict[str, Any]:
    result: dict[str, Any] = node("read", str(modules / "node_modules"), str(path))
    return result


@pytest.fixture(scope="module")
def pi_files(reference_1x_install: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The files pi 1.6.0 wrote, each with ``seen``: what pi 1.6.0 reads in it."""
    folder = tmp_path_factory.mktemp("pi1x")
    files: dict[str, Any] = node("write", str(folder), str(RANDOM_SESSIONS), "20261205")
    for info in files.values():
        info["seen"] = pi_reads(reference_1x_install, pathlib.Path(info["path"]))
    return files


def test_pi_1x_files_round_trip_byte_for_byte(pi_files: dict[str, Any]) -> None:
    kinds: set[str] = set()
    for name, info in pi_files.items():
        text = pathlib.Path(info["path"]).read_text(encoding="utf-8")
        session = import_jsonl(text)
        assert session.warnings == [], (name, session.warnings)
        assert export_jsonl(session) == text, name
        kinds.update(type(entry).__name__ for entry in session)
    assert {"UsageEntry", "ContextEditEntry", "CompactionEntry", "BranchSummaryEntry"} <= kinds
    assert "UnknownEntry" not in kinds


def test_contexts_are_pi_1x_contexts_at_every_entry(pi_files: dict[str, Any]) -> None:
    removed_somewhere = replaced_somewhere = checkpoints = 0
    for name, info in pi_files.items():
        path = pathlib.Path(info["path"])
        seen = info["seen"]
        session = import_jsonl(path.read_text(encoding="utf-8"))
        assert seen["leafId"] == session.leaf_id
        for entry in session:
            ours = session.build_context(entry.id)
            theirs = seen["contexts"][entry.id]
            assert ours.messages == theirs["messages"], (name, entry.id)
            assert ours.thinking_level == theirs["thinkingLevel"], (name, entry.id)
            assert (ours.model.model_dump() if ours.model else None) == theirs["model"], (name, entry.id)
        edits = [entry for entry in session.path() if isinstance(entry, ContextEditEntry)]
        removed_somewhere += sum(edit.replacement is None for edit in edits)
        replaced_somewhere += sum(edit.replacement is not None for edit in edits)
        checkpoints += sum(m.get("role") == "system" for m in session.build_context().messages)
        # What the model is sent: pi's convertToLlm less the system messages (the page sends its own
        # prompt and tools; docs/deviations.md).
        llm = [message_to_json(m) for m in convert_to_llm(session.build_context().messages)]
        assert llm == [m for m in seen["llm"] if m["role"] != "system"], name
    assert removed_somewhere and replaced_somewhere and checkpoints  # the generated files cover each case


def test_usage_totals_are_pi_1x_totals(pi_files: dict[str, Any]) -> None:
    for name, info in pi_files.items():
        path = pathlib.Path(info["path"])
        seen = info["seen"]
        usage = import_jsonl(path.read_text(encoding="utf-8")).metadata.usage
        tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        assert tokens == sum(row["tokens"] for row in seen["usage"]), name
        assert math.isclose(usage.cost.total, sum(row["cost"] for row in seen["usage"]), rel_tol=1e-9), name


def test_a_removed_user_message_is_not_in_the_context(pi_files: dict[str, Any]) -> None:
    info = pi_files["edits"]
    session = import_jsonl(pathlib.Path(info["path"]).read_text(encoding="utf-8"))
    removed = session[info["removed"]]
    assert isinstance(removed, MessageEntry) and removed.message["role"] == "user"
    texts = [m.get("content") for m in session.build_context().messages]
    assert removed.message["content"] not in texts
    assert "The second question stays." in texts
    # Still in the session (the transcript shows it) and in its export.
    assert removed in session.path() and removed.message["content"] in export_jsonl(session)
    usage_entry = next(entry for entry in session if isinstance(entry, UsageEntry))
    cost = session.metadata.usage.cost.total
    assert math.isclose(cost, 0.001 * 2 + usage_entry.usage["cost"]["total"])  # two replies and the usage entry


def compacted_session() -> tuple[Any, list[str]]:
    """A session made here and compacted here: three turns, a compaction keeping the last one, a turn after it."""
    session = new_session()
    session.append_model_change("mock", "mock-1")
    session.append_message(user("first question"))
    session.append_message(assistant("first answer"))
    session.append_message(user("second question"))
    session.append_message(assistant("second answer"))
    kept = session.append_message(user("third question"))
    session.append_message(assistant("reading", tool_call="call_1"))
    session.append_message(tool_result("call_1", "hello"))
    session.append_message(assistant("third answer"))
    compaction = session.append_compaction(
        "## Goal\nAnswer three questions.", kept.id, 1234, details={"readFiles": ["a.txt"], "modifiedFiles": []}
    )
    session.append_message(user("fourth question"))
    session.append_message(assistant("fourth answer"))
    expected = [
        "third question",
        "reading",
        "hello",
        "third answer",
        "fourth question",
        "fourth answer",
    ]
    assert compaction.first_kept_entry_id == kept.id
    return session, expected


@pytest.mark.parametrize("version", ["0.79.10", "1.6.0"])
def test_pi_cli_opens_a_session_compacted_here(
    version: str, reference_install: pathlib.Path, reference_1x_install: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    session, expected = compacted_session()
    path = tmp_path / "compacted.jsonl"
    path.write_text(export_jsonl(session), encoding="utf-8")
    modules = reference_install if version == "0.79.10" else reference_1x_install
    seen = pi_reads(modules, path)
    messages = seen["contexts"][session.leaf_id]["messages"]
    assert messages[0] == {
        "role": "compactionSummary",
        "summary": "## Goal\nAnswer three questions.",
        "tokensBefore": 1234,
        "timestamp": messages[0]["timestamp"],
    }
    texts = [_text(message) for message in messages[1:]]
    assert texts == expected
    assert messages == session.build_context().messages
    llm = seen["llm"]
    assert llm[0]["role"] == "user" and "<summary>\n## Goal\nAnswer three questions.\n</summary>" in _text(llm[0])
    assert [_text(m) for m in llm[1:]] == expected


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


@pytest.mark.parametrize("version", ["0.79.10", "1.6.0"])
async def test_pi_cli_opens_a_session_compacted_by_compact_session(
    version: str, reference_install: pathlib.Path, reference_1x_install: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    """The summary is asked of a model (the faux provider) by py_agent's own compaction, as the page does."""
    session = new_session()
    for turn in range(6):
        session.append_message(user(f"question {turn} " + "words " * 400))
        session.append_message(assistant(f"answer {turn} " + "more " * 400))
    faux = register_faux_provider()
    try:
        # A cut inside a turn asks for the turn's beginning too (pi's split turn).
        faux.set_responses([faux_assistant_message(text) for text in ("## Goal\nSix questions answered.", "A turn.")])
        model = faux.get_model()
        assert model is not None
        settings = CompactionSettings(keep_recent_tokens=1500)
        entry = await compact_session(session, model, settings=settings)
    finally:
        faux.unregister()
    session.append_message(user("after the cut"))
    path = tmp_path / "compacted.jsonl"
    path.write_text(export_jsonl(session), encoding="utf-8")
    seen = pi_reads(reference_install if version == "0.79.10" else reference_1x_install, path)
    messages = seen["contexts"][session.leaf_id]["messages"]
    assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == entry.summary
    assert messages[0]["summary"].startswith("## Goal\nSix questions answered.")
    kept = session[entry.first_kept_entry_id]
    assert isinstance(kept, MessageEntry) and messages[1] == kept.message
    assert messages[-1]["content"] == "after the cut"
    assert "question 0" not in json.dumps(messages)  # summarized, not sent
    assert messages == session.build_context().messages


def test_context_edits_and_usage_made_here_read_the_same_in_pi_1x(
    reference_1x_install: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    session = new_session()
    first = session.append_message(user("drop me"))
    reply = session.append_message(assistant("a reply", tool_call="call_1"))
    result = session.append_message(tool_result("call_1", "a long result " * 50))
    session.append_message(assistant("done"))
    note = session.append_custom_message("note", "a note")
    session.append_context_edit(first.id, None)
    edit = session.append_context_edit(result.id, {"content": "(elided)"})
    assert edit.replacement == {"content": [{"type": "text", "text": "(elided)"}]}  # as pi normalizes it
    session.append_context_edit(note.id, {"content": "a shorter note"})
    session.append_context_edit(reply.id, {"content": [{"type": "text", "text": "edited"}]})
    session.append_usage(
        "cache_warm",
        "anthropic",
        "claude-sonnet-4-5",
        {
            "input": 0,
            "output": 0,
            "cacheRead": 900,
            "cacheWrite": 0,
            "totalTokens": 900,
            "cost": {"input": 0, "output": 0, "cacheRead": 0.0027, "cacheWrite": 0, "total": 0.0027},
        },
        note="warming",
    )
    for bad, why in [
        ({"text": "x"}, "string/array content"),
        ({"content": 5}, "string/array content"),
    ]:
        with pytest.raises(ValueError, match=why):
            session.append_context_edit(first.id, bad)
    label = session.append_label(first.id, "x")
    with pytest.raises(ValueError, match="editable"):
        session.append_context_edit(label.id, None)
    session.branch(first.id)
    with pytest.raises(ValueError, match="active branch"):
        session.append_context_edit(note.id, None)
    session.branch(label.id)

    path = tmp_path / "edited.jsonl"
    path.write_text(export_jsonl(session), encoding="utf-8")
    seen = pi_reads(reference_1x_install, path)
    assert seen["contexts"][session.leaf_id]["messages"] == session.build_context().messages
    texts = json.dumps(session.build_context().messages)
    assert "drop me" not in texts and "a long result" not in texts and "a shorter note" in texts
    usage = session.metadata.usage
    assert usage.cache_read == 900 and math.isclose(usage.cost.total, sum(row["cost"] for row in seen["usage"]))
