"""A conversation's wire messages, kept between its requests.

Every request sends the whole conversation. At 1,000 messages, transforming it
(:mod:`py_agent.ai.transform`), converting it to the API's items and writing them as JSON took
~15 ms in Pyodide between Enter and ``fetch()`` (BENCHMARKS.md, "Send to first token"). A request
whose conversation starts with the same message objects as an earlier one's takes that one's items
and their JSON up to its last *cut*, and transforms, converts and writes only what follows.

The body is the one an uncached build writes, byte for byte (tests/providers/test_payload_cache.py):

* A cut is placed only after a user message with text or a kept reply with text or a tool call:
  every API writes such a message as an item of its own, and groups no items across it (runs of
  tool results, Gemini's merged function responses), so what follows only adds items. The state
  the folds carry across it (the transform's renamed tool-call ids, kept calls and calls waiting
  for a result, which get their synthetic results later; the API's own, e.g. the last role or the
  Responses API's message count) is kept with the cut.
* Only message models are covered (a mapping may be changed in place), matched by identity (or,
  for a user message, by its JSON). The agent never edits a message once it is in a request's
  conversation (a streaming reply is a new message each request and ends before the next request
  is built); an edited message is a new object, and what follows it is converted again.
* Items are never changed once handed out: the steps that mark the last message for prompt caching
  replace it with a copy, and the JSON of an item that is not the cached object is written anew.
* The key is the wire API and the whole model (its JSON): another model, or a changed one, starts
  over. A request with an ``on_payload`` hook (which may change the payload in place) is built
  without the cache.

Bounded: the last few cuts per API (least recently used dropped), holding their messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import is_
from typing import Any

from .._util import json_stringify
from ..transform import LlmMessage, MessageTransform, NormalizeToolCallId
from ..types import LLM_MESSAGE_TYPES, AssistantMessage, Model, TextContent, ToolCall, UserMessage

__all__ = ["Convert", "clear", "payload_json", "wire_items"]

Convert = Callable[[list[LlmMessage], list[dict[str, Any]], Any], Any]
"""An API's conversion as a left fold: appends the items of transformed messages to a list and
returns its state after them (``None`` for an API without one)."""

SLOTS = 4
"""Cuts kept per wire API: a few conversations (an agent and its subagents, a branch left)."""


@dataclass(frozen=True, eq=False)
class _Cut:
    key: str
    messages: list[Any]
    """The conversation up to the cut: the same objects."""
    transform: MessageTransform
    """The transform's state after them (never fed: copied to resume)."""
    items: tuple[dict[str, Any], ...]
    fragments: tuple[str, ...]
    """The JSON of each item."""
    state: Any


_cuts: dict[str, list[_Cut]] = {}
_NO_FRAGMENTS: tuple[str, ...] = ()

# The list of items last handed out, where its cached items start, those items and their JSON:
# what payload_json reuses when the driver writes the request that holds it.
_handed_out: tuple[list[dict[str, Any]], int, tuple[dict[str, Any], ...], tuple[str, ...]] | None = None


def clear() -> None:
    """Forget every conversation (tests)."""
    global _handed_out
    _cuts.clear()
    _handed_out = None


def _model_key(api: str, model: Model) -> str | None:
    try:
        return api + "\n" + model.model_dump_json()
    except Exception:  # a value pydantic cannot write (a compat flag of the app's own): no cache
        return None


def _closes(message: Any) -> bool:
    """Whether a cut may follow ``message``: a user message with text, or a kept reply (not errored
    or aborted) with text or a tool call. Every API writes it as an item of its own."""
    if isinstance(message, UserMessage):
        content = message.content
        if isinstance(content, str):
            return bool(content.strip())
        return any(isinstance(block, TextContent) and block.text.strip() for block in content)
    if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
        return any(
            isinstance(block, ToolCall) or (isinstance(block, TextContent) and block.text.strip())
            for block in message.content
        )
    return False


def _last_cut(messages: Sequence[Any], start: int) -> int:
    """The position after the last message from ``start`` on that a cut may follow, before any
    message that is not a message model; ``start`` when there is none."""
    cut = start
    for index in range(start, len(messages)):
        message = messages[index]
        if not isinstance(message, LLM_MESSAGE_TYPES):
            break
        if _closes(message):
            cut = index + 1
    return cut


