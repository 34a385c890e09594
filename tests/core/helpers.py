"""Fixtures of the conformance suite, as plain functions and classes.

No pytest fixtures: the same test modules also run inside Pyodide under a minimal runner.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from py_agent.ai.event_stream import AssistantMessageEventStream
from py_agent.ai.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from py_agent.ai.types import (
    AssistantMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UserMessage,
    role_of,
)
from py_agent.core.types import AgentTool, AgentToolResult

# ---------------------------------------------------------------------------------------------
# Standard objects

MODEL = Model(
    id="mock",
    name="mock",
    api="openai-responses",
    provider="openai",
    base_url="https://example.invalid",
    reasoning=False,
    input=["text"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=8192,
    max_tokens=2048,
)

M2 = Model(
    id="mock-2",
    name="mock 2",
    api="anthropic-messages",
    provider="anthropic",
    base_url="https://example.invalid/2",
    reasoning=True,
    input=["text"],
    context_window=16384,
    max_tokens=4096,
)

TRUNCATED_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)

ABBREV = {
    "AS": "agent_start",
    "AE": "agent_end",
    "TS": "turn_start",
    "TE": "turn_end",
    "MS": "message_start",
    "MU": "message_update",
    "ME": "message_end",
    "XS": "tool_execution_start",
    "XU": "tool_execution_update",
    "XE": "tool_execution_end",
}
_REVERSE = {value: key for key, value in ABBREV.items()}


def now() -> int:
    return int(time.time() * 1000)


def seq(text: str) -> list[str]:
    """Expand ``"AS TS MS ME"`` into the full event type strings."""
    return [ABBREV[token] for token in text.split()]


def text_block(text: str) -> TextContent:
    return TextContent(text=text)


def asst(
    content: Any = "",
    stop_reason: str = "stop",
    error_message: str | None = None,
    *,
    model: Model = MODEL,
) -> AssistantMessage:
    """An assistant message from MODEL with zero usage; a string is one text block."""
    blocks = [TextContent(text=content)] if isinstance(content, str) else list(content)
    return AssistantMessage(
        content=blocks,
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=now(),
    )


def call(id: str, name: str, args: dict[str, Any] | None = None) -> ToolCall:
    return ToolCall(id=id, name=name, arguments={} if args is None else args)


def asst_tools(*calls: ToolCall) -> AssistantMessage:
    return asst(list(calls), stop_reason="toolUse")


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=now())


def roles(messages: list[Any]) -> list[str | None]:
    return [role_of(message) for message in messages]


def texts(message: Any) -> list[str]:
    """The text of every text block of a message (content given as a string counts as one)."""
    content = message.content if not isinstance(message, dict) else message["content"]
    if isinstance(content, str):
        return [content]
    return [block.text for block in content if getattr(block, "type", None) == "text"]


def result_text(result: Any) -> str:
    """The text of the first content block of a tool result (object or message)."""
    return result.content[0].text


async def settle(times: int = 5) -> None:
    """Yield to the event loop a few times (lets scheduled tasks run)."""
    for _ in range(times):
        await asyncio.sleep(0)


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


# ---------------------------------------------------------------------------------------------
# Tools

ECHO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
}


def echo_tool(
    name: str = "echo",
    *,
    terminate: bool | Callable[[str], bool] = False,
    before: Callable[..., Any] | None = None,
    execution_mode: str | None = None,
    log: list[str] | None = None,
) -> AgentTool:
    """The echo tool: returns ``echoed: <value>`` with ``details={"value": value}``.

    ``before(tool_call_id, params, signal, on_update)`` (sync or async) runs first inside execute.
    ``terminate`` may be a bool or a predicate on the value. ``tool.calls`` records
    ``(tool_call_id, params, signal)`` of every execution; ``log`` gets ``start:<value>`` /
    ``end:<value>`` entries.
    """
    calls: list[tuple[str, Any, Any]] = []

    async def execute(tool_call_id: str, params: Any, signal: Any = None, on_update: Any = None) -> AgentToolResult:
        calls.append((tool_call_id, params, signal))
        value = params["value"]
        if log is not None:
            log.append(f"start:{value}")
        if before is not None:
            await maybe_await(before(tool_call_id, params, signal, on_update))
        if log is not None:
            log.append(f"end:{value}")
        done = terminate(value) if callable(terminate) else terminate
        if done:
            return AgentToolResult(
                content=[TextContent(text=f"echoed: {value}")], details={"value": value}, terminate=True
            )
        return AgentToolResult(content=[TextContent(text=f"echoed: {value}")], details={"value": value})

    tool = AgentTool(
        name=name,
        label=name.capitalize(),
        description="Echo the value back",
        parameters=ECHO_SCHEMA,
        execute=execute,
        execution_mode=execution_mode,  # type: ignore[arg-type]
    )
    tool.calls = calls  # type: ignore[attr-defined]
    return tool


def simple_tool(
    name: str,
    execute: Callable[..., Any],
    parameters: Any = None,
    **kwargs: Any,
) -> AgentTool:
    return AgentTool(
        name=name,
        label=name,
        description=f"{name} tool",
        parameters=parameters if parameters is not None else {"type": "object", "properties": {}},
        execute=execute,
        **kwargs,
    )


# ---------------------------------------------------------------------------------------------
# Scripted stream functions


@dataclass
class StreamCall:
    model: Any
    context: Any
    options: Any
    messages: list[Any] = field(default_factory=list)
    """Snapshot of ``context.messages`` at call time."""
    system_prompt: Any = None
    tools: Any = None

    @property
    def signal(self) -> Any:
        return getattr(self.options, "signal", None)


def _terminal(message: AssistantMessage) -> Any:
    if message.stop_reason in ("stop", "length", "toolUse"):
        return DoneEvent(reason=message.stop_reason, message=message)
    return ErrorEvent(reason=message.stop_reason, error=message)  # type: ignore[arg-type]


def _bare(model: Any, stop_reason: str, error_message: str) -> AssistantMessage:
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason=stop_reason,  # type: ignore[arg-type]
        error_message=error_message,
        timestamp=now(),
    )


class ScriptedStream:
    """Scripted stream function: replays scripted assistant messages through the real event protocol.

    Responses are ``AssistantMessage``s or callables ``(model, context, options, call_index)``
    returning one (or an awaitable of one). Done-only mode (default) yields once then pushes the
    terminal event; streaming mode pushes ``start``, per-block start/delta/end events (text split
    into ``chunk_chars`` pieces) and the terminal event, checking the signal before every push.
    """

    def __init__(self, *responses: Any, streaming: bool = False, chunk_chars: int | None = None) -> None:
        self.responses: list[Any] = list(responses)
        self.calls: list[StreamCall] = []
        self.streaming = streaming
        self.chunk_chars = chunk_chars
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def call_count(self) -> int:
        return len(self.calls)

    def add(self, *responses: Any) -> None:
        self.responses.extend(responses)

    def __call__(self, model: Any, context: Any, options: Any = None) -> AssistantMessageEventStream:
        index = len(self.calls)
        self.calls.append(
            StreamCall(
                model,
                context,
                options,
                list(context.messages),
                context.system_prompt,
                None if context.tools is None else list(context.tools),
            )
        )
        stream = AssistantMessageEventStream()
        signal = getattr(options, "signal", None)
        if signal is not None and signal.aborted:
            stream.push(ErrorEvent(reason="aborted", error=_bare(model, "aborted", "Request was aborted")))
            return stream
        if not self.responses:
            stream.push(ErrorEvent(reason="error", error=_bare(model, "error", "No more scripted responses")))
            return stream
        response = self.responses.pop(0)
        task = asyncio.get_running_loop().create_task(self._produce(stream, response, model, context, options, index))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return stream

    async def _produce(
        self, stream: AssistantMessageEventStream, response: Any, model: Any, context: Any, options: Any, index: int
    ) -> None:
        if callable(response):
            response = await maybe_await(response(model, context, options, index))
        if not self.streaming:
            await asyncio.sleep(0)
            stream.push(_terminal(response))
            return
        await _stream_blocks(stream, response, getattr(options, "signal", None), self.chunk_chars)


def _chunks(text: str, size: int | None) -> list[str]:
    if not size or size >= len(text):
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _stream_blocks(
    stream: AssistantMessageEventStream, message: AssistantMessage, signal: Any, chunk_chars: int | None
) -> None:
    partial = message.model_copy(update={"content": []})

    def aborted() -> bool:
        if signal is not None and signal.aborted:
            stream.push(
                ErrorEvent(
                    reason="aborted",
                    error=partial.model_copy(update={"stop_reason": "aborted", "error_message": "Request was aborted"}),
                )
            )
            return True
        return False

    def snap() -> AssistantMessage:
        return copy.copy(partial)

    if aborted():
        return
    stream.push(StartEvent(partial=snap()))
    for index, block in enumerate(message.content):
        if isinstance(block, ToolCall):
            live_call = ToolCall(id=block.id, name=block.name, arguments={})
            partial.content = [*partial.content, live_call]
            if aborted():
                return
            stream.push(ToolCallStartEvent(content_index=index, partial=snap()))
            for piece in _chunks(json.dumps(block.arguments), chunk_chars):
                await asyncio.sleep(0)
                if aborted():
                    return
                stream.push(ToolCallDeltaEvent(content_index=index, delta=piece, partial=snap()))
            live_call.arguments = block.arguments
            if aborted():
                return
            stream.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=snap()))
            continue
        thinking = isinstance(block, ThinkingContent)
        full = block.thinking if thinking else block.text
        live: Any = ThinkingContent(thinking="") if thinking else TextContent(text="")
        partial.content = [*partial.content, live]
        start, delta, end = (
            (ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent)
            if thinking
            else (TextStartEvent, TextDeltaEvent, TextEndEvent)
        )
        if aborted():
            return
        stream.push(start(content_index=index, partial=snap()))
        for piece in _chunks(full, chunk_chars):
            await asyncio.sleep(0)
            if aborted():
                return
            if thinking:
                live.thinking += piece
            else:
                live.text += piece
            stream.push(delta(content_index=index, delta=piece, partial=snap()))
        if aborted():
            return
        stream.push(end(content_index=index, content=full, partial=snap()))
    if aborted():
        return
    stream.push(_terminal(message))


class HangingStream:
    """Pushes ``start`` and then waits until the signal is aborted (pushes the aborted ``error``
    with the partial) or ``release()`` is called (pushes ``done`` with ``final``)."""

    def __init__(self, final: AssistantMessage | None = None) -> None:
        self.final = final if final is not None else asst("released")
        self.calls: list[StreamCall] = []
        self.started = asyncio.Event()
        self._release = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def call_count(self) -> int:
        return len(self.calls)

    def release(self) -> None:
        self._release.set()

    def __call__(self, model: Any, context: Any, options: Any = None) -> AssistantMessageEventStream:
        self.calls.append(StreamCall(model, context, options, list(context.messages), context.system_prompt))
        stream = AssistantMessageEventStream()
        signal = getattr(options, "signal", None)
        if signal is not None and signal.aborted:
            stream.push(ErrorEvent(reason="aborted", error=_bare(model, "aborted", "Request was aborted")))
            return stream
        task = asyncio.get_running_loop().create_task(self._produce(stream, model, signal))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return stream

    async def _produce(self, stream: AssistantMessageEventStream, model: Any, signal: Any) -> None:
        partial = _bare(model, "stop", None)  # type: ignore[arg-type]
        partial.error_message = None
        stream.push(StartEvent(partial=copy.copy(partial)))
        self.started.set()
        waiters = [asyncio.ensure_future(self._release.wait())]
        if signal is not None:
            waiters.append(asyncio.ensure_future(signal.wait()))
        _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in pending:
            waiter.cancel()
        if signal is not None and signal.aborted:
            stream.push(
                ErrorEvent(
                    reason="aborted",
                    error=partial.model_copy(update={"stop_reason": "aborted", "error_message": "Request was aborted"}),
                )
            )
        else:
            stream.push(_terminal(self.final))


# ---------------------------------------------------------------------------------------------
# Listeners


class Recorder:
    """A listener recording every event (and the signal it came with)."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.signals: list[Any] = []

    def __call__(self, event: Any, signal: Any = None) -> None:
        self.events.append(event)
        self.signals.append(signal)

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, kind: str) -> list[Any]:
        kind = ABBREV.get(kind, kind)
        return [event for event in self.events if event.type == kind]

    def first(self, kind: str) -> Any:
        return self.of(kind)[0]

    def trace(self) -> list[str]:
        """Abbreviated events with labels: ``MS(user)``, ``XE(t1)``, ``AS`` ..."""
        out = []
        for event in self.events:
            short = _REVERSE[event.type]
            if event.type.startswith("message_") and event.type != "message_update":
                out.append(f"{short}({role_of(event.message)})")
            elif event.type.startswith("tool_execution_"):
                out.append(f"{short}({event.tool_call_id})")
            else:
                out.append(short)
        return out

    def clear(self) -> None:
        self.events.clear()
        self.signals.clear()


def new_agent(
    *responses: Any, streaming: bool = False, chunk_chars: int | None = None, tools: Any = None, **options: Any
) -> tuple[Any, ScriptedStream, Recorder]:
    """``Agent(stream_fn=ScriptedStream(*responses), initial_state={model: MODEL, tools})`` with a
    Recorder subscribed first."""
    from py_agent.core import Agent

    stream = options.pop("stream_fn", None) or ScriptedStream(*responses, streaming=streaming, chunk_chars=chunk_chars)
    initial = options.pop("initial_state", None) or {}
    initial = {"model": MODEL, **initial}
    if tools is not None:
        initial["tools"] = tools
    agent = Agent(stream_fn=stream, initial_state=initial, **options)
    recorder = Recorder()
    agent.subscribe(recorder)
    return agent, stream, recorder
