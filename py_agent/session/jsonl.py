"""pi's session files (JSON lines) in and out, and sessions read back from stored records.

- :func:`export_jsonl`: the header line, then one line per entry in append order, each exactly as
  ``JSON.stringify`` writes it, ``\\n``-terminated: what pi's CLI writes and opens.
- :func:`import_jsonl`: reads any version. Version 1 (no ids; ``firstKeptEntryIndex``) and 2
  (``hookMessage`` role) are upgraded to 3 as pi upgrades them. A line that is not a JSON object,
  or an entry without a type, is skipped; other damage is repaired (a missing id, parent or
  timestamp, a duplicate id); an entry whose own fields do not validate is kept unchanged as an
  :class:`~py_agent.session.UnknownEntry`. Each case adds a :class:`SessionWarning` with its line
  number to ``session.warnings``. It never raises.
- :func:`load_session`: the same, over a header and entry records (dicts, JSON strings or
  entries) as a store keeps them; warnings name the record's 1-based position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._ids import iso_from_ms, new_entry_id, now_ms, uuidv7
from ._json import JsonError, parse, stringify
from .entries import (
    CURRENT_SESSION_VERSION,
    Entry,
    EntryError,
    SessionHeader,
    _Line,
    entry_from_json,
    header_from_json,
)
from .tree import CURRENT, Session, SessionWarning, _Current

__all__ = [
    "Redactor",
    "entry_to_line",
    "export_jsonl",
    "export_lines",
    "header_to_line",
    "import_jsonl",
    "load_session",
    "secret_redactor",
]

Redactor = Callable[[dict[str, Any]], dict[str, Any]]
"""Maps a line's JSON object to the object to write. It must return a new object (or the same
one unchanged), never change the one it gets: its values are the session's own."""

REDACTED = "[redacted]"
"""What `secrets` are replaced with in exports."""


# ---------------------------------------------------------------------------------------------
# Export


def header_to_line(header: SessionHeader) -> str:
    """The header as pi writes it (no newline)."""
    return stringify(header.to_json())


def entry_to_line(entry: Entry) -> str:
    """One entry as pi writes it (no newline): also a compact form for a store's records."""
    return stringify(entry.to_json())


def export_lines(session: Session, *, redact: Redactor | None = None, secrets: Iterable[str] = ()) -> list[str]:
    """The lines of :func:`export_jsonl`, without newlines."""
    scrub = _scrubber(secrets)
    lines: list[str] = []
    for obj in [session.header.to_json(), *(entry.to_json() for entry in session)]:
        if redact is not None:
            obj = redact(obj)
        line = stringify(obj)
        if scrub is not None:
            line = scrub(line, obj)
        lines.append(line)
    return lines


def export_jsonl(session: Session, *, redact: Redactor | None = None, secrets: Iterable[str] = ()) -> str:
    """The session as a pi ``.jsonl`` file: header, then the entries in append order, one
    ``JSON.stringify`` line each, every line ending in ``\\n``.

    Nothing is left out: this layer holds no keys. ``redact`` may rewrite each line's object;
    every occurrence of a string in ``secrets`` (e.g. the provider keys the app knows) is replaced
    by ``[redacted]`` wherever it appears, as a safety net.

    pi's CLI resumes a file at its last entry; a session whose leaf was moved without appending
    since opens there at its last appended entry.
    """
    lines = export_lines(session, redact=redact, secrets=secrets)
    return "\n".join(lines) + "\n"


def _scrubber(secrets: Iterable[str]) -> Callable[[str, Any], str] | None:
    wanted = sorted({secret for secret in secrets if isinstance(secret, str) and secret}, key=len, reverse=True)
    if not wanted:
        return None
    # Each secret as it can appear in a line: as is, or with JSON escapes.
    forms = {form for secret in wanted for form in (secret, stringify(secret)[1:-1])}

    def scrub(line: str, obj: Any) -> str:
        if not any(form in line for form in forms):
            return line  # the usual case: one fast scan per form
        return stringify(_scrub_value(obj, wanted))

    return scrub


def _scrub_value(value: Any, secrets: list[str]) -> Any:
    """A copy of JSON ``value`` with the secrets replaced in every key and string (no recursion)."""

    def scrub(text: str) -> str:
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, str):
            parent[key] = scrub(item)
        elif isinstance(item, Mapping):
            out: dict[str, Any] = {}
            parent[key] = out
            for name, child in item.items():
                clean = scrub(name) if isinstance(name, str) else name
                out[clean] = None
                stack.append((child, out, clean))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            stack.extend((child, items, index) for index, child in enumerate(item))
        else:
            parent[key] = item
    return holder[0]


def secret_redactor(secrets: Iterable[str]) -> Redactor:
    """A ``redact`` hook replacing every occurrence of the given strings in keys and string values."""
    wanted = sorted({secret for secret in secrets if secret}, key=len, reverse=True)

    def redact(obj: dict[str, Any]) -> dict[str, Any]:
        result = _scrub_value(obj, wanted)
        return result if isinstance(result, dict) else obj

    return redact