def _same(kept: Any, message: Any) -> bool:
    """``message`` is the kept one, or a user message written the same (the session makes its
    summaries and custom messages anew for every request: py_agent/session/messages.py)."""
    if kept is message:
        return True
    if type(kept) is not UserMessage or type(message) is not UserMessage:
        return False
    try:
        return kept.model_dump_json() == message.model_dump_json()
    except ValueError:  # text pydantic cannot write (lone surrogates): compared no further
        return False


def _find(api: str, key: str, messages: Sequence[Any]) -> _Cut | None:
    for cut in _cuts.get(api, ()):
        if (
            cut.key == key
            and len(cut.messages) <= len(messages)
            and (all(map(is_, cut.messages, messages)) or all(map(_same, cut.messages, messages)))
        ):
            return cut
    return None


def _keep(api: str, cut: _Cut) -> None:
    cuts = _cuts.setdefault(api, [])
    if cut in cuts:
        cuts.remove(cut)
    cuts.insert(0, cut)
    del cuts[SLOTS:]


def wire_items(
    api: str,
    model: Model,
    messages: Sequence[Any],
    normalize: NormalizeToolCallId | None,
    convert: Convert,
    head: list[dict[str, Any]],
    state: Any,
    *,
    use_cache: bool = True,
) -> tuple[list[dict[str, Any]], Any]:
    """``head`` followed by the items of ``messages`` (transformed for ``model``), and ``convert``'s
    state after them (it starts from ``state``); from the cache up to the last cut it holds."""
    global _handed_out
    key = _model_key(api, model) if use_cache else None
    if key is None:
        return head, convert(MessageTransform(model, normalize).feed(messages), head, state)
    out, offset = head, len(head)
    found = _find(api, key, messages)
    start, fragments = 0, _NO_FRAGMENTS
    if found is None:
        transform = MessageTransform(model, normalize)
    else:  # its state, with this request's model (the same JSON, maybe not the same object)
        transform = found.transform.copy()
        transform.model, transform.normalize = model, normalize
        start, fragments, state = len(found.messages), found.fragments, found.state
        out.extend(found.items)
    cut = _last_cut(messages, start)
    if cut > start:
        first = len(out)
        state = convert(transform.feed(messages[start:cut]), out, state)
        fragments += tuple(json_stringify(item) for item in out[first:])
        found = _Cut(key, list(messages[:cut]), transform.copy(), tuple(out[offset:]), fragments, state)
    _handed_out = None
    if found is not None:
        _keep(api, found)
        _handed_out = (out, offset, found.items, found.fragments)
    if cut < len(messages):
        state = convert(transform.feed(messages[cut:]), out, state)
    return out, state


def payload_json(payload: Any) -> str:
    """``json_stringify(payload)``, with the JSON of the items :func:`wire_items` last handed out
    taken from the cache where they are still the cached objects."""
    handed_out = _handed_out
    if handed_out is None or not isinstance(payload, dict):
        return json_stringify(payload)
    out, offset, items, fragments = handed_out
    name = next((name for name, value in payload.items() if value is out), None)
    if name is None:
        return json_stringify(payload)
    end = offset + len(items)
    cached = out[offset:end]
    if len(cached) != len(items):
        return json_stringify(payload)
    known: Sequence[str] = fragments
    if not all(map(is_, cached, items)):
        pairs = zip(cached, items, fragments, strict=True)
        known = [text if item is kept else json_stringify(item) for item, kept, text in pairs]
    parts = [*map(json_stringify, out[:offset]), *known, *map(json_stringify, out[end:])]
    # The rest of the payload written around a marker that stands for the list (a string with NULs
    # that nothing else in a payload holds; when one does, the payload is written whole).
    body = json_stringify({**payload, name: _MARKER})
    if body.count(_MARKER_JSON) != 1:
        return json_stringify(payload)
    before, _, after = body.partition(_MARKER_JSON)
    return "".join((before, "[", ",".join(parts), "]", after))


_MARKER = "\x00py-agent wire items\x00"
_MARKER_JSON = json_stringify(_MARKER)
