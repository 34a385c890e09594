"""What the page is sent of a streaming reply, once per animation frame: only what changed.

The page pulls the reply being streamed at every animation frame (``streaming_snapshot``). Sending
the whole message each time made the work per frame (dumping it here, JSON both ways, comparing
it in the page) grow with the reply. :class:`StreamView` remembers what it sent last, under a
revision number, and when the page says it has that revision (``since``) it sends only the
changes, as operations on the message's content blocks (``web/ui/chat.js`` applies them):

- ``{"i": n, "text": s}`` / ``{"i": n, "thinking": s}``: ``s`` appended to block ``n``'s text or
  thinking;
- ``{"i": n, "args": [[key, "append", s] | [key, "set", value], ...]}``: tool call ``n``'s
  arguments changed: a string argument grew by ``s``, or an argument was added or replaced;
- ``{"i": n, "block": {...}}``: block ``n`` is new, or replaced by another of the same kind.

Anything else (a block of another kind at the same place, fewer blocks, a text that does not
extend the one sent, a page that has another revision, e.g. after a reload) is sent whole:
``{"rev", "message", "tools"}``. A change is ``{"rev", "base", "ops"}`` plus ``"tools"`` (the tool
calls' states) when those changed. Revisions are unique in the process, so a page that switched
sessions never applies a change meant for another one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

from ..ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall
from ..session import to_json_value

__all__ = ["StreamView"]

_revisions = itertools.count(1)

# What was sent of one block: (kind, its growing text, everything else about it). For a tool call
# the text is "" and the rest is (id, name, signature, argument names in order, argument values:
# strings as they are, others as JSON).
_Sent = tuple[str, str, Any]


def _arguments_state(arguments: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    values = {key: value if isinstance(value, str) else "\0" + json.dumps(value) for key, value in arguments.items()}
    return list(arguments), values


def _block_state(block: Any) -> _Sent | None:
    if isinstance(block, TextContent):
        return ("text", block.text, block.text_signature)
    if isinstance(block, ThinkingContent):
        return ("thinking", block.thinking, (block.thinking_signature, block.redacted))
    if isinstance(block, ToolCall):
        names, values = _arguments_state(block.arguments)
        return ("toolCall", "", (block.id, block.name, block.thought_signature, names, values))
    return None


def _argument_ops(before: dict[str, str], after: dict[str, str], arguments: dict[str, Any]) -> list[list[Any]]:
    ops: list[list[Any]] = []
    for key, value in after.items():
        old = before.get(key)
        if old == value:
            continue
        if old is not None and not value.startswith("\0") and not old.startswith("\0") and value.startswith(old):
            ops.append([key, "append", value[len(old) :]])
        else:
            ops.append([key, "set", to_json_value(arguments[key])])
    return ops


class StreamView:
    """The page's copy of the streaming reply, as far as this side knows it."""

    def __init__(self) -> None:
        self._rev = 0
        self._blocks: list[_Sent] = []
        self._tools_version = -1

    def reset(self) -> None:
        """A new reply (or none): the next pull gets it whole."""
        self._rev = 0
        self._blocks = []

    def snapshot(
        self,
        message: AssistantMessage,
        since: int | None,
        tools: Iterable[dict[str, Any]],
        tools_version: int,
        whole: Callable[[], dict[str, Any]],
    ) -> dict[str, Any]:
        """The reply for a page that has revision ``since`` (``None``: nothing); ``whole()`` gives
        the message's JSON when it is sent whole."""
        states = [_block_state(block) for block in message.content]
        ops = self._ops(message, states) if self._rev and since == self._rev else None
        rev = next(_revisions)
        known = [state for state in states if state is not None]
        # A block of a kind not followed here (none today) makes every pull a whole one.
        self._rev = rev if len(known) == len(states) else 0
        self._blocks = known
        if ops is None:
            self._tools_version = tools_version
            return {"rev": rev, "message": whole(), "tools": list(tools)}
        result: dict[str, Any] = {"rev": rev, "base": since, "ops": ops}
        if tools_version != self._tools_version:
            self._tools_version = tools_version
            result["tools"] = list(tools)
        return result

    def _ops(self, message: AssistantMessage, states: list[_Sent | None]) -> list[dict[str, Any]] | None:
        sent = self._blocks
        if len(states) < len(sent):
            return None
        ops: list[dict[str, Any]] = []
        for i, state in enumerate(states):
            if state is None:
                return None
            kind, text, rest = state
            if i >= len(sent):
                ops.append({"i": i, "block": to_json_value(message.content[i])})
                continue
            old_kind, old_text, old_rest = sent[i]
            if kind != old_kind:
                return None
            if kind == "toolCall":
                if rest == old_rest:
                    continue
                block = message.content[i]
                assert isinstance(block, ToolCall)
                same_call = rest[:3] == old_rest[:3] and rest[3][: len(old_rest[3])] == old_rest[3]
                if same_call:
                    ops.append({"i": i, "args": _argument_ops(old_rest[4], rest[4], block.arguments)})
                else:
                    ops.append({"i": i, "block": to_json_value(block)})
            elif rest != old_rest or not text.startswith(old_text):
                ops.append({"i": i, "block": to_json_value(message.content[i])})
            elif len(text) > len(old_text):
                ops.append({"i": i, kind: text[len(old_text) :]})
        return ops
