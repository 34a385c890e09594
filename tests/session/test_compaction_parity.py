"""Differential tests: py_agent.session.compaction against pi-agent-core 0.79.10's own compaction
(``dist/harness/compaction/``, run in Node by tests/reference/run_compaction.mjs) on hand-written
sessions and 120 generated ones (tool calls, images, branches, bash executions, custom messages,
branch summaries, earlier compactions; tests/session/compaction_cases.py).

Compared per case: every message's token estimate, the context estimate, the last usage,
``should_compact`` for several windows, turn starts, cut points for several budgets, the
preparation (what is summarized, what is kept, the tracked files, the previous summary), the
serialized conversation, every summary request (system prompt, prompt text, ``maxTokens``, key,
headers, reasoning), the result or the error, the ``compaction`` entry appended and the context
built after it; and the same for branch summaries.

CPython only; the shared ``reference_install`` fixture installs tests/reference/node_modules.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from compaction_cases import generated_cases, generated_names, hand_written_cases

from py_agent.ai.event_stream import AssistantMessageEventStream
from py_agent.ai.events import DoneEvent, ErrorEvent
from py_agent.ai.types import AssistantMessage, Context, Model, SimpleStreamOptions, TextContent, Usage
from py_agent.session import Session, SessionHeader, entry_from_json, message_to_json
from py_agent.session.compaction import (
    BranchSummaryError,
    CompactionError,
    CompactionSettings,
    FileOperations,
    calculate_context_tokens,
    collect_entries_for_branch_summary,
    compact_session,
    estimate_context_tokens,
    estimate_tokens,
    find_cut_point,
    find_turn_start_index,
    generate_branch_summary,
    get_last_assistant_usage,
    prepare_branch_entries,
    prepare_compaction,
    serialize_conversation,
    should_compact,
)
from py_agent.session.compaction.tokens import js_length
from py_agent.session.messages import convert_to_llm

RUNNER = Path(__file__).resolve().parent.parent / "reference" / "run_compaction.mjs"
GENERATED = 120
# The test ids; the cases themselves are generated once, by the fixture below, when a test runs
# (generating them takes seconds: at import, every pytest process would pay it while collecting).
NAMES = [case["name"] for case in hand_written_cases()] + generated_names(GENERATED)


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    made = hand_written_cases() + generated_cases(GENERATED)
    assert [case["name"] for case in made] == NAMES
    return made


class FakeProvider:
    """The Python twin of run_compaction.mjs's fake API: records requests, answers the same."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []

    def __call__(self, model: Model, context: Context, options: SimpleStreamOptions) -> AssistantMessageEventStream:
        prompt = context.messages[0].content[0].text
        messages = []
        for message in context.messages:
            data = message_to_json(message)
            data.pop("timestamp", None)
            messages.append(data)
        self.requests.append(
            {
                "systemPrompt": context.system_prompt,
                "messages": messages,
                "maxTokens": options.max_tokens,
                "apiKey": options.api_key,
                "headers": options.headers,
                "reasoning": options.reasoning,
            }
        )
        stream = AssistantMessageEventStream()
        content = [TextContent(text=_answer(prompt)), TextContent(text="second block")] if self.reply == "stop" else []
        message = AssistantMessage(
            content=content,
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason=self.reply,  # type: ignore[arg-type]
            timestamp=0,
        )
        if self.reply == "stop":
            stream.push(DoneEvent("stop", message))
        else:
            message.error_message = "HTTP 500: summary server down" if self.reply == "error" else ""
            stream.push(ErrorEvent(self.reply, message))  # type: ignore[arg-type]
        return stream


def _answer(prompt: str) -> str:
    if "This is the PREFIX of a turn" in prompt:
        kind = "prefix"
    elif "<previous-summary>" in prompt:
        kind = "update"
    elif "conversation branch" in prompt:
        kind = "branch"
    else:
        kind = "history"
    return f"## Goal\nSummary ({kind}) of {len(prompt.split(chr(10)))} lines."


