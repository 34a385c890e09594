"""Compaction: pi-agent-core 0.79.10's ``dist/harness/compaction/compaction.js``.

:func:`prepare_compaction` finds where to cut a session's path (keeping about
``keep_recent_tokens`` of the latest messages, never between a tool call and its results) and
what to summarize; :func:`compact` asks the model for the summary (updating the previous one when
the path was compacted before) and returns what the ``compaction`` entry holds;
:func:`compact_session` does both and appends the entry. Nothing is deleted: the entries before
the cut stay in the session, only the context built from it starts at the summary.

Failures raise :class:`CompactionError` (pi returns them as ``Result`` values; docs/port-decisions.md #22).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...ai.abort import AbortSignal
from ...ai.types import Model, SimpleStreamOptions, ThinkingLevel
from ...core.types import StreamFn
from ..entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, Entry, MessageEntry
from ..messages import create_branch_summary_message, create_compaction_summary_message, create_custom_message
from ..tree import Session, build_session_context
from .conversation import FileOperations, compute_file_lists, extract_file_ops_from_message, format_file_operations
from .summary import ask_for_summary, conversation_prompt, reply_text, summary_max_tokens
from .tokens import DEFAULT_COMPACTION_SETTINGS, CompactionSettings, estimate_context_tokens, estimate_tokens

__all__ = [
    "SUMMARIZATION_PROMPT",
    "TURN_PREFIX_SUMMARIZATION_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CutPointResult",
    "compact",
    "compact_session",
    "find_cut_point",
    "find_turn_start_index",
    "generate_summary",
    "message_from_entry",
    "prepare_compaction",
]

CompactionErrorCode = Literal["aborted", "summarization_failed", "invalid_session", "nothing_to_compact", "unknown"]


class CompactionError(Exception):
    """A compaction that could not be made; ``code`` is pi's (plus ``nothing_to_compact``)."""

    def __init__(self, code: CompactionErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: CompactionErrorCode = code


SUMMARIZATION_PROMPT = """The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

UPDATE_SUMMARIZATION_PROMPT = """The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

TURN_PREFIX_SUMMARIZATION_PROMPT = """This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""  # noqa: E501


@dataclass(frozen=True)
class CutPointResult:
    """Where :func:`find_cut_point` cuts: the first kept entry, and the start of the turn it
    falls inside (``-1`` when the cut is at a user message, i.e. between turns)."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


@dataclass
class CompactionPreparation:
    """pi's ``CompactionPreparation``: what :func:`compact` summarizes and keeps."""

    first_kept_entry_id: str
    messages_to_summarize: list[Any]
    turn_prefix_messages: list[Any]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings = field(default=DEFAULT_COMPACTION_SETTINGS)


@dataclass(frozen=True)
class CompactionResult:
    """What a ``compaction`` entry holds: ``details`` is ``{"readFiles": [...], "modifiedFiles": [...]}``."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: dict[str, list[str]]


# ---------------------------------------------------------------------------------------------
# Entries -> messages


def message_from_entry(entry: Entry) -> dict[str, Any] | None:
    """pi's ``getMessageFromEntry``: the message an entry contributes to a context (``None`` if none)."""
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        optional = {name: getattr(entry, name) for name in ("display", "details") if name in entry.model_fields_set}
        return create_custom_message(entry.custom_type, entry.content, timestamp=entry.timestamp, **optional)
    if isinstance(entry, BranchSummaryEntry):
        return create_branch_summary_message(entry.summary, entry.from_id, entry.timestamp)
    if isinstance(entry, CompactionEntry):
        return create_compaction_summary_message(entry.summary, entry.tokens_before, entry.timestamp)
    return None


def _message_for_compaction(entry: Entry) -> dict[str, Any] | None:
    return None if isinstance(entry, CompactionEntry) else message_from_entry(entry)


# ---------------------------------------------------------------------------------------------
# Cut points

_CUT_ROLES = frozenset({"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"})


def _valid_cut_points(entries: Sequence[Entry], start: int, end: int) -> list[int]:
    """Indices where the kept part may start: a message other than a tool result (a tool result
    must follow its call), a ``branch_summary`` or a ``custom_message``."""
    points = []
    for index in range(start, end):
        entry = entries[index]
        if isinstance(entry, MessageEntry):
            if entry.message.get("role") in _CUT_ROLES:
                points.append(index)
        elif isinstance(entry, BranchSummaryEntry | CustomMessageEntry):
            points.append(index)
    return points


def find_turn_start_index(entries: Sequence[Entry], entry_index: int, start_index: int) -> int:
    """pi's ``findTurnStartIndex``: the user message (or bash execution, branch summary, custom
    message) that starts the turn holding ``entry_index``; ``-1`` if none from ``start_index``."""
    for index in range(entry_index, start_index - 1, -1):
        entry = entries[index]
        if isinstance(entry, BranchSummaryEntry | CustomMessageEntry):
            return index
        if isinstance(entry, MessageEntry) and entry.message.get("role") in ("user", "bashExecution"):
            return index
    return -1


def find_cut_point(
    entries: Sequence[Entry], start_index: int, end_index: int, keep_recent_tokens: int
) -> CutPointResult:
    """pi's ``findCutPoint``: walking back from ``end_index``, the first valid cut point at or
    after the message where the kept messages reach ``keep_recent_tokens`` (the first valid cut
    point when they never do), moved back over the non-message entries just before it."""
    points = _valid_cut_points(entries, start_index, end_index)
    if not points:
        return CutPointResult(start_index, -1, False)
    accumulated = 0
    cut = points[0]
    for index in range(end_index - 1, start_index - 1, -1):
        entry = entries[index]
        if not isinstance(entry, MessageEntry):
            continue
        accumulated += estimate_tokens(entry.message)
        if accumulated >= keep_recent_tokens:
            cut = next((point for point in points if point >= index), cut)
            break
    while cut > start_index and not isinstance(entries[cut - 1], CompactionEntry | MessageEntry):
        cut -= 1
    cut_entry = entries[cut]
    at_user = isinstance(cut_entry, MessageEntry) and cut_entry.message.get("role") == "user"
    turn_start = -1 if at_user else find_turn_start_index(entries, cut, start_index)
    return CutPointResult(cut, turn_start, not at_user and turn_start != -1)


# ---------------------------------------------------------------------------------------------
# Preparation


def _file_operations(messages: Sequence[Any], entries: Sequence[Entry], previous_index: int) -> FileOperations:
    file_ops = FileOperations()
    if previous_index >= 0:
        previous = entries[previous_index]
        assert isinstance(previous, CompactionEntry)
        details = previous.details
        if not previous.from_hook and isinstance(details, Mapping):
            _add_paths(file_ops.read, details.get("readFiles"))
            _add_paths(file_ops.edited, details.get("modifiedFiles"))
    for message in messages:
        extract_file_ops_from_message(message, file_ops)
    return file_ops


def _add_paths(target: dict[str, None], paths: Any) -> None:
    if isinstance(paths, list):
        for path in paths:
            if isinstance(path, str):
                target[path] = None


def prepare_compaction(
    path_entries: Sequence[Entry], settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS
) -> CompactionPreparation | None:
    """pi's ``prepareCompaction`` over a root-first path: ``None`` when the path is empty or ends
    with a compaction. After an earlier compaction only the entries from its first kept entry are
    considered, and its summary is passed on (``previous_summary``) to be updated."""
    if not path_entries or isinstance(path_entries[-1], CompactionEntry):
        return None
    previous_index = -1
    for index in range(len(path_entries) - 1, -1, -1):
        if isinstance(path_entries[index], CompactionEntry):
            previous_index = index
            break
    previous_summary: str | None = None
    boundary_start = 0
    if previous_index >= 0:
        previous = path_entries[previous_index]
        assert isinstance(previous, CompactionEntry)
        previous_summary = previous.summary
        kept = next((i for i, entry in enumerate(path_entries) if entry.id == previous.first_kept_entry_id), -1)
        boundary_start = kept if kept >= 0 else previous_index + 1
    boundary_end = len(path_entries)
    tokens_before = estimate_context_tokens(build_session_context(path_entries).messages).tokens
    cut = find_cut_point(path_entries, boundary_start, boundary_end, settings.keep_recent_tokens)
    first_kept = path_entries[cut.first_kept_entry_index] if cut.first_kept_entry_index < boundary_end else None
    if first_kept is None or not first_kept.id:
        raise CompactionError("invalid_session", "First kept entry has no UUID - session may need migration")
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages(path_entries[boundary_start:history_end])
    turn_prefix = (
        _messages(path_entries[cut.turn_start_index : cut.first_kept_entry_index]) if cut.is_split_turn else []
    )
    file_ops = _file_operations(to_summarize, path_entries, previous_index)
    for message in turn_prefix:
        extract_file_ops_from_message(message, file_ops)
    return CompactionPreparation(
        first_kept_entry_id=first_kept.id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )


def _messages(entries: Sequence[Entry]) -> list[Any]:
    return [message for entry in entries if (message := _message_for_compaction(entry)) is not None]


# ---------------------------------------------------------------------------------------------
# Summaries


def _options(
    model: Model,
    max_tokens: int,
    api_key: str | None,
    headers: dict[str, str] | None,
    signal: AbortSignal | None,
    thinking_level: str | None,
) -> SimpleStreamOptions:
    options = SimpleStreamOptions(max_tokens=max_tokens, signal=signal, api_key=api_key, headers=headers)
    if model.reasoning and thinking_level and thinking_level != "off":
        options.reasoning = thinking_level  # type: ignore[assignment]
    return options


async def generate_summary(
    current_messages: Sequence[Any],
    model: Model,
    reserve_tokens: int,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    signal: AbortSignal | None = None,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    thinking_level: ThinkingLevel | Literal["off"] | None = None,
    *,
    stream_fn: StreamFn | None = None,
) -> str:
    """pi's ``generateSummary``: ask ``model`` for a structured summary of ``current_messages``
    (an update of ``previous_summary`` when given; ``custom_instructions`` added as "Additional
    focus"), with at most 80% of ``reserve_tokens`` to answer in."""
    base = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        base = f"{base}\n\nAdditional focus: {custom_instructions}"
    prompt = conversation_prompt(current_messages)
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += base
    max_tokens = summary_max_tokens(model, 0.8, reserve_tokens)
    options = _options(model, max_tokens, api_key, headers, signal, thinking_level)
    reply = await ask_for_summary(model, prompt, options, stream_fn)
    if reply.stop_reason == "aborted":
        raise CompactionError("aborted", reply.error_message or "Summarization aborted")
    if reply.stop_reason == "error":
        raise CompactionError("summarization_failed", f"Summarization failed: {reply.error_message or 'Unknown error'}")
    return reply_text(reply)


async def _turn_prefix_summary(
    messages: Sequence[Any],
    model: Model,
    reserve_tokens: int,
    api_key: str | None,
    headers: dict[str, str] | None,
    signal: AbortSignal | None,
    thinking_level: str | None,
    stream_fn: StreamFn | None,
) -> str:
    prompt = conversation_prompt(messages) + TURN_PREFIX_SUMMARIZATION_PROMPT
    options = _options(model, summary_max_tokens(model, 0.5, reserve_tokens), api_key, headers, signal, thinking_level)
    reply = await ask_for_summary(model, prompt, options, stream_fn)
    if reply.stop_reason == "aborted":
        raise CompactionError("aborted", reply.error_message or "Turn prefix summarization aborted")
    if reply.stop_reason == "error":
        message = reply.error_message or "Unknown error"
        raise CompactionError("summarization_failed", f"Turn prefix summarization failed: {message}")
    return reply_text(reply)


async def _no_history() -> str:
    return "No prior history."


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    custom_instructions: str | None = None,
    signal: AbortSignal | None = None,
    thinking_level: ThinkingLevel | Literal["off"] | None = None,
    *,
    stream_fn: StreamFn | None = None,
) -> CompactionResult:
    """pi's ``compact``: the summary of a prepared cut, with the tracked files appended.

    When the cut splits a turn, the history before the turn and the turn's cut-off prefix are
    summarized by two requests at once and joined."""
    prep = preparation
    if not prep.first_kept_entry_id:
        raise CompactionError("invalid_session", "First kept entry has no UUID - session may need migration")
    reserve = prep.settings.reserve_tokens

    def history() -> Awaitable[str]:
        return generate_summary(
            prep.messages_to_summarize,
            model,
            reserve,
            api_key,
            headers,
            signal,
            custom_instructions,
            prep.previous_summary,
            thinking_level,
            stream_fn=stream_fn,
        )

    if prep.is_split_turn and prep.turn_prefix_messages:
        prefix = _turn_prefix_summary(
            prep.turn_prefix_messages, model, reserve, api_key, headers, signal, thinking_level, stream_fn
        )
        # Both requests run to their end, then the history's failure is reported first (as pi's
        # Promise.all over two Results does).
        results = await asyncio.gather(
            history() if prep.messages_to_summarize else _no_history(), prefix, return_exceptions=True
        )
        for outcome in results:
            if isinstance(outcome, BaseException):
                raise outcome
        summary = f"{results[0]}\n\n---\n\n**Turn Context (split turn):**\n\n{results[1]}"
    else:
        summary = await history()
    read_files, modified_files = compute_file_lists(prep.file_ops)
    summary += format_file_operations(read_files, modified_files)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=prep.first_kept_entry_id,
        tokens_before=prep.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
    )


async def compact_session(
    session: Session,
    model: Model,
    *,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    custom_instructions: str | None = None,
    signal: AbortSignal | None = None,
    thinking_level: ThinkingLevel | Literal["off"] | None = None,
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
    stream_fn: StreamFn | None = None,
) -> CompactionEntry:
    """Compact the session's current path and append the ``compaction`` entry (what pi's CLI does
    on ``/compact``). Raises :class:`CompactionError` (the session is then unchanged)."""
    path = session.path()
    preparation = prepare_compaction(path, settings)
    if preparation is None:
        if path and isinstance(path[-1], CompactionEntry):
            raise CompactionError("nothing_to_compact", "Already compacted")
        raise CompactionError("nothing_to_compact", "Nothing to compact (session too small)")
    result = await compact(
        preparation, model, api_key, headers, custom_instructions, signal, thinking_level, stream_fn=stream_fn
    )
    if signal is not None and signal.aborted:
        raise CompactionError("aborted", "Compaction cancelled")
    return session.append_compaction(
        result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_hook=False
    )