# ---------------------------------------------------------------------------------------------
# Import


def import_jsonl(
    text: str,
    *,
    clock: Callable[[], int] | None = None,
    id_generator: Callable[[], str] | None = None,
) -> Session:
    """Read a pi session file of any version into a :class:`Session` (leaf: the last entry, as pi
    resumes). Never raises; what was skipped or repaired is in ``session.warnings``."""
    warnings: list[SessionWarning] = []
    values: list[tuple[int, Any]] = []
    if not isinstance(text, str):
        warnings.append(SessionWarning(None, f"expected text, got {type(text).__name__}"))
        text = ""
    if text.startswith("\ufeff"):
        text = text[1:]
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, parse(line)))
        except JsonError as error:
            warnings.append(SessionWarning(number, f"not valid JSON ({_short(str(error))}); skipped"))
    return _assemble(values, warnings, CURRENT, clock, id_generator, header_first=True)


def load_session(
    header: Mapping[str, Any] | SessionHeader | str | None,
    records: Iterable[Any],
    *,
    leaf_id: str | _Current | None = CURRENT,
    clock: Callable[[], int] | None = None,
    id_generator: Callable[[], str] | None = None,
) -> Session:
    """Rebuild a session from a store: its header and its entry records in append order (each a
    JSON object, a JSON string or an entry), and the stored leaf (``CURRENT``: the last entry; an
    unknown id falls back to it with a warning). Records are read as :func:`import_jsonl` reads
    lines, so a damaged record is skipped or repaired with a warning naming its position. Never
    raises."""
    warnings: list[SessionWarning] = []
    values: list[tuple[int, Any]] = []
    if header is not None:
        values.append((0, _record_value(header, 0, warnings)))
    for number, record in enumerate(records, start=1):
        values.append((number, _record_value(record, number, warnings)))
    values = [(number, value) for number, value in values if value is not _SKIP]
    return _assemble(values, warnings, leaf_id, clock, id_generator, header_first=False)


_SKIP: Any = object()


def _record_value(record: Any, number: int, warnings: list[SessionWarning]) -> Any:
    if isinstance(record, _Line):
        return record.to_json()
    if isinstance(record, str | bytes):
        try:
            text = record.decode("utf-8") if isinstance(record, bytes) else record
            return parse(text)
        except (JsonError, UnicodeDecodeError) as error:
            warnings.append(SessionWarning(number, f"not valid JSON ({_short(str(error))}); skipped"))
            return _SKIP
    return record


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _version_of(header: Mapping[str, Any] | None, objects: list[dict[str, Any]]) -> tuple[int | float, str | None]:
    """The file's format version, and a warning when it had to be guessed."""
    if header is not None:
        version = header.get("version")
        if version is None:
            return 1, None
        if isinstance(version, int | float) and not isinstance(version, bool) and version == version:
            return version, None
    linked = any(isinstance(obj.get("id"), str) and "parentId" in obj for obj in objects)
    guessed = CURRENT_SESSION_VERSION if linked else 1
    why = "the header's version is not a number" if header is not None else "there is no session header"
    return guessed, f"{why}; read as version {guessed}"


def _migrate_v1(values: list[Any]) -> None:
    """pi's ``migrateV1ToV2``: ids and parent links in file order; ``firstKeptEntryIndex`` (an
    index into the file's parsed lines, the header being 0) becomes ``firstKeptEntryId``."""
    ids: set[str] = set()
    previous: str | None = None
    for value in values:
        if not isinstance(value, dict):
            continue
        if value.get("type") == "session":
            value["version"] = 2
            continue
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        value["id"] = entry_id
        value["parentId"] = previous
        previous = entry_id
        if value.get("type") == "compaction":
            index = value.get("firstKeptEntryIndex")
            if isinstance(index, int | float) and not isinstance(index, bool):
                target = values[int(index)] if index == int(index) and 0 <= index < len(values) else None
                if isinstance(target, dict) and target.get("type") != "session" and "id" in target:
                    value["firstKeptEntryId"] = target["id"]
                del value["firstKeptEntryIndex"]


def _migrate_v2(values: list[Any]) -> None:
    """pi's ``migrateV2ToV3``: the ``hookMessage`` role is now ``custom``."""
    for value in values:
        if not isinstance(value, dict):
            continue
        if value.get("type") == "session":
            value["version"] = 3
            continue
        message = value.get("message")
        if value.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            value["message"] = {**message, "role": "custom"}