def _camel(value: Any) -> Any:
    """A result dataclass as pi's JSON (camelCase keys)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for item in dataclasses.fields(value):
            head, *rest = item.name.split("_")
            out[head + "".join(part.title() for part in rest)] = _camel(getattr(value, item.name))
        return out
    if isinstance(value, dict):
        return {key: _camel(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


def _file_ops(ops: FileOperations) -> dict[str, list[str]]:
    return {"read": list(ops.read), "written": list(ops.written), "edited": list(ops.edited)}


def _failure(error: CompactionError | BranchSummaryError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": str(error)}}


def _session(case: dict[str, Any]) -> Session:
    entries = [entry_from_json(entry, lenient=False)[0] for entry in case["entries"]]
    return Session(SessionHeader(id=case["name"]), entries, leaf_id=case["leafId"])


async def python_result(case: dict[str, Any]) -> dict[str, Any]:
    """What run_compaction.mjs's `run` computes, computed by py_agent."""
    session = _session(case)
    path = session.path()
    settings = CompactionSettings(
        enabled=case["settings"]["enabled"],
        reserve_tokens=case["settings"]["reserveTokens"],
        keep_recent_tokens=case["settings"]["keepRecentTokens"],
    )
    model = Model.model_validate(case["model"])
    messages = session.build_context().messages
    estimate = estimate_context_tokens(messages)
    last_usage = get_last_assistant_usage(path)
    out: dict[str, Any] = {
        "estimates": [estimate_tokens(message) for message in messages],
        "entryEstimates": [estimate_tokens(entry.message) for entry in path if entry.to_json()["type"] == "message"],
        "contextEstimate": _camel(estimate),
        "lastUsage": last_usage,
        "lastUsageTokens": calculate_context_tokens(last_usage) if last_usage is not None else None,
        "shouldCompact": [should_compact(estimate.tokens, window, settings) for window in case["windows"]],
        "turnStarts": [find_turn_start_index(path, index, 0) for index in range(len(path))],
        "cutPoints": [_camel(find_cut_point(path, 0, len(path), keep)) for keep in case["keepRecent"]],
    }
    try:
        prep = prepare_compaction(path, settings)
    except CompactionError as error:
        out["preparation"] = _failure(error)
        prep = None
    else:
        out["preparation"] = None
    if prep is not None:
        out["preparation"] = {**_camel(prep), "fileOps": _file_ops(prep.file_ops)}
        out["serialized"] = serialize_conversation(convert_to_llm(prep.messages_to_summarize))
        out["serializedPrefix"] = serialize_conversation(convert_to_llm(prep.turn_prefix_messages))
        fake = FakeProvider(case["reply"])
        try:
            entry = await compact_session(
                session,
                model,
                api_key=case["apiKey"],
                headers=case["headers"],
                custom_instructions=case["customInstructions"],
                thinking_level=case["thinkingLevel"],
                settings=settings,
                stream_fn=fake,
            )
        except CompactionError as error:
            out["result"] = _failure(error)
        else:
            entry_json = {k: v for k, v in entry.to_json().items() if k not in ("id", "parentId", "timestamp")}
            out["result"] = {k: entry_json[k] for k in ("summary", "firstKeptEntryId", "tokensBefore", "details")}
            out["entry"] = entry_json
            out["contextAfter"] = session.build_context().messages
        out["requests"] = fake.requests
    if case["branchLeaf"] and case["branchTarget"]:
        entries, common = collect_entries_for_branch_summary(session, case["branchLeaf"], case["branchTarget"])
        prepared = prepare_branch_entries(entries, 3000)
        fake = FakeProvider(case["reply"])
        instructions = case["branchInstructions"]
        replace = bool(instructions and instructions.startswith("REPLACE: "))
        try:
            summary = await generate_branch_summary(
                entries,
                model,
                api_key=case["apiKey"],
                headers=case["headers"],
                custom_instructions=instructions[9:] if replace else instructions,
                replace_instructions=replace,
                reserve_tokens=settings.reserve_tokens,
                stream_fn=fake,
            )
            result: dict[str, Any] = _camel(summary)
        except BranchSummaryError as error:
            result = _failure(error)
        out["branch"] = {
            "entryIds": [entry.id for entry in entries],
            "commonAncestorId": common,
            "prepared": {**_camel(prepared), "fileOps": _file_ops(prepared.file_ops)},
            "requests": fake.requests,
            "result": result,
        }
    return out


