"""What a summary request is made of: pi-agent-core 0.79.10's ``dist/harness/compaction/utils.js``.

The conversation is written out as text (``[User]: ...``, ``[Assistant tool calls]: read(path="a")``)
so the summarizing model reads it as a document rather than a chat to continue; the files the
assistant read, wrote and edited are tracked and appended to the summary as ``<read-files>`` and
``<modified-files>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...ai._interop import get_field
from .tokens import content_blocks, js_length, safe_json_stringify

__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "FileOperations",
    "compute_file_lists",
    "extract_file_ops_from_message",
    "format_file_operations",
    "serialize_conversation",
]

TOOL_RESULT_MAX_CHARS = 2000


@dataclass
class FileOperations:
    """pi's ``FileOperations``: the paths of the ``read``, ``write`` and ``edit`` tool calls seen.

    Dicts used as ordered sets (JavaScript's ``Set`` keeps insertion order)."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)


_KINDS = {"read": "read", "write": "written", "edit": "edited"}


def extract_file_ops_from_message(message: Any, file_ops: FileOperations) -> None:
    """pi's ``extractFileOpsFromMessage``: add the ``path`` of each read/write/edit tool call of an
    assistant message."""
    if get_field(message, "role") != "assistant":
        return
    for block in content_blocks(get_field(message, "content")):
        if get_field(block, "type") != "toolCall":
            continue
        args = get_field(block, "arguments")
        path = get_field(args, "path") if isinstance(args, Mapping) else None
        kind = _KINDS.get(get_field(block, "name"))
        if kind is not None and isinstance(path, str) and path:
            getattr(file_ops, kind)[path] = None


def _js_sorted(values: Iterable[str]) -> list[str]:
    # Array.prototype.sort's default order: by UTF-16 code units.
    return sorted(values, key=lambda text: text.encode("utf-16-be", "surrogatepass"))


def compute_file_lists(file_ops: FileOperations) -> tuple[list[str], list[str]]:
    """pi's ``computeFileLists``: ``(read_files, modified_files)``, sorted; a file both read and
    modified is listed as modified only."""
    modified = {**file_ops.edited, **file_ops.written}
    read_only = [path for path in file_ops.read if path not in modified]
    return _js_sorted(read_only), _js_sorted(modified)


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """pi's ``formatFileOperations``: the ``<read-files>`` / ``<modified-files>`` tags appended to a summary."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)


def _js_slice(text: str, end: int) -> str:
    """``text.slice(0, end)`` in UTF-16 code units (a cut inside a surrogate pair keeps its first half)."""
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", "surrogatepass")
    return units[: 2 * end].decode("utf-16-le", "surrogatepass")


def _truncate(text: str, max_chars: int) -> str:
    length = js_length(text)
    if length <= max_chars:
        return text
    return f"{_js_slice(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def _js_key_order(value: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``Object.entries`` order: array-index keys first, ascending, then the others as inserted
    (the order pi has after ``JSON.parse``)."""
    items = list(value.items())
    indexes = [item for item in items if _ARRAY_INDEX.fullmatch(item[0]) and int(item[0]) < 2**32 - 1]
    if not indexes:
        return items
    indexes.sort(key=lambda item: int(item[0]))
    return indexes + [item for item in items if not (_ARRAY_INDEX.fullmatch(item[0]) and int(item[0]) < 2**32 - 1)]


def _js_ordered(value: Any) -> Any:
    """A JSON value with every object's keys in JavaScript's order (so ``JSON.stringify`` matches pi)."""
    if isinstance(value, Mapping):
        return {key: _js_ordered(item) for key, item in _js_key_order(value)}
    if isinstance(value, list | tuple):
        return [_js_ordered(item) for item in value]
    return value


def _joined_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(_text_of(block) for block in content_blocks(content) if get_field(block, "type") == "text")


def _text_of(block: Any) -> str:
    text = get_field(block, "text")
    return text if isinstance(text, str) else ""


def serialize_conversation(messages: Iterable[Any]) -> str:
    """pi's ``serializeConversation``: LLM messages as the plain text a summary request quotes.

    Tool results longer than 2,000 characters are cut there, with a note of how much was left out.
    """
    parts: list[str] = []
    for message in messages:
        role = get_field(message, "role")
        if role == "user":
            content = _joined_text(get_field(message, "content"))
            if content:
                parts.append(f"[User]: {content}")
        elif role == "assistant":
            texts: list[str] = []
            thinking: list[str] = []
            calls: list[str] = []
            for block in content_blocks(get_field(message, "content")):
                kind = get_field(block, "type")
                if kind == "text":
                    texts.append(_text_of(block))
                elif kind == "thinking":
                    value = get_field(block, "thinking")
                    thinking.append(value if isinstance(value, str) else "")
                elif kind == "toolCall":
                    args = get_field(block, "arguments")
                    pairs = _js_key_order(args) if isinstance(args, Mapping) else []
                    rendered = ", ".join(f"{key}={safe_json_stringify(_js_ordered(value))}" for key, value in pairs)
                    calls.append(f"{get_field(block, 'name')}({rendered})")
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            content = _joined_text(get_field(message, "content"))
            if content:
                parts.append(f"[Tool result]: {_truncate(content, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)
