"""Sessions in pi's session format (version 3): entries, the session tree, context building,
``.jsonl`` import/export and session-list metadata. Pure: stdlib and pydantic only, so the same
code serves the browser's IndexedDB store and CPython users.

Typical use::

    session = Session.create()                      # header {"type":"session","version":3,...}
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    entry = session.append_message(user_message)     # persist entry.to_json() (one record)
    store_metadata(session.metadata.to_json())       # the session list's record, O(1) per append
    context = session.build_context()                # messages, thinking level, model
    agent.state.messages = context.agent_messages()
    text = export_jsonl(session)                     # opens in pi's CLI
    again = import_jsonl(text)                       # any version; again.warnings
"""

from ._ids import iso_from_ms, new_entry_id, now_iso, parse_iso_ms, uuidv7
from ._json import JsonError
from ._json import parse as json_parse
from ._json import stringify as json_stringify
from .attachments import attachment_entries, detach_attachments, export_with_attachments
from .entries import (
    CURRENT_SESSION_VERSION,
    KNOWN_ENTRY_TYPES,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    EntryError,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    entry_from_json,
    header_from_json,
)
from .jsonl import (
    REDACTED,
    Redactor,
    entry_to_line,
    export_jsonl,
    export_lines,
    header_to_line,
    import_jsonl,
    load_session,
    secret_redactor,
)
from .messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    agent_messages,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    message_from_json,
    message_text,
    message_to_json,
    to_json_value,
    typed_text,
)
from .metadata import (
    METADATA_FORMAT,
    PREVIEW_MAX_CHARS,
    TITLE_MAX_CHARS,
    ModelRef,
    SessionMetadata,
    compute_metadata,
    derive_title,
    new_metadata,
    update_metadata,
)
from .tree import (
    CURRENT,
    SYSTEM_PROMPT_CUSTOM_TYPE,
    EntryNotFound,
    Session,
    SessionContext,
    SessionTree,
    SessionWarning,
    TreeNode,
    build_session_context,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "CURRENT",
    "CURRENT_SESSION_VERSION",
    "KNOWN_ENTRY_TYPES",
    "METADATA_FORMAT",
    "PREVIEW_MAX_CHARS",
    "REDACTED",
    "SYSTEM_PROMPT_CUSTOM_TYPE",
    "TITLE_MAX_CHARS",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "Entry",
    "EntryError",
    "EntryNotFound",
    "JsonError",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "Redactor",
    "Session",
    "SessionContext",
    "SessionHeader",
    "SessionInfoEntry",
    "SessionMetadata",
    "SessionTree",
    "SessionWarning",
    "ThinkingLevelChangeEntry",
    "TreeNode",
    "UnknownEntry",
    "agent_messages",
    "attachment_entries",
    "build_session_context",
    "compute_metadata",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
    "derive_title",
    "detach_attachments",
    "entry_from_json",
    "entry_to_line",
    "export_jsonl",
    "export_lines",
    "export_with_attachments",
    "header_from_json",
    "header_to_line",
    "import_jsonl",
    "iso_from_ms",
    "json_parse",
    "json_stringify",
    "load_session",
    "message_from_json",
    "message_text",
    "message_to_json",
    "new_entry_id",
    "new_metadata",
    "now_iso",
    "parse_iso_ms",
    "secret_redactor",
    "to_json_value",
    "typed_text",
    "update_metadata",
    "uuidv7",
]
