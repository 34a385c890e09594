"""Asking a model for a summary, as pi-agent-core 0.79.10 does (one user message holding the
serialized conversation, pi's summarization system prompt, pi's ``maxTokens``)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

from ...ai.registry import complete_simple
from ...ai.types import AssistantMessage, Context, Model, SimpleStreamOptions, TextContent, UserMessage
from ...core.types import StreamFn
from .._ids import now_ms
from ..messages import convert_to_llm
from .conversation import serialize_conversation

__all__ = [
    "SUMMARIZATION_SYSTEM_PROMPT",
    "ask_for_summary",
    "conversation_prompt",
    "reply_text",
    "summary_max_tokens",
]

SUMMARIZATION_SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."""  # noqa: E501


def conversation_prompt(messages: Sequence[Any]) -> str:
    """``<conversation>\\n{serialized}\\n</conversation>\\n\\n``: how every summary prompt starts."""
    return f"<conversation>\n{serialize_conversation(convert_to_llm(messages))}\n</conversation>\n\n"


def summary_max_tokens(model: Model, share: float, reserve_tokens: int) -> int:
    """``min(floor(share * reserve_tokens), model.max_tokens)`` (a ``max_tokens`` of 0: no limit)."""
    budget = math.floor(share * reserve_tokens)
    return min(budget, model.max_tokens) if model.max_tokens > 0 else budget


async def ask_for_summary(
    model: Model,
    prompt_text: str,
    options: SimpleStreamOptions,
    stream_fn: StreamFn | None = None,
) -> AssistantMessage:
    """One summary request: the system prompt and ``prompt_text`` as a user message; the reply.

    ``stream_fn`` (default ``stream_simple``) is how the app sends it (its proxy, retries, timeouts)."""
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        messages=[UserMessage(content=[TextContent(text=prompt_text)], timestamp=now_ms())],
    )
    if stream_fn is None:
        reply: AssistantMessage = await complete_simple(model, context, options)
        return reply
    stream = stream_fn(model, context, options)
    if inspect.isawaitable(stream):
        stream = await stream
    return await stream.result()


def reply_text(reply: AssistantMessage) -> str:
    """The reply's text blocks joined by newlines."""
    return "\n".join(block.text for block in reply.content if isinstance(block, TextContent))
