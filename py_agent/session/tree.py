"""A session as pi keeps it: an append-only tree of entries with a current leaf.

Appending makes the new entry a child of the current leaf and moves the leaf to it. Moving the
leaf to an earlier entry (:meth:`Session.branch`, :meth:`Session.branch_before`) and appending
again starts a branch; nothing is ever rewritten. :meth:`Session.build_context` walks from a leaf
to the root and builds what the model sees, as pi's ``buildSessionContext`` does (compaction,
branch summaries, custom messages, thinking level and model).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ._ids import iso_from_ms, new_entry_id, now_ms, uuidv7
from .entries import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from .messages import (
    agent_messages,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    message_to_json,
    to_json_value,
)
from .metadata import ModelRef, SessionMetadata, compute_metadata, update_metadata

__all__ = [
    "CURRENT",
    "SYSTEM_PROMPT_CUSTOM_TYPE",
    "EntryNotFound",
    "Session",
    "SessionContext",
    "SessionTree",
    "SessionWarning",
    "TreeNode",
    "build_session_context",
    "build_session_projection",
    "context_edits",
    "context_entries",
]

SYSTEM_PROMPT_CUSTOM_TYPE = "py-agent.system-prompt"
"""``customType`` of the ``custom`` entries that keep the system prompt (``data.systemPrompt``).
pi's CLI ignores them (custom entries are never part of the model's context)."""


class _Current(Enum):
    CURRENT = "current"


CURRENT = _Current.CURRENT
"""Default of ``leaf_id`` arguments: the session's current leaf."""


class EntryNotFound(KeyError):
    """No entry with that id in the session."""

    def __str__(self) -> str:
        return f"Entry {self.args[0]} not found"


@dataclass(frozen=True)
class SessionWarning:
    """Something skipped or repaired while reading a session (``line``: 1-based line or record number)."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


@dataclass
class SessionContext:
    """What a leaf's path gives the model: pi's ``SessionContext``.

    ``messages`` are pi's JSON (dicts), session-made ones included (``compactionSummary``,
    ``branchSummary``, ``custom``); :meth:`agent_messages` turns the LLM roles into models for an
    ``Agent`` and :func:`~py_agent.session.convert_to_llm` turns all into LLM messages.
    ``system_prompt`` is this app's addition (see :data:`SYSTEM_PROMPT_CUSTOM_TYPE`).
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None
    system_prompt: str | None = None

    def agent_messages(self) -> list[Any]:
        return agent_messages(self.messages)


