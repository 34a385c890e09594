"""Types of the agent core: tools, contexts, hook contracts, loop configuration and agent events.

Contracts are pi-agent-core's (``types.ts``), restated where the Python port differs. Hooks may be
sync or async; hook results may be the result objects below or plain dicts with the same keys
(snake_case, or pi's camelCase).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from ..ai.abort import AbortSignal
from ..ai.event_stream import AssistantMessageEventStream
from ..ai.events import AssistantMessageEvent, PlainEvent
from ..ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    PiModel,
    SimpleStreamOptions,
    TextContent,
    ThinkingBudgets,
    ToolCall,
    ToolResultMessage,
)

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
"""The agent's thinking level; ``"off"`` maps to no ``reasoning`` option."""

QueueMode: TypeAlias = Literal["all", "one-at-a-time"]
"""``"all"`` drains every queued message at a drain point, ``"one-at-a-time"`` only the oldest."""

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]
"""``"sequential"``: prepare, execute and finalize each call before the next. ``"parallel"``:
prepare calls in order, then execute the allowed ones concurrently; ``tool_execution_end`` comes
in completion order, tool-result messages later in the assistant's source order."""

AgentMessage: TypeAlias = Any
"""A pi-ai message (``UserMessage``, ``AssistantMessage``, ``ToolResultMessage``) or any custom
app message: an object (best a pydantic model) or mapping with a ``role`` of its own."""

AgentToolCall: TypeAlias = ToolCall


class AgentError(RuntimeError, ValueError):
    """A call the agent refuses in its current state (busy, nothing to continue from, ...)."""


# ---------------------------------------------------------------------------------------------
# Tools


class AgentToolResult(PiModel):
    """What a tool returns: ``content`` for the model, ``details`` for logs and UIs.

    ``terminate=True`` hints that the agent should stop after this tool batch; it only takes
    effect when every result in the batch sets it. It is never copied to the tool-result message.
    """

    content: list[TextContent | ImageContent] = Field(default_factory=list)
    details: Any = None
    terminate: bool = False

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            # As PiModel: no nulls for unset values; and pi leaves `terminate` out unless a tool set it.
            data = {key: value for key, value in data.items() if value is not None}
            if "terminate" not in self.model_fields_set and not self.terminate:
                data.pop("terminate", None)
        return data


AgentToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], None]
"""Lets a tool stream partial results; calls after its ``execute`` settled are ignored."""

ToolExecute: TypeAlias = Callable[
    [str, Any, AbortSignal | None, AgentToolUpdateCallback | None], Awaitable[AgentToolResult | Mapping[str, Any]]
]


@dataclass
class AgentTool:
    """A tool the agent can run.

    ``parameters`` is a JSON Schema dict (``execute`` gets the validated dict) or a pydantic model
    class (``execute`` gets the validated instance). ``execute(tool_call_id, params, signal,
    on_update)`` returns an :class:`AgentToolResult` (or a dict of its fields) and signals failure
    by raising; it receives the run's abort signal and must honour it itself. ``label`` is for UIs
    only. Subclasses may define ``execute`` (and ``prepare_arguments``) as methods instead.
    """

    name: str
    label: str = ""
    description: str = ""
    parameters: Any = field(default_factory=lambda: {"type": "object", "properties": {}})
    execute: ToolExecute | None = None
    execution_mode: ToolExecutionMode | None = None
    """Per-tool override: ``"sequential"`` forces the whole batch to run sequentially."""
    prepare_arguments: Callable[[Any], Any] | None = None
    """Optional shim turning raw (e.g. legacy) arguments into the schema's shape before validation."""

    def __post_init__(self) -> None:
        # A subclass may define `execute` / `prepare_arguments` as methods: the dataclass
        # __init__ stored None on the instance, which would hide them.
        for name in ("execute", "prepare_arguments"):
            if getattr(self, name) is None:
                method = getattr(type(self), name, None)
                if callable(method):
                    setattr(self, name, method.__get__(self))


