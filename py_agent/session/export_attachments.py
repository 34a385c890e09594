"""Data that travels with a session's ``.jsonl`` export without being part of the session.

An *attachment* is app state kept outside the session's entries (e.g. a chat's workspace files)
that an export carries and an import restores. It is written as one pi ``custom`` entry per
attachment, appended after the stored entries: ``{"type":"custom","customType":...,"data":...,
"id":<new>,"parentId":<the current leaf>,"timestamp":...}``. Custom entries are never part of the
model's context, so pi's CLI reads the file and sees the same conversation (it resumes at the
last entry, whose parent is the session's current leaf).

On import, :func:`detach_attachments` takes those entries out again: they are not stored, and an
entry whose parent was one of them is re-parented to that entry's parent, so the stored tree, the
leaf and every context equal the original's.

Pure: standard library and pydantic only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from ._ids import new_entry_id
from ._json import stringify
from .entries import CustomEntry, Entry
from .jsonl import _scrubber, export_lines
from .tree import CURRENT, Session

__all__ = ["attachment_entries", "detach_attachments", "export_with_attachments"]


def attachment_entries(session: Session, attachments: Sequence[tuple[str, Any]]) -> list[CustomEntry]:
    """The ``custom`` entries carrying ``attachments`` (``(custom_type, data)`` pairs, in order):
    fresh ids, the first one's parent the session's current leaf, each next one's the one before.
    The session is not changed."""
    taken: set[str] = {entry.id for entry in session}
    parent = session.leaf_id
    entries: list[CustomEntry] = []
    for custom_type, data in attachments:
        entry_id = new_entry_id(taken)
        taken.add(entry_id)
        entries.append(
            CustomEntry(id=entry_id, parent_id=parent, timestamp=session.now_iso(), custom_type=custom_type, data=data)
        )
        parent = entry_id
    return entries


def export_with_attachments(
    session: Session, attachments: Sequence[tuple[str, Any]] = (), *, secrets: Iterable[str] = ()
) -> str:
    """:func:`~py_agent.session.export_jsonl` (the stored entries line for line), then one
    ``custom`` line per attachment. Every string in ``secrets`` is scrubbed from every line,
    the attachments' data included."""
    wanted = list(secrets)
    lines = export_lines(session, secrets=wanted)
    scrub = _scrubber(wanted)
    for entry in attachment_entries(session, attachments):
        obj = entry.to_json()
        line = stringify(obj)
        lines.append(scrub(line, obj) if scrub is not None else line)
    return "\n".join(lines) + "\n"


def detach_attachments(session: Session, custom_types: Collection[str]) -> tuple[Session, dict[str, list[CustomEntry]]]:
    """Take the ``custom`` entries of the given types out of an imported session.

    Returns the session without them (the same object when there were none) and the entries
    taken, by type, in file order (the last one of a type is the newest). An entry whose parent
    was taken gets that entry's parent (repeatedly); a leaf that was taken becomes its nearest
    remaining ancestor. The header, the other entries and the read warnings are kept."""
    taken: dict[str, CustomEntry] = {}
    found: dict[str, list[CustomEntry]] = {}
    for entry in session:
        if isinstance(entry, CustomEntry) and entry.custom_type in custom_types:
            taken[entry.id] = entry
            found.setdefault(entry.custom_type, []).append(entry)
    if not taken:
        return session, found

    def surviving(entry_id: str | None) -> str | None:
        seen: set[str] = set()
        while entry_id is not None and entry_id in taken and entry_id not in seen:
            seen.add(entry_id)
            entry_id = taken[entry_id].parent_id
        return None if entry_id in taken else entry_id

    kept: list[Entry] = []
    for entry in session:
        if entry.id in taken:
            continue
        parent = surviving(entry.parent_id)
        kept.append(entry if parent == entry.parent_id else entry.model_copy(update={"parent_id": parent}))
    leaf = surviving(session.leaf_id)
    known = {entry.id for entry in kept}
    result = Session(session.header, kept, leaf_id=leaf if leaf is None or leaf in known else CURRENT)
    result.warnings = list(session.warnings)
    result.source_version = session.source_version
    return result, found
