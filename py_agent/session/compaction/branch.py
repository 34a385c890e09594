"""Branch summaries: pi-agent-core 0.79.10's ``dist/harness/compaction/branch-summarization.js``.

When the user leaves a branch for another point of the session tree, the entries of the branch
left behind (from the old leaf back to the common ancestor) can be summarized; the summary is
appended where the user arrives (``Session.branch_with_summary``), so the model knows what was
tried there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...ai.abort import AbortSignal
from ...ai.types import Model, SimpleStreamOptions
from ...core.types import StreamFn
from ..entries import BranchSummaryEntry, CompactionEntry, Entry, MessageEntry
from ..tree import Session
from .compact import message_from_entry
from .conversation import FileOperations, compute_file_lists, extract_file_ops_from_message, format_file_operations
from .summary import ask_for_summary, conversation_prompt, reply_text
from .tokens import estimate_tokens

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "BRANCH_SUMMARY_PROMPT",
    "BranchPreparation",
    "BranchSummaryError",
    "BranchSummaryResult",
    "collect_entries_for_branch_summary",
    "generate_branch_summary",
    "prepare_branch_entries",
]

BranchSummaryErrorCode = Literal["aborted", "summarization_failed", "invalid_session"]


class BranchSummaryError(Exception):
    """A branch summary that could not be made; ``code`` is pi's."""

    def __init__(self, code: BranchSummaryErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: BranchSummaryErrorCode = code


BRANCH_SUMMARY_PREAMBLE = """The user explored a different conversation branch before returning here.
Summary of that exploration:

"""

BRANCH_SUMMARY_PROMPT = """Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""


@dataclass
class BranchPreparation:
    """What :func:`prepare_branch_entries` returns (pi's ``BranchPreparation``)."""

    messages: list[Any] = field(default_factory=list)
    file_ops: FileOperations = field(default_factory=FileOperations)
    total_tokens: int = 0


@dataclass(frozen=True)
class BranchSummaryResult:
    """The summary text (preamble and tracked files included) and the files it lists."""

    summary: str
    read_files: list[str]
    modified_files: list[str]


def collect_entries_for_branch_summary(
    session: Session, old_leaf_id: str | None, target_id: str
) -> tuple[list[Entry], str | None]:
    """pi's ``collectEntriesForBranchSummary``: the entries from the common ancestor of
    ``old_leaf_id`` and ``target_id`` (excluded) to ``old_leaf_id``, root first, and that ancestor's id."""
    if not old_leaf_id:
        return [], None
    old_path = {entry.id for entry in session.path(old_leaf_id)}
    common: str | None = None
    for entry in reversed(session.path(target_id)):
        if entry.id in old_path:
            common = entry.id
            break
    entries: list[Entry] = []
    current: str | None = old_leaf_id
    while current and current != common:
        found = session.get(current)
        if found is None:
            raise BranchSummaryError("invalid_session", f"Entry {current} not found")
        entries.append(found)
        current = found.parent_id
    entries.reverse()
    return entries, common


def _branch_message(entry: Entry) -> dict[str, Any] | None:
    # Tool results are left out of branch summaries (pi's getMessageFromEntry in this module).
    if isinstance(entry, MessageEntry) and entry.message.get("role") == "toolResult":
        return None
    return message_from_entry(entry)


def prepare_branch_entries(entries: Sequence[Entry], token_budget: int = 0) -> BranchPreparation:
    """pi's ``prepareBranchEntries``: the newest messages of ``entries`` that fit ``token_budget``
    (0: all), in order, with the files their tool calls touched (and those earlier branch summaries
    tracked). A summary that does not fit is still kept when under 90% of the budget is used."""
    prepared = BranchPreparation()
    file_ops = prepared.file_ops
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry) and not entry.from_hook and isinstance(entry.details, Mapping):
            for key, target in (("readFiles", file_ops.read), ("modifiedFiles", file_ops.edited)):
                paths = entry.details.get(key)
                if isinstance(paths, list):
                    target.update((path, None) for path in paths if isinstance(path, str))
    kept: list[Any] = []
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        extract_file_ops_from_message(message, file_ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and prepared.total_tokens + tokens > token_budget:
            if isinstance(entry, CompactionEntry | BranchSummaryEntry) and prepared.total_tokens < token_budget * 0.9:
                kept.append(message)
                prepared.total_tokens += tokens
            break
        kept.append(message)
        prepared.total_tokens += tokens
    kept.reverse()
    prepared.messages = kept
    return prepared


async def generate_branch_summary(
    entries: Sequence[Entry],
    model: Model,
    *,
    api_key: str | None = None,
    headers: dict[str, str] | None = None,
    signal: AbortSignal | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    reserve_tokens: int = 16384,
    stream_fn: StreamFn | None = None,
) -> BranchSummaryResult:
    """pi's ``generateBranchSummary``: summarize a branch's entries (within the model's window
    less ``reserve_tokens``; answer in at most 2,048 tokens). Raises :class:`BranchSummaryError`."""
    budget = (model.context_window or 128000) - reserve_tokens
    prepared = prepare_branch_entries(entries, budget)
    if not prepared.messages:
        return BranchSummaryResult("No content to summarize", [], [])
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    else:
        instructions = BRANCH_SUMMARY_PROMPT
    options = SimpleStreamOptions(api_key=api_key, headers=headers, signal=signal, max_tokens=2048)
    reply = await ask_for_summary(model, conversation_prompt(prepared.messages) + instructions, options, stream_fn)
    if reply.stop_reason == "aborted":
        raise BranchSummaryError("aborted", reply.error_message or "Branch summary aborted")
    if reply.stop_reason == "error":
        raise BranchSummaryError(
            "summarization_failed", f"Branch summary failed: {reply.error_message or 'Unknown error'}"
        )
    read_files, modified_files = compute_file_lists(prepared.file_ops)
    summary = BRANCH_SUMMARY_PREAMBLE + reply_text(reply) + format_file_operations(read_files, modified_files)
    return BranchSummaryResult(summary or "No summary generated", read_files, modified_files)
