"""Cross-provider replay: pi's ``transformMessages``.

Every provider runs the conversation through :func:`transform_messages` before mapping it to its
wire format, so a conversation started on one provider continues on another:

* thinking from another model becomes plain text (redacted thinking is dropped), signatures of
  other models are removed, tool-call ids are normalised for the target API (and the matching
  tool results follow);
* errored and aborted assistant turns are dropped; tool calls left without a result before the
  next assistant or user message get a synthetic error result ``"No result provided"``;
* tool results whose call is not in a kept assistant message are dropped (pi keeps these
  orphans, which providers reject: docs/deviations.md D14);
* for a model without image input, each run of adjacent images in a user message becomes one text
  block ``(image omitted: model does not support images)`` (``(tool image omitted: ...)`` in tool
  results), as pi-ai 0.79.10 does: the model is told, and the session keeps the images.

Inputs may be models or pi-JSON mappings; the result is a new list of message models (inputs are
never mutated).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    now_ms,
    role_of,
    to_message,
)

__all__ = [
    "NON_VISION_TOOL_IMAGE_PLACEHOLDER",
    "NON_VISION_USER_IMAGE_PLACEHOLDER",
    "MessageTransform",
    "NormalizeToolCallId",
    "is_same_model",
    "transform_messages",
]

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"

NormalizeToolCallId = Callable[[str, Model, AssistantMessage], str]
LlmMessage = UserMessage | AssistantMessage | ToolResultMessage


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    """The assistant message was produced by ``model`` (same provider, api and model id)."""
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _llm_messages(messages: Sequence[Any]) -> list[LlmMessage]:
    out: list[LlmMessage] = []
    for message in messages:
        if role_of(message) not in ("user", "assistant", "toolResult"):
            continue
        out.append(to_message(message))
    return out


def _without_images(content: Sequence[Any], placeholder: str) -> list[Any]:
    """``content`` with each run of adjacent images replaced by one ``placeholder`` text block (a run
    that follows that same placeholder text adds none), as pi's ``replaceImagesWithPlaceholder``."""
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_placeholder:
                result.append(TextContent(text=placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = isinstance(block, TextContent) and block.text == placeholder
    return result


def _downgrade_images(message: LlmMessage, model: Model) -> LlmMessage:
    if "image" in model.input:
        return message
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        if any(isinstance(block, ImageContent) for block in message.content):
            content = _without_images(message.content, NON_VISION_USER_IMAGE_PLACEHOLDER)
            return message.model_copy(update={"content": content})
    elif isinstance(message, ToolResultMessage) and any(isinstance(b, ImageContent) for b in message.content):
        return message.model_copy(
            update={"content": _without_images(message.content, NON_VISION_TOOL_IMAGE_PLACEHOLDER)}
        )
    return message


def _transform_assistant(
    message: AssistantMessage,
    model: Model,
    normalize: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> AssistantMessage:
    same = is_same_model(message, model)
    content: list[Any] = []
    changed = False
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted:
                if same:
                    content.append(block)
                else:
                    changed = True
                continue
            if same and block.thinking_signature:
                content.append(block)
                continue
            if not block.thinking or not block.thinking.strip():
                changed = True
                continue
            if same:
                content.append(block)
            else:
                content.append(TextContent(text=block.thinking))
                changed = True
        elif isinstance(block, TextContent):
            # Only a signature is dropped for another model: a block without one is kept as it is
            # (no copy of every reply of a long session at every request).
            if same or (block.text_signature is None and not block.__pydantic_extra__):
                content.append(block)
            else:
                content.append(TextContent(text=block.text))
                changed = True
        elif isinstance(block, ToolCall):
            call = block
            if not same and call.thought_signature:
                call = call.model_copy(update={"thought_signature": None})
                changed = True
            if not same and normalize is not None:
                new_id = normalize(call.id, model, message)
                if new_id != call.id:
                    id_map[call.id] = new_id
                    call = call.model_copy(update={"id": new_id})
                    changed = True
            content.append(call)
        else:
            content.append(block)
    if not changed:
        return message
    return message.model_copy(update={"content": content})


def transform_messages(
    messages: Sequence[Any], model: Model, normalize_tool_call_id: NormalizeToolCallId | None = None
) -> list[LlmMessage]:
    """Prepare ``messages`` for ``model``'s API (see the module docstring)."""
    return MessageTransform(model, normalize_tool_call_id).feed(messages)


class MessageTransform:
    """:func:`transform_messages` as a left fold: :meth:`feed` a conversation in pieces, in order, and
    the pieces' results joined are ``transform_messages`` of the whole. The wire payload cache
    (``providers/payload_cache.py``) resumes from a :meth:`copy` taken after a piece."""

    def __init__(self, model: Model, normalize: NormalizeToolCallId | None) -> None:
        self.model = model
        self.normalize = normalize
        self.id_map: dict[str, str] = {}
        self.pending: list[ToolCall] = []
        """The calls of the last kept assistant message; those still unanswered get a synthetic
        result when the next assistant or user message comes (never at the end: as pi)."""
        self.answered: set[str] = set()
        self.kept_call_ids: set[str] = set()

    def copy(self) -> MessageTransform:
        copied = MessageTransform(self.model, self.normalize)
        copied.id_map = dict(self.id_map)
        copied.pending = list(self.pending)
        copied.answered = set(self.answered)
        copied.kept_call_ids = set(self.kept_call_ids)
        return copied

    def feed(self, messages: Sequence[Any]) -> list[LlmMessage]:
        """The transformed messages of the next piece of the conversation."""
        model, normalize, id_map = self.model, self.normalize, self.id_map
        result: list[LlmMessage] = []
        for message in _llm_messages(messages):
            message = _downgrade_images(message, model)
            # Each message is transformed (ids renamed after the calls before it) and then placed
            # (turns dropped, missing results added): both look only at what came before it.
            if isinstance(message, AssistantMessage):
                message = _transform_assistant(message, model, normalize, id_map)
                self._flush(result)
                if message.stop_reason in ("error", "aborted"):
                    continue
                calls = [block for block in message.content if isinstance(block, ToolCall)]
                if calls:
                    self.pending = calls
                    self.answered = set()
                    self.kept_call_ids.update(call.id for call in calls)
                result.append(message)
            elif isinstance(message, ToolResultMessage):
                new_id = id_map.get(message.tool_call_id)
                if new_id is not None and new_id != message.tool_call_id:
                    message = message.model_copy(update={"tool_call_id": new_id})
                if message.tool_call_id not in self.kept_call_ids:
                    continue  # its call was dropped (or never existed): docs/deviations.md D14
                self.answered.add(message.tool_call_id)
                result.append(message)
            else:
                self._flush(result)
                result.append(message)
        # A trailing assistant message with unanswered calls gets no synthetic results, as in pi
        # (tests/providers/test_vectors_pure.py::test_t5_orphan_at_the_end).
        return result

    def _flush(self, result: list[LlmMessage]) -> None:
        for call in self.pending:
            if call.id not in self.answered:
                result.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                        timestamp=now_ms(),
                    )
                )
        self.pending = []
        self.answered = set()