@dataclass
class AgentContext:
    """The snapshot handed to the loop, and the live object it appends to."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[Any] | None = None


# ---------------------------------------------------------------------------------------------
# Hook contexts and results


@dataclass
class BeforeToolCallContext:
    assistant_message: AssistantMessage
    """The assistant message that requested the call."""
    tool_call: ToolCall
    """The raw tool-call block from ``assistant_message.content`` (before ``prepare_arguments``)."""
    args: Any
    """Validated arguments: the very object later passed to ``execute`` (mutations are not re-validated)."""
    context: AgentContext
    """The live loop context."""


@dataclass
class BeforeToolCallResult:
    """``block=True`` prevents execution; ``reason`` becomes the error result's text."""

    block: bool = False
    reason: str | None = None


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    """The executed result before any override."""
    is_error: bool
    context: AgentContext


@dataclass
class AfterToolCallResult:
    """Field-wise override of an executed result (``None`` keeps the original; no deep merge)."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None
    terminate: bool | None = None


@dataclass
class ShouldStopAfterTurnContext:
    message: AssistantMessage
    """The assistant message that completed the turn."""
    tool_results: list[ToolResultMessage]
    """The tool-result messages passed to that turn's ``turn_end``."""
    context: AgentContext
    """The loop context after the turn's messages were appended (and any ``prepare_next_turn``)."""
    new_messages: list[AgentMessage]
    """What the loop returns if it stops now."""


PrepareNextTurnContext = ShouldStopAfterTurnContext


