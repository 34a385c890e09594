"""compact_session through the faux provider: what is summarized, what the session holds after, and
that a failed or stopped summary changes nothing. Plain functions (no fixtures): also run in
Pyodide (tests/pyodide/test_suites.py). Parity with pi itself: test_compaction_parity.py."""

from __future__ import annotations

import asyncio
from typing import Any

from session_helpers import new_session

from py_agent.ai.abort import AbortController
from py_agent.ai.faux import faux_assistant_message, register_faux_provider
from py_agent.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from py_agent.session import CompactionEntry, Session, export_jsonl, import_jsonl
from py_agent.session.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    CompactionError,
    CompactionSettings,
    compact_session,
)

SETTINGS = CompactionSettings(keep_recent_tokens=1000)
LONG = "word " * 1000  # 5,000 characters: 1,250 tokens


def reply(text: str, calls: list[ToolCall] | None = None) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text), *(calls or [])]
    return AssistantMessage(content=content, api="faux", provider="faux", model="faux-1")


def long_session() -> Session:
    session = new_session()
    for n in range(1, 5):
        session.append_message(UserMessage(content=f"Question {n}: {LONG}"))
        session.append_message(reply(f"Answer {n}."))
    return session


class Recorder:
    """A faux step that records each summary request and answers it."""

    def __init__(self, answer: str = "## Goal\nSummary.") -> None:
        self.prompts: list[str] = []
        self.system_prompts: list[str | None] = []
        self.answer = answer

    def __call__(self, context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        self.prompts.append(context.messages[0].content[0].text)
        self.system_prompts.append(context.system_prompt)
        return faux_assistant_message(self.answer)


async def test_compaction_summarizes_the_old_messages_and_keeps_the_rest() -> None:
    faux = register_faux_provider()
    recorder = Recorder()
    faux.set_responses([recorder])
    session = long_session()
    entry = await compact_session(session, faux.get_model(), settings=SETTINGS)
    assert recorder.system_prompts == [SUMMARIZATION_SYSTEM_PROMPT]
    prompt = recorder.prompts[0]
    assert "[User]: Question 3" in prompt and "Question 4" not in prompt
    assert isinstance(session.leaf, CompactionEntry) and session.leaf.id == entry.id
    messages = session.build_context().messages
    assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == "## Goal\nSummary."
    assert [m.get("content") for m in messages[1:2]] == [f"Question 4: {LONG}"]
    # Nothing is deleted: the export holds every message, and reads back the same.
    again = import_jsonl(export_jsonl(session))
    assert len(again) == len(session) and again.build_context().messages == messages
    faux.unregister()


async def test_a_second_compaction_updates_the_first_summary_and_its_files() -> None:
    faux = register_faux_provider()
    recorder = Recorder("## Goal\nUpdated.")
    faux.set_responses([faux_assistant_message("## Goal\nFirst."), recorder])
    session = long_session()
    session.append_message(UserMessage(content=f"Read a file. {LONG}"))
    call = ToolCall(id="c1", name="read", arguments={"path": "notes.md"})
    session.append_message(reply("", [call]))
    session.append_message(ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="hi")]))
    session.append_message(reply("Read it."))
    await compact_session(session, faux.get_model(), settings=SETTINGS)
    for n in range(5, 8):
        session.append_message(UserMessage(content=f"Question {n}: {LONG}"))
        session.append_message(reply(f"Answer {n}.", [ToolCall(id=f"e{n}", name="edit", arguments={"path": "a.py"})]))
        session.append_message(ToolResultMessage(tool_call_id=f"e{n}", tool_name="edit", content=[]))
    entry = await compact_session(session, faux.get_model(), settings=SETTINGS)
    assert "<previous-summary>\n## Goal\nFirst.\n</previous-summary>" in recorder.prompts[0]
    files = "<read-files>\nnotes.md\n</read-files>\n\n<modified-files>\na.py\n</modified-files>"
    assert entry.summary == f"## Goal\nUpdated.\n\n{files}"
    assert entry.details == {"readFiles": ["notes.md"], "modifiedFiles": ["a.py"]}
    faux.unregister()


async def test_a_failed_summary_appends_nothing() -> None:
    faux = register_faux_provider()
    faux.set_responses([faux_assistant_message("", stop_reason="error", error_message="HTTP 500: down")])
    session = long_session()
    before = export_jsonl(session)
    try:
        await compact_session(session, faux.get_model(), settings=SETTINGS)
    except CompactionError as error:
        assert error.code == "summarization_failed"
        assert str(error) == "Summarization failed: HTTP 500: down"
    else:
        raise AssertionError("no error")
    assert export_jsonl(session) == before
    faux.unregister()


async def test_a_stopped_summary_appends_nothing() -> None:
    faux = register_faux_provider(tokens_per_second=50)
    faux.set_responses([faux_assistant_message("word " * 200)])
    session = long_session()
    before = export_jsonl(session)
    controller = AbortController()

    def stop(*_: Any) -> None:
        controller.abort()

    asyncio.get_running_loop().call_later(0.05, stop)
    try:
        await compact_session(session, faux.get_model(), settings=SETTINGS, signal=controller.signal)
    except CompactionError as error:
        assert error.code == "aborted"
    else:
        raise AssertionError("no error")
    assert export_jsonl(session) == before
    faux.unregister()


async def test_nothing_to_compact() -> None:
    faux = register_faux_provider()
    session = new_session()
    for expected in ("Nothing to compact (session too small)", "Already compacted"):
        try:
            await compact_session(session, faux.get_model())
        except CompactionError as error:
            assert (error.code, str(error)) == ("nothing_to_compact", expected)
        else:
            raise AssertionError("no error")
        session.append_message(UserMessage(content="hi"))
        session.append_compaction("s", session.leaf_id or "", 1)
    assert faux.state.call_count == 0
    faux.unregister()
