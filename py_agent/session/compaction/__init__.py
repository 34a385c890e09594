"""Compaction, as pi-agent-core 0.79.10 does it (``dist/harness/compaction/``): token estimates,
when to compact, where to cut, the summary that replaces what is cut, and branch summaries.

It lives in the session layer because it reads session entries and asks a model (``ai``) for the
summary; nothing here touches storage or the page (the app drives it: ``py_agent/app/chat.py``).

Typical use (what pi's CLI does on ``/compact``)::

    entry = await compact_session(session, model, api_key=key)   # appends a ``compaction`` entry
    agent.state.messages = session.build_context().agent_messages()
"""

from .branch import (
    BranchPreparation,
    BranchSummaryError,
    BranchSummaryResult,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from .compact import (
    SUMMARIZATION_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    CompactionError,
    CompactionPreparation,
    CompactionResult,
    CutPointResult,
    compact,
    compact_session,
    find_cut_point,
    find_turn_start_index,
    generate_summary,
    prepare_compaction,
)
from .conversation import (
    FileOperations,
    compute_file_lists,
    extract_file_ops_from_message,
    format_file_operations,
    serialize_conversation,
)
from .summary import SUMMARIZATION_SYSTEM_PROMPT
from .tokens import (
    DEFAULT_COMPACTION_SETTINGS,
    ESTIMATED_IMAGE_CHARS,
    CompactionSettings,
    ContextUsageEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "ESTIMATED_IMAGE_CHARS",
    "SUMMARIZATION_PROMPT",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "TURN_PREFIX_SUMMARIZATION_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
    "BranchPreparation",
    "BranchSummaryError",
    "BranchSummaryResult",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextUsageEstimate",
    "CutPointResult",
    "FileOperations",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compact",
    "compact_session",
    "compute_file_lists",
    "estimate_context_tokens",
    "estimate_tokens",
    "extract_file_ops_from_message",
    "find_cut_point",
    "find_turn_start_index",
    "format_file_operations",
    "generate_branch_summary",
    "generate_summary",
    "get_last_assistant_usage",
    "prepare_branch_entries",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
]