@dataclass
class AgentLoopTurnUpdate:
    """Replacement state for the rest of the run, returned by ``prepare_next_turn``."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None


# ---------------------------------------------------------------------------------------------
# Stream function and loop configuration


class StreamFn(Protocol):
    """Stream function used by the loop (``stream_simple`` by default).

    Contract: must not raise for request, model or runtime failures; it returns an
    ``AssistantMessageEventStream`` (or an awaitable of one) whose final message carries
    ``stop_reason`` ``"error"``/``"aborted"`` and an ``error_message`` instead.
    """

    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions, /
    ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]: ...


ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], Sequence[Any] | Awaitable[Sequence[Any]]]
TransformContext: TypeAlias = Callable[
    [list[AgentMessage], AbortSignal | None], Awaitable[list[AgentMessage]] | list[AgentMessage]
]
GetApiKey: TypeAlias = Callable[[str], Awaitable[str | None] | str | None]
BeforeToolCall: TypeAlias = Callable[[BeforeToolCallContext, AbortSignal | None], Any]
AfterToolCall: TypeAlias = Callable[[AfterToolCallContext, AbortSignal | None], Any]


@dataclass(kw_only=True)
class AgentLoopConfig:
    """Configuration of one low-level loop run (pi's ``AgentLoopConfig``).

    Contracts: ``convert_to_llm``, ``transform_context``, ``get_api_key``,
    ``should_stop_after_turn`` and the two queue callbacks must not raise; if they do, the loop is
    interrupted without a normal event sequence (the ``Agent`` then reports a failure message).
    ``before_tool_call``/``after_tool_call`` raising becomes an error tool result.
    """

    model: Model
    convert_to_llm: ConvertToLlm
    """AgentMessage list -> LLM messages, once per LLM call (after ``transform_context``)."""
    transform_context: TransformContext | None = None
    """AgentMessage list -> AgentMessage list (pruning, injection), once per LLM call. Receives the
    live list: return a new list rather than mutating it."""
    get_api_key: GetApiKey | None = None
    """Resolves the key for ``model.provider`` before each LLM call (for expiring tokens)."""
    should_stop_after_turn: Callable[[ShouldStopAfterTurnContext], Any] | None = None
    """Called after each non-error turn; truthy ends the run before the queues are polled."""
    prepare_next_turn: Callable[[PrepareNextTurnContext], Any] | None = None
    """Called after each non-error turn's ``turn_end``; may replace context, model and thinking level."""
    get_steering_messages: Callable[[], Any] | None = None
    """Messages to inject after the current turn (its whole tool batch) before the next LLM call."""
    get_follow_up_messages: Callable[[], Any] | None = None
    """Messages to process when the agent would otherwise stop."""
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCall | None = None
    """After validation, before execution; ``block=True`` turns the call into an error result."""
    after_tool_call: AfterToolCall | None = None
    """After execution, before ``tool_execution_end``; may override content/details/is_error/terminate."""

    # Stream options forwarded to the stream function.
    api_key: str | None = None
    reasoning: str | None = None
    session_id: str | None = None
    on_payload: Callable[..., Any] | None = None
    on_response: Callable[..., Any] | None = None
    transport: str | None = None
    thinking_budgets: ThinkingBudgets | Mapping[str, int] | None = None
    max_retry_delay_ms: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    cache_retention: str | None = None
    headers: dict[str, str] | None = None
    timeout_ms: int | None = None
    max_retries: int | None = None
    metadata: dict[str, Any] | None = None
    idle_timeout_ms: int | None = None
    http_transport: Any = None


# ---------------------------------------------------------------------------------------------
# Agent events


# Plain slotted classes, as the stream events (py_agent/ai/events.py says why): a streamed reply
# builds a ``message_update`` per delta.


class AgentStartEvent(PlainEvent):
    """The first event of a run."""

    __slots__ = ()
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(PlainEvent):
    """The last event of a run; the agent is idle only after its listeners finished."""

    __slots__ = ("messages",)
    type: Literal["agent_end"] = "agent_end"
    messages: list[Any]

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages


class TurnStartEvent(PlainEvent):
    """A turn starts: one model call, then the tool calls it asked for."""

    __slots__ = ()
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(PlainEvent):
    """A turn ended: the assistant ``message`` and the ``tool_results`` of its tool calls."""

    __slots__ = ("message", "tool_results")
    type: Literal["turn_end"] = "turn_end"
    message: Any
    tool_results: list[Any]

    def __init__(self, message: Any, tool_results: list[Any]) -> None:
        self.message = message
        self.tool_results = tool_results


class MessageStartEvent(PlainEvent):
    """A message begins (for an assistant reply: before its first delta)."""

    __slots__ = ("message",)
    type: Literal["message_start"] = "message_start"
    message: Any

    def __init__(self, message: Any) -> None:
        self.message = message


class MessageUpdateEvent(PlainEvent):
    """An assistant reply grew: ``message`` is the partial reply, ``assistant_message_event`` the stream
    event (e.g. ``text_delta`` with its ``delta``).
    """

    __slots__ = ("assistant_message_event", "message")
    type: Literal["message_update"] = "message_update"
    message: Any
    assistant_message_event: Any

    def __init__(self, message: Any, assistant_message_event: Any) -> None:
        self.message = message
        self.assistant_message_event = assistant_message_event


class MessageEndEvent(PlainEvent):
    """A message is complete (user, assistant or tool result); ``message`` is final."""

    __slots__ = ("message",)
    type: Literal["message_end"] = "message_end"
    message: Any

    def __init__(self, message: Any) -> None:
        self.message = message


class ToolExecutionStartEvent(PlainEvent):
    """A tool call starts running with its validated ``args``."""

    __slots__ = ("args", "tool_call_id", "tool_name")
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: Any

    def __init__(self, tool_call_id: str, tool_name: str, args: Any) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.args = args


class ToolExecutionUpdateEvent(PlainEvent):
    """A running tool reported progress (its ``on_update`` callback): ``partial_result``."""

    __slots__ = ("args", "partial_result", "tool_call_id", "tool_name")
    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any

    def __init__(self, tool_call_id: str, tool_name: str, args: Any, partial_result: Any) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.args = args
        self.partial_result = partial_result


class ToolExecutionEndEvent(PlainEvent):
    """A tool call finished: ``result`` and ``is_error``."""

    __slots__ = ("is_error", "result", "tool_call_id", "tool_name")
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: Any
    is_error: bool

    def __init__(self, tool_call_id: str, tool_name: str, result: Any, is_error: bool) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.result = result
        self.is_error = is_error


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)

AgentEventSink: TypeAlias = Callable[[AgentEvent], Awaitable[None] | None]

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentEndEvent",
    "AgentError",
    "AgentEvent",
    "AgentLoopConfig",
    "AgentLoopTurnUpdate",
    "AgentMessage",
    "AgentStartEvent",
    "AgentTool",
    "AgentToolCall",
    "AgentToolResult",
    "AgentToolUpdateCallback",
    "AssistantMessageEvent",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "PrepareNextTurnContext",
    "QueueMode",
    "ShouldStopAfterTurnContext",
    "StreamFn",
    "ThinkingLevel",
    "ToolExecutionEndEvent",
    "ToolExecutionMode",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
