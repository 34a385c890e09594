"""Agent messages <-> the JSON a ``message`` entry holds, and pi's session-made messages.

A ``message`` entry stores the message in pi's JSON (camelCase, optional fields left out). An
``Agent`` holds pydantic models for the LLM roles (``user``, ``assistant``, ``toolResult``) and
anything with a ``role`` for custom roles (pydantic models, dataclasses, dicts). Here:

- :func:`message_to_json`: any agent message -> a JSON dict (what an entry stores);
- :func:`message_from_json`: a JSON dict -> the LLM role's model (``to_message``), or a copy of
  the dict for custom roles, so an Agent gets back what it had;
- the messages pi's context building makes (``compactionSummary``, ``branchSummary``,
  ``custom``) and :func:`convert_to_llm`, pi's ``convertToLlm`` (a ``convert_to_llm`` for an
  ``Agent`` whose history holds them).
"""

from __future__ import annotations

import copy
import dataclasses
import html
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..ai.types import LLM_MESSAGE_TYPES, LLM_ROLES, AssistantMessage, ToolResultMessage, UserMessage, to_message
from ._ids import parse_iso_ms
from ._json import MAX_DEPTH

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "LlmMessage",
    "agent_messages",
    "bash_execution_to_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
    "message_from_json",
    "message_text",
    "message_to_json",
    "to_json_value",
    "typed_text",
]

LlmMessage = UserMessage | AssistantMessage | ToolResultMessage

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"


# ---------------------------------------------------------------------------------------------
# Agent message <-> JSON


_SCALARS = (str, bool, int)  # a tuple: ``str | bool | int`` would build a union at every value


def to_json_value(value: Any) -> Any:
    """A JSON copy of ``value``: mappings (string keys), lists/tuples, str, int, float, bool, None,
    pydantic models (their camelCase dump) and dataclasses. NaN and infinities become ``None``
    (as ``JSON.stringify`` writes them). Raises ``TypeError`` for anything else, and for nesting
    deeper than ``MAX_DEPTH`` (no recursion: deep input cannot exhaust Pyodide's stack)."""
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, holder, 0, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        if item is None or isinstance(item, _SCALARS):
            parent[key] = item
        elif isinstance(item, float):
            parent[key] = item if math.isfinite(item) else None
        elif depth >= MAX_DEPTH:
            raise TypeError(f"the value is nested deeper than {MAX_DEPTH} levels")
        elif isinstance(item, Mapping):
            out: dict[str, Any] = {}
            parent[key] = out
            for name, child in item.items():
                if not isinstance(name, str):
                    raise TypeError(f"JSON object keys must be strings, got {name!r}")
                out[name] = None  # keeps the key order
                stack.append((child, out, name, depth + 1))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            stack.extend((child, items, index, depth + 1) for index, child in enumerate(item))
        elif isinstance(item, BaseModel):
            try:
                # Python mode keeps keys and strings exactly (JSON mode would mangle lone surrogates).
                parent[key] = to_json_value(item.model_dump())
            except TypeError:
                parent[key] = to_json_value(item.model_dump(mode="json"))  # e.g. datetimes -> strings
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            fields = {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
            stack.append((fields, parent, key, depth))
        else:
            raise TypeError(f"not a JSON value: {type(item).__name__}")
    return holder[0]


def message_to_json(message: Any) -> dict[str, Any]:
    """Any agent message (pydantic model, dataclass or mapping with a ``role``) -> its JSON dict.

    LLM-role models dump to pi's camelCase JSON; dicts are copied as they are (custom roles keep
    their own keys). Raises ``TypeError`` when the message is not a JSON object or has no ``role``.
    """
    value = to_json_value(message)
    if not isinstance(value, dict):
        raise TypeError(f"an agent message must be an object, got {type(message).__name__}")
    if not isinstance(value.get("role"), str):
        raise TypeError("an agent message needs a string 'role'")
    return value


def message_from_json(data: Mapping[str, Any]) -> Any:
    """A ``message`` entry's JSON -> an agent message: the pydantic model for the LLM roles
    (``to_message``), a deep copy of the dict for custom roles and for LLM-role JSON that does not
    validate (so nothing is lost)."""
    if data.get("role") in LLM_ROLES:
        try:
            return to_message(dict(data))
        except ValidationError:
            pass
    return _copy(dict(data))


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    # A deep copy of JSON data through the C codec: fast, and no Python recursion.
    try:
        copied: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return copy.deepcopy(value)
    return copied


def agent_messages(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """:func:`message_from_json` over a list (e.g. ``SessionContext.messages`` for ``Agent.state``)."""
    return [message_from_json(message) for message in messages]


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a message's ``content`` (a string, or its text blocks joined by spaces, as pi's
    session list does); ``""`` when there is none."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        return " ".join(texts)
    return ""


# A file's text as pi's CLI inlines it (`@file`) and as the page attaches one: one text block each.
_FILE_BLOCK = re.compile(r'<file name="([^"]*)">.*</file>', re.DOTALL)


def typed_text(message: Mapping[str, Any]) -> str:
    """What the user typed in a message: its text without the ``<file name="...">`` blocks of its
    attachments (those hold a document's text, or an image's note). When only files were sent, their
    names (``a.pdf, b.png``), so that a title or a preview never shows an attachment's wrapper."""
    content = message.get("content")
    if not isinstance(content, list):
        return message_text(message)
    typed: list[str] = []
    names: list[str] = []
    for block in content:
        if not (isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            continue
        match = _FILE_BLOCK.fullmatch(block["text"].strip())
        if match is None:
            typed.append(block["text"])
        else:
            names.append(html.unescape(match.group(1)).rsplit("/", 1)[-1])
    return " ".join(typed) if any(t.strip() for t in typed) else ", ".join(names)


# ---------------------------------------------------------------------------------------------
# Messages made by context building (pi's messages.ts)


def create_compaction_summary_message(summary: Any, tokens_before: Any, timestamp: str) -> dict[str, Any]:
    """``{role: "compactionSummary", summary, tokensBefore, timestamp}`` (timestamp in ms)."""
    return {
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": tokens_before,
        "timestamp": parse_iso_ms(timestamp),
    }


def create_branch_summary_message(summary: Any, from_id: Any, timestamp: str) -> dict[str, Any]:
    """``{role: "branchSummary", summary, fromId, timestamp}`` (timestamp in ms)."""
    return {"role": "branchSummary", "summary": summary, "fromId": from_id, "timestamp": parse_iso_ms(timestamp)}


_UNSET: Any = object()


def create_custom_message(
    custom_type: str, content: Any, display: Any = _UNSET, details: Any = _UNSET, *, timestamp: str
) -> dict[str, Any]:
    """``{role: "custom", customType, content, display, details, timestamp}``; ``display`` and
    ``details`` are left out when not given (as ``JSON.stringify`` drops ``undefined``)."""
    message: dict[str, Any] = {"role": "custom", "customType": custom_type, "content": content}
    if display is not _UNSET:
        message["display"] = display
    if details is not _UNSET:
        message["details"] = details
    message["timestamp"] = parse_iso_ms(timestamp)
    return message


def bash_execution_to_text(message: Mapping[str, Any]) -> str:
    """pi's ``bashExecutionToText``: how a ``bashExecution`` message (pi's CLI) reads to the model."""
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message.get('fullOutputPath')}]"
    return text