def _assemble(
    numbered: list[tuple[int, Any]],
    warnings: list[SessionWarning],
    leaf_id: str | _Current | None,
    clock: Callable[[], int] | None,
    id_generator: Callable[[], str] | None,
    *,
    header_first: bool,
) -> Session:
    # Work on copies: the caller's objects (store records) must stay as they were.
    values = [dict(value) if isinstance(value, Mapping) else value for _, value in numbered]
    lines = [number for number, _ in numbered]

    header_index = next(
        (i for i, value in enumerate(values) if isinstance(value, dict) and value.get("type") == "session"), None
    )
    if header_index is not None and header_index != 0 and header_first:
        warnings.append(SessionWarning(lines[header_index], "the session header is not the first line"))
    raw_header: dict[str, Any] | None = values[header_index] if header_index is not None else None
    objects = [value for i, value in enumerate(values) if isinstance(value, dict) and i != header_index]

    version, why = _version_of(raw_header, objects)
    if why:
        warnings.append(SessionWarning(None, why))
    if raw_header is None or header_index is None:
        # Migrations index the file's lines with the header at 0.
        raw_header = {"type": "session", "version": version}
        values.insert(0, raw_header)
        lines.insert(0, 0)
        header_index = 0
    if version < 2:
        _migrate_v1(values)
    if version < 3:
        _migrate_v2(values)
    if version > CURRENT_SESSION_VERSION:
        warnings.append(SessionWarning(None, f"written by a newer pi (version {version}); read as version 3"))

    entries: list[Entry] = []
    taken: set[str] = set()
    previous_timestamp: str | None = (
        raw_header.get("timestamp") if isinstance(raw_header.get("timestamp"), str) else None
    )
    for index, value in enumerate(values):
        line = lines[index] or None
        if index == header_index:
            continue
        if not isinstance(value, dict):
            warnings.append(SessionWarning(line, f"not a JSON object ({type(value).__name__}); skipped"))
            continue
        kind = value.get("type")
        if kind == "session":
            warnings.append(SessionWarning(line, "a second session header; skipped"))
            continue
        if not isinstance(kind, str):
            warnings.append(SessionWarning(line, "entry has no string type; skipped"))
            continue
        entry_id = value.get("id")
        if not isinstance(entry_id, str) or not entry_id:
            value["id"] = new_entry_id(taken, id_generator)
            warnings.append(SessionWarning(line, f"{kind} entry has no id; given {value['id']}"))
        elif entry_id in taken:
            value["id"] = new_entry_id(taken, id_generator)
            warnings.append(SessionWarning(line, f"duplicate entry id {entry_id}; this one is now {value['id']}"))
        parent = value.get("parentId", ...)
        if parent is ... or (parent is not None and not isinstance(parent, str)):
            value["parentId"] = None
            what = "no parentId" if parent is ... else "an invalid parentId"
            warnings.append(SessionWarning(line, f"{kind} entry {value['id']} has {what}; made a root"))
        if not isinstance(value.get("timestamp"), str):
            value["timestamp"] = previous_timestamp or iso_from_ms((clock or now_ms)())
            warnings.append(
                SessionWarning(line, f"{kind} entry {value['id']} has no timestamp; given {value['timestamp']}")
            )
        try:
            entry, problem = entry_from_json(value)
        except EntryError as error:  # pragma: no cover - the base fields were repaired above
            warnings.append(SessionWarning(line, f"{error}; skipped"))
            continue
        if problem:
            warnings.append(SessionWarning(line, problem))
        taken.add(entry.id)
        previous_timestamp = entry.timestamp
        entries.append(entry)

    header = _make_header(raw_header, entries, warnings, lines[header_index] or None, clock)
    session = Session(header, entries, clock=clock, id_generator=id_generator)
    if leaf_id is not CURRENT:
        if leaf_id is None:
            session.reset_leaf()
        elif leaf_id in session:
            session.branch(leaf_id)
        else:
            warnings.append(SessionWarning(None, f"stored leaf {leaf_id} not found; using the last entry"))
    session.warnings = warnings
    session.source_version = version
    return session


def _make_header(
    raw: dict[str, Any],
    entries: list[Entry],
    warnings: list[SessionWarning],
    line: int | None,
    clock: Callable[[], int] | None,
) -> SessionHeader:
    synthesized = set(raw) <= {"type", "version"}
    if not synthesized:
        try:
            return header_from_json(raw)
        except EntryError as error:
            warnings.append(SessionWarning(line, f"{error}; its valid fields were kept"))
    else:
        warnings.append(SessionWarning(None, "no session header; a new one was made"))
    timestamp = raw.get("timestamp")
    if not isinstance(timestamp, str):
        timestamp = entries[0].timestamp if entries else iso_from_ms((clock or now_ms)())
    session_id = raw.get("id")
    if not isinstance(session_id, str) or not session_id:
        session_id = uuidv7()
    values: dict[str, Any] = {"version": CURRENT_SESSION_VERSION, "id": session_id, "timestamp": timestamp}
    cwd = raw.get("cwd")
    values["cwd"] = cwd if isinstance(cwd, str) else "/"
    parent = raw.get("parentSession")
    if isinstance(parent, str):
        values["parent_session"] = parent
    return SessionHeader(**values)