@pytest.fixture(scope="module")
def pi_results(reference_install: Path, cases: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        cases_file = Path(folder) / "cases.json"
        cases_file.write_text(json.dumps(cases), encoding="utf-8")
        done = subprocess.run(
            ["node", str(RUNNER), str(cases_file)],
            cwd=RUNNER.parent,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    results: dict[str, Any] = json.loads(done.stdout)
    return results


@pytest.fixture(scope="module")
def py_results(cases: list[dict[str, Any]]) -> dict[str, Any]:
    async def run_all() -> dict[str, Any]:
        return {case["name"]: await python_result(case) for case in cases}

    return asyncio.run(run_all())


def _normal(value: dict[str, Any]) -> Any:
    # Both sides as the same JSON text (ints and whole floats written alike); the summary
    # message's timestamp is the compaction entry's (the clock's time), not compared.
    value = json.loads(json.dumps(value, sort_keys=True))
    if value.get("contextAfter"):
        value["contextAfter"][0].pop("timestamp", None)
    return value


@pytest.mark.parametrize("name", NAMES)
def test_same_as_pi(name: str, pi_results: dict[str, Any], py_results: dict[str, Any]) -> None:
    theirs = pi_results[name]
    assert "crashed" not in theirs, theirs.get("crashed")
    ours = _normal(py_results[name])
    theirs = _normal(theirs)
    if ours != theirs:
        left = json.dumps(theirs, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        right = json.dumps(ours, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        diff = "\n".join(list(difflib.unified_diff(left, right, "pi", "py_agent", lineterm="", n=2))[:80])
        pytest.fail(f"{name} differs from pi:\n{diff}", pytrace=False)


def test_the_cases_cover_what_matters(cases: list[dict[str, Any]], py_results: dict[str, Any]) -> None:
    """The generated sessions reach the interesting paths (else the parity above proves little)."""
    results = list(py_results.values())
    prepared = [r["preparation"] for r in results if r["preparation"] and "error" not in r["preparation"]]
    files = [p["fileOps"] for p in prepared]
    assert sum(len(case["entries"]) > len(_session(case).path()) for case in cases) >= 40  # off-path branches
    assert sum(p["isSplitTurn"] for p in prepared) >= 40
    assert sum(not p["isSplitTurn"] and bool(p["messagesToSummarize"]) for p in prepared) >= 8
    assert sum(p["previousSummary"] is not None for p in prepared) >= 15
    assert sum(bool(f["read"]) and bool(f["edited"] or f["written"]) for f in files) >= 40
    assert sum("[... " in r.get("serialized", "") for r in results) >= 40  # truncated tool results
    assert sum('"type": "image"' in json.dumps(r["preparation"]) for r in results) >= 40
    assert sum("error" in r.get("result", {}) for r in results) >= 10
    assert sum(len(r.get("requests", ())) == 2 for r in results) >= 40  # split turns: two requests
    assert sum(any(r["shouldCompact"]) and not all(r["shouldCompact"]) for r in results) >= 60
    assert sum(bool(r.get("branch", {}).get("entryIds")) for r in results) >= 60
    assert sum(js_length(r.get("serialized", "")) != len(r.get("serialized", "")) for r in results) >= 40