def _user(content: Any, timestamp: Any) -> UserMessage | None:
    data: dict[str, Any] = {"role": "user", "content": content}
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        data["timestamp"] = timestamp
    try:
        return UserMessage.model_validate(data)
    except ValidationError:
        return None


def convert_to_llm(messages: Iterable[Any]) -> list[LlmMessage]:
    """pi's ``convertToLlm``: the LLM messages for a history holding session-made messages.

    ``custom`` -> a user message with its content; ``branchSummary`` / ``compactionSummary`` -> a
    user message with pi's summary wording; ``bashExecution`` -> a user message describing the run
    (unless ``excludeFromContext``); ``user`` / ``assistant`` / ``toolResult`` -> their models;
    other roles are dropped, as is a message that does not validate. pi 1.x ``system`` messages
    are dropped too: pi replays them into the request's prompt and tools, the app sends its own
    (docs/deviations.md S7). Never raises.
    """
    out: list[LlmMessage] = []
    for message in messages:
        if isinstance(message, LLM_MESSAGE_TYPES):
            out.append(message)
            continue
        try:
            data = message_to_json(message)
        except TypeError:
            continue
        role = data["role"]
        converted: LlmMessage | None = None
        timestamp = data.get("timestamp")
        if role in LLM_ROLES:
            try:
                converted = to_message(data)
            except ValidationError:
                converted = None
        elif role == "custom":
            content = data.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            converted = _user(content, timestamp)
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + str(data.get("summary")) + BRANCH_SUMMARY_SUFFIX
            converted = _user([{"type": "text", "text": text}], timestamp)
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + str(data.get("summary")) + COMPACTION_SUMMARY_SUFFIX
            converted = _user([{"type": "text", "text": text}], timestamp)
        elif role == "bashExecution" and not data.get("excludeFromContext"):
            converted = _user([{"type": "text", "text": bash_execution_to_text(data)}], timestamp)
        if converted is not None:
            out.append(converted)
    return out