@dataclass
class TreeNode:
    """One entry of :meth:`Session.tree` with its children (in append order) and its label."""

    entry: Entry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def _entry_messages(entry: Entry) -> list[dict[str, Any]]:
    """pi 1.6.0's ``sessionEntryToContextMessages``: what one entry gives the model."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        role = message.get("role")
        # Hand-edited or old files may hold a message without content.
        if message.get("content") is None:
            if role == "system":
                return [{**message, "content": ""}]
            if role in ("user", "assistant", "toolResult"):
                return [{**message, "content": []}]
        return [message]
    if isinstance(entry, CustomMessageEntry):
        fields_set = entry.model_fields_set
        optional = {name: getattr(entry, name) for name in ("display", "details") if name in fields_set}
        return [create_custom_message(entry.custom_type, entry.content, timestamp=entry.timestamp, **optional)]
    if isinstance(entry, BranchSummaryEntry) and entry.summary:
        return [create_branch_summary_message(entry.summary, entry.from_id, entry.timestamp)]
    if isinstance(entry, CompactionEntry):
        summary = create_compaction_summary_message(entry.summary, entry.tokens_before, entry.timestamp)
        return [entry.system_message, summary] if entry.system_message else [summary]
    return []


def _project(entry: Entry, edit: ContextEditEntry | None) -> list[dict[str, Any]]:
    """pi 1.6.0's ``projectContextEntry``: the entry's messages with its latest context edit applied."""
    messages = _entry_messages(entry)
    if edit is None:
        return messages
    replacement = edit.replacement
    if replacement is None:
        return []
    projected = []
    for message in messages:
        role = message.get("role")
        if role in _EDITABLE_ROLES:
            message = {key: value for key, value in message.items() if key != "content"}
            if "content" in replacement:  # JSON.stringify leaves out an undefined content
                content = replacement["content"]
                if role in ("assistant", "toolResult") and isinstance(content, str):
                    content = [{"type": "text", "text": content}]
                message["content"] = content
        projected.append(message)
    return projected


def context_entries(path: Sequence[Entry]) -> list[Entry]:
    """pi 1.6.0's ``buildContextEntries`` over a root-first path: with a compaction on it, the
    latest compaction, then the entries from its ``first_kept_entry_id`` up to it (``system``
    messages left out: the compaction's ``system_message`` stands for them), then those after it;
    otherwise the whole path."""
    compaction_index = next(
        (index for index in range(len(path) - 1, -1, -1) if isinstance(path[index], CompactionEntry)), -1
    )
    if compaction_index < 0:
        return list(path)
    compaction = path[compaction_index]
    assert isinstance(compaction, CompactionEntry)
    selected: list[Entry] = [compaction]
    found_first_kept = False
    for entry in path[:compaction_index]:
        if entry.id == compaction.first_kept_entry_id:
            found_first_kept = True
        if found_first_kept and not (isinstance(entry, MessageEntry) and entry.message.get("role") == "system"):
            selected.append(entry)
    selected.extend(path[compaction_index + 1 :])
    return selected


def context_edits(entries: Iterable[Entry]) -> dict[str, ContextEditEntry]:
    """The latest ``context_edit`` of each target among ``entries`` (e.g. :func:`context_entries`)."""
    return {entry.target_id: entry for entry in entries if isinstance(entry, ContextEditEntry)}


def build_session_projection(path: Sequence[Entry]) -> list[tuple[Entry, list[dict[str, Any]]]]:
    """pi 1.6.0's ``buildSessionProjection`` (its ``entries``): each entry :func:`context_entries`
    selects, with the messages it gives the model after the latest ``context_edit`` of it (none
    for an entry an edit removed; an older compaction in the kept range gives none)."""
    selected = context_entries(path)
    edits = context_edits(selected)
    return [
        (entry, [] if isinstance(entry, CompactionEntry) and index > 0 else _project(entry, edits.get(entry.id)))
        for index, entry in enumerate(selected)
    ]


def build_session_context(path: Sequence[Entry]) -> SessionContext:
    """pi's ``buildSessionContext`` over a root-first path (pi 1.6.0's, which reads 0.79.10's files alike).

    The last ``thinking_level_change`` gives the thinking level (default ``"off"``); the last
    ``model_change`` or assistant message the model. The messages are those of
    :func:`build_session_projection`: with a compaction on the path, its ``system_message`` (if
    any) and summary, then the messages from its ``first_kept_entry_id`` on; ``message`` entries
    give their message (``system`` ones too: :func:`~py_agent.session.convert_to_llm` leaves them
    out, the app sends its own prompt), ``custom_message`` entries a ``custom`` message,
    ``branch_summary`` entries with a summary a ``branchSummary`` message, each as its latest
    ``context_edit`` leaves it; the rest give nothing.
    """
    context = SessionContext()
    for entry in path:
        if isinstance(entry, ThinkingLevelChangeEntry):
            context.thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            context.model = ModelRef(provider=entry.provider, model_id=entry.model_id)
        elif isinstance(entry, MessageEntry):
            message = entry.message
            if message.get("role") == "assistant":
                provider, model = message.get("provider"), message.get("model")
                if isinstance(provider, str) and isinstance(model, str):
                    context.model = ModelRef(provider=provider, model_id=model)
        elif (
            isinstance(entry, CustomEntry)
            and entry.custom_type == SYSTEM_PROMPT_CUSTOM_TYPE
            and isinstance(entry.data, dict)
            and isinstance(entry.data.get("systemPrompt"), str)
        ):
            context.system_prompt = entry.data["systemPrompt"]
    for _, messages in build_session_projection(path):
        context.messages.extend(messages)
    return context


_NEWLINES = re.compile(r"[\r\n]+")


class Session:
    """One session: its header, its entries in append order, the current leaf and its metadata.

    ``clock`` (epoch milliseconds) and ``id_generator`` (a short-id candidate) can be injected for
    tests. ``warnings`` lists what was skipped or repaired when the session was read
    (:func:`~py_agent.session.import_jsonl`, :func:`~py_agent.session.load_session`), and
    ``source_version`` the format version it was read from.
    """

    def __init__(
        self,
        header: SessionHeader,
        entries: Iterable[Entry] = (),
        *,
        leaf_id: str | _Current | None = CURRENT,
        clock: Callable[[], int] | None = None,
        id_generator: Callable[[], str] | None = None,
    ) -> None:
        self._header = header
        self._clock = clock or now_ms
        self._id_generator = id_generator
        self._entries: list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._order: dict[str, int] = {}
        self._children: dict[str | None, list[str]] = {}
        self._labels: dict[str, str] = {}
        self._label_times: dict[str, str] = {}
        self._name: str | None = None
        self._leaf_id: str | None = None
        self.warnings: list[SessionWarning] = []
        self.source_version: int | float = CURRENT_SESSION_VERSION
        for entry in entries:
            self._index(entry)
        self._metadata = compute_metadata(header, self._entries)
        if leaf_id is None:
            self.reset_leaf()
        elif leaf_id is not CURRENT:
            self.branch(leaf_id)

    # ---- construction ----

    @classmethod
    def create(
        cls,
        *,
        session_id: str | None = None,
        cwd: str = "/",
        parent_session: str | None = None,
        clock: Callable[[], int] | None = None,
        id_generator: Callable[[], str] | None = None,
    ) -> Session:
        """A new, empty session: header ``{"type":"session","version":3,"id","timestamp","cwd"}``
        (``cwd`` ``"/"`` for the browser's workspace; ``parentSession`` only when given)."""
        ms = (clock or now_ms)()
        values: dict[str, Any] = {
            "version": CURRENT_SESSION_VERSION,
            "id": session_id or uuidv7(ms),
            "timestamp": iso_from_ms(ms),
            "cwd": cwd,
        }
        if parent_session is not None:
            values["parent_session"] = parent_session
        return cls(SessionHeader(**values), clock=clock, id_generator=id_generator)

    # ---- reading ----

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def entries(self) -> list[Entry]:
        """All entries in append order (a copy of the list; the entries themselves are immutable)."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def get(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def __getitem__(self, entry_id: str) -> Entry:
        try:
            return self._by_id[entry_id]
        except KeyError:
            raise EntryNotFound(entry_id) from None

    @property
    def leaf_id(self) -> str | None:
        """The current leaf: where the next entry is appended (``None``: before the first entry)."""
        return self._leaf_id

    @property
    def leaf(self) -> Entry | None:
        return self._by_id.get(self._leaf_id) if self._leaf_id is not None else None

    @property
    def metadata(self) -> SessionMetadata:
        """The session-list record, kept up to date by every append and leaf move (the live object)."""
        return self._metadata

    @property
    def name(self) -> str | None:
        """The latest ``session_info`` name, trimmed; ``None`` when unset or cleared (pi's ``getSessionName``)."""
        return self._name

    @property
    def title(self) -> str:
        """``name``, else a title made from the first user message (see ``derive_title``)."""
        return self._metadata.title

    def label(self, entry_id: str) -> str | None:
        """The label on an entry, if any."""
        return self._labels.get(entry_id)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def children(self, parent_id: str | None) -> list[Entry]:
        """The entries whose ``parentId`` is ``parent_id`` (``None``: the roots), in append order."""
        return [self._by_id[child] for child in self._children.get(parent_id, ())]

    def siblings(self, entry_id: str) -> list[Entry]:
        """The entry and the other children of its parent, in append order: the alternatives a
        branch point offers (e.g. the edits of a user message)."""
        return self.children(self[entry_id].parent_id)

    def leaves(self) -> list[Entry]:
        """Entries with no children (one per branch), in append order."""
        return [entry for entry in self._entries if not self._children.get(entry.id)]

    def latest_leaf(self, entry_id: str) -> str:
        """The most recently appended leaf at or below ``entry_id``: where to go when the user
        switches to that branch."""
        best = self[entry_id].id
        best_order = -1
        stack = [best]
        seen: set[str] = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            kids = self._children.get(current)
            if kids:
                stack.extend(kids)
            elif self._order[current] > best_order:
                best, best_order = current, self._order[current]
        return best

    def path(self, leaf_id: str | _Current | None = CURRENT) -> list[Entry]:
        """The entries from the root to ``leaf_id`` (default: the current leaf), root first.

        The walk stops at a missing parent or a cycle (possible only in a damaged file).
        """
        start = self._leaf_id if leaf_id is CURRENT else leaf_id
        if start is None:
            return []
        current: Entry | None = self[start]
        path: list[Entry] = []
        seen: set[str] = set()
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            parent = current.parent_id
            current = self._by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    def build_context(self, leaf_id: str | _Current | None = CURRENT) -> SessionContext:
        """What the model sees at ``leaf_id`` (default: the current leaf); see :func:`build_session_context`."""
        return build_session_context(self.path(leaf_id))

    def tree(self) -> list[TreeNode]:
        """The entries as a tree: the roots (and orphans, whose parent is missing), children in append order."""
        nodes = {entry.id: TreeNode(entry, label=self._labels.get(entry.id)) for entry in self._entries}
        roots: list[TreeNode] = []
        for entry in self._entries:
            parent = entry.parent_id
            if parent is None or parent == entry.id or parent not in nodes:
                roots.append(nodes[entry.id])
            else:
                nodes[parent].children.append(nodes[entry.id])
        return roots

    # ---- appending ----

    def new_entry_id(self) -> str:
        """A fresh entry id: 8 hex characters not used in this session (a full UUID if that fails)."""
        return new_entry_id(self._by_id, self._id_generator)

    def now_iso(self) -> str:
        return iso_from_ms(self._clock())

    def append(self, entry: Entry) -> Entry:
        """Append a ready-made entry (its ``parentId`` as given) and make it the leaf.

        Raises ``ValueError`` if its id is already used.
        """
        self._index(entry)
        update_metadata(self._metadata, entry)
        return entry

    def _base(self) -> dict[str, Any]:
        return {"id": self.new_entry_id(), "parent_id": self._leaf_id, "timestamp": self.now_iso()}

    def append_message(self, message: Any) -> MessageEntry:
        """Append an agent message (pydantic model, custom-role object or dict) as a ``message`` entry."""
        entry = MessageEntry(**self._base(), message=message_to_json(message))
        self.append(entry)
        return entry

    def append_thinking_level_change(self, thinking_level: str) -> ThinkingLevelChangeEntry:
        entry = ThinkingLevelChangeEntry(**self._base(), thinking_level=thinking_level)
        self.append(entry)
        return entry

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        entry = ModelChangeEntry(**self._base(), provider=provider, model_id=model_id)
        self.append(entry)
        return entry

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any = None,
        from_hook: bool | None = None,
    ) -> CompactionEntry:
        """Append a compaction: the context then starts with ``summary``, then the path from
        ``first_kept_entry_id``. ``details``/``from_hook`` are written only when not ``None``."""
        optional = _given(details=to_json_value(details), from_hook=from_hook)
        entry = CompactionEntry(
            **self._base(),
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            **optional,
        )
        self.append(entry)
        return entry

    def append_usage(self, kind: str, provider: str, model: str, usage: Any, note: str | None = None) -> UsageEntry:
        """Record usage a model was paid for outside the conversation (pi 1.x ``appendUsage``;
        ``kind`` e.g. ``"cache_warm"``): counted in the session's totals, never in the context."""
        entry = UsageEntry(
            **self._base(), kind=kind, provider=provider, model=model, usage=to_json_value(usage), **_given(note=note)
        )
        self.append(entry)
        return entry

    def append_context_edit(self, target_id: str, replacement: Any) -> ContextEditEntry:
        """Change what the model sees of an earlier entry from here on (pi 1.x ``appendContextEdit``):
        ``None`` leaves it out, ``{"content": ...}`` replaces its content (a string for a reply or a
        tool result becomes one text block). The target must be a user, assistant or tool-result
        message, or a custom message, on the current branch; raises ``ValueError`` otherwise."""
        if replacement is not None:
            replacement = to_json_value(replacement)
            if not isinstance(replacement, dict) or not isinstance(replacement.get("content"), str | list):
                raise ValueError("Context edit replacement must be null or contain string/array content")
        target = self[target_id]
        if all(entry.id != target_id for entry in self.path()):
            raise ValueError(f"Entry {target_id} is not on the active branch")
        role = target.message.get("role") if isinstance(target, MessageEntry) else None
        if not isinstance(target, CustomMessageEntry) and role not in ("user", "assistant", "toolResult"):
            raise ValueError(f"Entry {target_id} does not contribute editable model content")
        if replacement is not None and role in ("assistant", "toolResult") and isinstance(replacement["content"], str):
            replacement = {"content": [{"type": "text", "text": replacement["content"]}]}
        entry = ContextEditEntry(**self._base(), target_id=target_id, replacement=replacement)
        self.append(entry)
        return entry

    def append_custom(self, custom_type: str, data: Any = None) -> CustomEntry:
        """Append state for an extension or the app (never part of the model's context)."""
        entry = CustomEntry(custom_type=custom_type, **_given(data=to_json_value(data)), **self._base())
        self.append(entry)
        return entry

    def append_custom_message(
        self, custom_type: str, content: str | list[Any], display: bool = True, details: Any = None
    ) -> CustomMessageEntry:
        """Append a message for the model's context (a ``custom``-role message; ``display``: shown in the UI)."""
        entry = CustomMessageEntry(
            custom_type=custom_type,
            content=to_json_value(content),
            display=display,
            **_given(details=to_json_value(details)),
            **self._base(),
        )
        self.append(entry)
        return entry

    def append_label(self, target_id: str, label: str | None) -> LabelEntry:
        """Set (a non-empty ``label``) or clear (``None`` or ``""``) the label on an entry."""
        self[target_id]
        entry = LabelEntry(**self._base(), target_id=target_id, **_given(label=label))
        self.append(entry)
        return entry

    def append_session_info(self, name: str) -> SessionInfoEntry:
        """Rename the session (line breaks become spaces, then trimmed; ``""`` clears the name)."""
        entry = SessionInfoEntry(**self._base(), name=_NEWLINES.sub(" ", name).strip())
        self.append(entry)
        return entry

    set_name = append_session_info

    def append_system_prompt(self, system_prompt: str) -> CustomEntry:
        """Keep the system prompt in the session (a ``custom`` entry; see :data:`SYSTEM_PROMPT_CUSTOM_TYPE`)."""
        return self.append_custom(SYSTEM_PROMPT_CUSTOM_TYPE, {"systemPrompt": system_prompt})

    # ---- branching ----

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an earlier entry: the next append starts a branch there."""
        self._leaf_id = self[entry_id].id
        self._metadata.leaf_id = self._leaf_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry: the next append is a new root."""
        self._leaf_id = None
        self._metadata.leaf_id = None

    def branch_before(self, entry_id: str) -> None:
        """Move the leaf to the parent of ``entry_id``, so that the next append is its sibling
        (editing an earlier user message and resending it)."""
        parent = self[entry_id].parent_id
        if parent is None or parent not in self._by_id:
            self.reset_leaf()
        else:
            self.branch(parent)

    def branch_with_summary(
        self, branch_from_id: str | None, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> BranchSummaryEntry:
        """Move the leaf to ``branch_from_id`` (``None``: before the first entry) and append a
        summary of the branch left behind (``fromId`` is the branch point, or ``"root"``)."""
        if branch_from_id is None:
            self.reset_leaf()
        else:
            self.branch(branch_from_id)
        entry = BranchSummaryEntry(
            **self._base(),
            from_id=branch_from_id if branch_from_id is not None else "root",
            summary=summary,
            **_given(details=to_json_value(details), from_hook=from_hook),
        )
        self.append(entry)
        return entry

    def fork(self, leaf_id: str | _Current | None = CURRENT) -> Session:
        """A new session holding only the path to ``leaf_id`` (pi's ``createBranchedSession``):
        the path's entries without labels, then one label entry per label still on them;
        ``parentSession`` names this session."""
        path = [entry for entry in self.path(leaf_id) if not isinstance(entry, LabelEntry)]
        forked = Session.create(
            cwd=self._header.cwd or "/", parent_session=self.id, clock=self._clock, id_generator=self._id_generator
        )
        for entry in path:
            forked.append(entry)
        for entry in path:
            label = self._labels.get(entry.id)
            if label is not None:
                forked.append(
                    LabelEntry(
                        id=forked.new_entry_id(),
                        parent_id=forked.leaf_id,
                        timestamp=self._label_times.get(entry.id) or forked.now_iso(),
                        target_id=entry.id,
                        label=label,
                    )
                )
        return forked

    # ---- internals ----

    def _index(self, entry: Entry) -> None:
        entry_id = entry.id
        if entry_id in self._by_id:
            raise ValueError(f"duplicate entry id {entry_id!r}")
        self._order[entry_id] = len(self._entries)
        self._entries.append(entry)
        self._by_id[entry_id] = entry
        self._children.setdefault(entry.parent_id, []).append(entry_id)
        self._leaf_id = entry_id
        if isinstance(entry, LabelEntry):
            if entry.label:
                self._labels[entry.target_id] = entry.label
                self._label_times[entry.target_id] = entry.timestamp
            else:
                self._labels.pop(entry.target_id, None)
                self._label_times.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry):
            self._name = (entry.name or "").strip() or None


SessionTree = Session
"""The same class under the name the design notes use."""


def _given(**values: Any) -> dict[str, Any]:
    """The keyword arguments that are not ``None`` (so that unset optional fields stay unwritten)."""
    return {key: value for key, value in values.items() if value is not None}
