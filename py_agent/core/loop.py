"""The agent loop: works with agent messages throughout, converts to LLM messages per call.

A run emits ``agent_start``, then turns (``turn_start`` ... ``turn_end``: one LLM call and its
tool batch), then ``agent_end``. Steering messages are injected after a turn's whole tool batch,
follow-ups when the agent would otherwise stop. This is a port of pi-agent-core's
``agent-loop.ts`` (0.79.10) with the Python port's decisions (``docs/port-decisions.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from inspect import isawaitable
from typing import Any, TypeAlias, cast

from pydantic import BaseModel

from ..ai._interop import camel_to_snake, get_field
from ..ai._util import call_flex, error_text, maybe_await
from ..ai.abort import AbortSignal
from ..ai.eager import start_eagerly
from ..ai.event_stream import PENDING, EventStream, StreamEndedWithoutResult
from ..ai.registry import stream_simple
from ..ai.types import (
    AssistantMessage,
    Context,
    Model,
    SimpleStreamOptions,
    TextContent,
    ToolCall,
    ToolResultMessage,
    fast_construct,
    now_ms,
    role_of,
    shallow_copy,
    staging_class,
)
from ..ai.validation import validate_tool_arguments
from .types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEndEvent,
    AgentError,
    AgentEvent,
    AgentLoopConfig,
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentStartEvent,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ShouldStopAfterTurnContext,
    StreamFn,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)

Emit: TypeAlias = Callable[[AgentEvent], Awaitable[None]]
# The event-loop turns an update event of a parallel batch takes to settle (pi: the awaits of the
# agent's emit and of Promise.all), so the batch's tools end in pi's order.
_UPDATE_TURNS = 3

_PARTIAL_EVENTS = frozenset(
    {
        "text_start",
        "text_delta",
        "text_end",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    }
)

TRUNCATED_TOOL_CALL = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
    "may be truncated. Re-issue the tool call with complete arguments."
)


# ---------------------------------------------------------------------------------------------
# Entry points


def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext | Mapping[str, Any],
    config: AgentLoopConfig | Mapping[str, Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Start a run with new prompt messages; returns its event stream at once.

    The stream's result is the run's new messages. If the run raises, the stream ends and
    ``result()`` raises that exception (pi leaves the stream open forever).
    """
    stream = _create_agent_stream()
    _spawn(stream, run_agent_loop(prompts, context, config, _push_to(stream), signal, stream_fn))
    return stream


def agent_loop_continue(
    context: AgentContext | Mapping[str, Any],
    config: AgentLoopConfig | Mapping[str, Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Continue from the current context without a new message (retries, tool results).

    The last message must convert to a ``user`` or ``toolResult`` message through
    ``convert_to_llm``; it cannot be an assistant message. Raises at once when it is.
    """
    _check_continuable(_as_context(context).messages)
    stream = _create_agent_stream()
    _spawn(stream, run_agent_loop_continue(context, config, _push_to(stream), signal, stream_fn))
    return stream


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext | Mapping[str, Any],
    config: AgentLoopConfig | Mapping[str, Any],
    emit: Callable[[AgentEvent], Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run the loop with new prompts; returns prompts plus every message the run added.

    The loop context is a copy whose ``messages`` is a new list. Exceptions propagate after the
    events already emitted (no ``agent_end``).
    """
    ctx = _as_context(context)
    new_messages: list[AgentMessage] = list(prompts)
    current = AgentContext(system_prompt=ctx.system_prompt, messages=[*ctx.messages, *prompts], tools=ctx.tools)
    send = _async_emit(emit)
    await send(AgentStartEvent())
    await send(TurnStartEvent())
    for prompt in prompts:
        await send(MessageStartEvent(message=prompt))
        await send(MessageEndEvent(message=prompt))
    await _run_loop(current, new_messages, _as_config(config), signal, send, stream_fn, emit)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext | Mapping[str, Any],
    config: AgentLoopConfig | Mapping[str, Any],
    emit: Callable[[AgentEvent], Any],
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Continue the loop; returns only the messages this run created.

    The loop shares the caller's ``messages`` list and appends to it (as pi does; the ``Agent``
    always passes a fresh copy).
    """
    ctx = _as_context(context)
    _check_continuable(ctx.messages)
    new_messages: list[AgentMessage] = []
    current = AgentContext(system_prompt=ctx.system_prompt, messages=ctx.messages, tools=ctx.tools)
    send = _async_emit(emit)
    await send(AgentStartEvent())
    await send(TurnStartEvent())
    await _run_loop(current, new_messages, _as_config(config), signal, send, stream_fn, emit)
    return new_messages


def _check_continuable(messages: Sequence[AgentMessage]) -> None:
    if not messages:
        raise AgentError("Cannot continue: no messages in context")
    if role_of(messages[-1]) == "assistant":
        raise AgentError("Cannot continue from message role: assistant")


def _create_agent_stream() -> EventStream[AgentEvent, list[AgentMessage]]:
    return EventStream(lambda event: event.type == "agent_end", _agent_end_messages)


def _agent_end_messages(event: AgentEvent) -> list[AgentMessage]:
    return list(event.messages) if isinstance(event, AgentEndEvent) else []


def _push_to(stream: EventStream[AgentEvent, list[AgentMessage]]) -> Callable[[AgentEvent], None]:
    return stream.push


_background: set[asyncio.Task[None]] = set()
_new = object.__new__


def _spawn(stream: EventStream[AgentEvent, list[AgentMessage]], run: Coroutine[Any, Any, list[AgentMessage]]) -> None:
    async def drive() -> None:
        try:
            messages = await run
        except Exception as error:
            stream.fail(error)
            return
        stream.end(messages)

    task = asyncio.get_running_loop().create_task(drive())
    _background.add(task)
    task.add_done_callback(_background.discard)


def _async_emit(emit: Callable[[AgentEvent], Any]) -> Emit:
    if asyncio.iscoroutinefunction(emit):
        return emit

    async def send(event: AgentEvent) -> None:
        await maybe_await(emit(event))

    return send


# ---------------------------------------------------------------------------------------------
# Main loop


async def _run_loop(
    context: AgentContext,
    new_messages: list[AgentMessage],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn | None,
    emit_update: Callable[[AgentEvent], Any],
) -> None:
    first_turn = True
    # The user may have queued steering while waiting for the run to start.
    pending = await _poll(config.get_steering_messages)

    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            if first_turn:
                first_turn = False
            else:
                await emit(TurnStartEvent())

            if pending:
                for message in pending:
                    await emit(MessageStartEvent(message=message))
                    await emit(MessageEndEvent(message=message))
                    context.messages.append(message)
                    new_messages.append(message)
                pending = []

            message = await _stream_assistant_response(context, config, signal, emit, stream_fn, emit_update)
            new_messages.append(message)

            if message.stop_reason in ("error", "aborted"):
                await emit(TurnEndEvent(message=message, tool_results=[]))
                await emit(AgentEndEvent(messages=new_messages))
                return

            tool_calls = _tool_calls(message)
            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            if tool_calls:
                if message.stop_reason == "length":
                    # Arguments of a cut-off reply may be truncated: fail every call (pi >= 0.80.4).
                    results, terminate = await _fail_truncated_tool_calls(tool_calls, emit)
                else:
                    results, terminate = await _execute_tool_calls(context, message, tool_calls, config, signal, emit)
                tool_results.extend(results)
                has_more_tool_calls = not terminate
                for result in tool_results:
                    context.messages.append(result)
                    new_messages.append(result)

            await emit(TurnEndEvent(message=message, tool_results=tool_results))

            if config.prepare_next_turn is not None:
                update = _as_turn_update(
                    await maybe_await(
                        config.prepare_next_turn(
                            ShouldStopAfterTurnContext(message, tool_results, context, new_messages)
                        )
                    )
                )
                if update is not None:
                    if update.context is not None:
                        context = update.context
                    changes: dict[str, Any] = {}
                    if update.model is not None:
                        changes["model"] = update.model
                    if update.thinking_level is not None:
                        changes["reasoning"] = None if update.thinking_level == "off" else update.thinking_level
                    if changes:
                        config = dataclasses.replace(config, **changes)

            if config.should_stop_after_turn is not None and await maybe_await(
                config.should_stop_after_turn(ShouldStopAfterTurnContext(message, tool_results, context, new_messages))
            ):
                await emit(AgentEndEvent(messages=new_messages))
                return

            pending = await _poll(config.get_steering_messages)

        # The agent would stop here: follow-ups start another turn.
        follow_ups = await _poll(config.get_follow_up_messages)
        if follow_ups:
            pending = follow_ups
            continue
        break

    await emit(AgentEndEvent(messages=new_messages))


async def _poll(source: Callable[[], Any] | None) -> list[AgentMessage]:
    if source is None:
        return []
    return list(await maybe_await(source()) or [])


# ---------------------------------------------------------------------------------------------
# One LLM call


def _stream_options(config: AgentLoopConfig, api_key: str | None, signal: AbortSignal | None) -> SimpleStreamOptions:
    return SimpleStreamOptions(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        signal=signal,
        api_key=api_key,
        transport=config.transport,
        cache_retention=config.cache_retention,  # type: ignore[arg-type]
        session_id=config.session_id,
        on_payload=config.on_payload,
        on_response=config.on_response,
        headers=config.headers,
        timeout_ms=config.timeout_ms,
        max_retries=config.max_retries,
        max_retry_delay_ms=config.max_retry_delay_ms,
        metadata=config.metadata,
        idle_timeout_ms=config.idle_timeout_ms,
        http_transport=config.http_transport,
        reasoning=config.reasoning,  # type: ignore[arg-type]
        thinking_budgets=config.thinking_budgets,  # type: ignore[arg-type]
    )


def _shallow_copy(message: Any) -> Any:
    if isinstance(message, BaseModel):
        return shallow_copy(message)
    if isinstance(message, dict):
        return dict(message)
    return copy.copy(message)


async def _stream_assistant_response(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn | None,
    emit_update: Callable[[AgentEvent], Any],
) -> AssistantMessage:
    """``emit_update`` is the caller's own emit (sync or async), used for ``message_update``: the
    per-delta path calls it directly instead of through the ``emit`` coroutine wrapper."""
    messages = context.messages
    if config.transform_context is not None:
        messages = await maybe_await(call_flex(config.transform_context, messages, signal))
    llm_messages = await maybe_await(config.convert_to_llm(messages))
    llm_context = fast_construct(
        Context, system_prompt=context.system_prompt, messages=llm_messages, tools=context.tools
    )
    api_key = None
    if config.get_api_key is not None:
        api_key = await maybe_await(config.get_api_key(config.model.provider))
    api_key = api_key or config.api_key

    function: Any = stream_fn or stream_simple
    response = await maybe_await(
        call_flex(function, config.model, llm_context, _stream_options(config, api_key, signal))
    )

    partial: Any = None
    added_partial = False
    staging: Any = staging_class(AssistantMessage)
    events = aiter(response)
    # An EventStream hands over the events it has ready without an await (see ``poll``).
    poll = response.poll if isinstance(response, EventStream) else None
    while True:
        event = poll() if poll is not None else PENDING
        if event is PENDING:
            try:
                event = await anext(events)
            except StopAsyncIteration:
                break
        kind = event.type
        if kind in _PARTIAL_EVENTS:  # the per-delta case first
            if partial is not None:
                partial = event.partial
                context.messages[-1] = partial
                # MessageUpdateEvent(message=_shallow_copy(partial), assistant_message_event=event),
                # without the calls: of the class (its __init__), and of shallow_copy for the usual
                # message (its staged copy inlined: see py_agent/ai/types.py).
                update = _new(MessageUpdateEvent)
                if type(partial) is AssistantMessage and staging is not None:
                    copied = staging()
                    copied.__dict__ = partial.__dict__.copy()
                    copied.__pydantic_fields_set__ = partial.__pydantic_fields_set__.copy()
                    extra = partial.__pydantic_extra__
                    copied.__pydantic_extra__ = None if extra is None else extra.copy() if extra else {}
                    private = partial.__pydantic_private__
                    copied.__pydantic_private__ = None if private is None else private.copy()
                    copied.__class__ = AssistantMessage
                    update.message = copied
                else:
                    update.message = _shallow_copy(partial)
                update.assistant_message_event = event
                pending = emit_update(update)
                if pending is not None and isawaitable(pending):  # as ``emit`` does (maybe_await)
                    await pending
        elif kind == "start":
            partial = event.partial
            context.messages.append(partial)
            added_partial = True
            await emit(MessageStartEvent(message=_shallow_copy(partial)))
        elif kind == "done" or kind == "error":
            return cast(AssistantMessage, await _finish_response(context, emit, await response.result(), added_partial))

    # The producer ended the stream without a terminal event: use its result if it set one,
    # never wait forever for one that cannot come (pi would hang here).
    if getattr(response, "has_result", True) is False:
        raise StreamEndedWithoutResult("Stream ended without a final message")
    return cast(AssistantMessage, await _finish_response(context, emit, await response.result(), added_partial))


async def _finish_response(context: AgentContext, emit: Emit, final: Any, added_partial: bool) -> Any:
    if added_partial:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(MessageStartEvent(message=_shallow_copy(final)))
    await emit(MessageEndEvent(message=final))
    return final


# ---------------------------------------------------------------------------------------------
# Tool batches


@dataclasses.dataclass
class _Finalized:
    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool


@dataclasses.dataclass
class _Prepared:
    tool_call: ToolCall
    tool: Any
    args: Any


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else getattr(block, "type", None)


def _tool_calls(message: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            calls.append(block)
        elif _block_type(block) == "toolCall":
            calls.append(ToolCall.model_validate(block))
    return calls


def _find_tool(context: AgentContext, name: str) -> Any:
    for tool in context.tools or []:
        if get_field(tool, "name") == name:
            return tool
    return None


def _error_result(text: str) -> AgentToolResult:
    return fast_construct(AgentToolResult, content=[TextContent(text=text)], details={})


async def _emit_tool_start(tool_call: ToolCall, emit: Emit) -> None:
    await emit(
        ToolExecutionStartEvent(
            tool_call_id=tool_call.id,
            tool_name=tool_call.name,
            args=tool_call.arguments,
        )
    )


async def _emit_tool_end(finalized: _Finalized, emit: Emit) -> None:
    await emit(
        ToolExecutionEndEvent(
            tool_call_id=finalized.tool_call.id,
            tool_name=finalized.tool_call.name,
            result=finalized.result,
            is_error=finalized.is_error,
        )
    )


def _tool_result_message(finalized: _Finalized) -> ToolResultMessage:
    result = finalized.result
    return fast_construct(
        ToolResultMessage,
        role="toolResult",
        tool_call_id=finalized.tool_call.id,
        tool_name=finalized.tool_call.name,
        # Untyped tools may return no content; never let that reach the transcript.
        content=result.content if result.content is not None else [],
        details=result.details,
        is_error=finalized.is_error,
        timestamp=now_ms(),
    )


async def _emit_tool_result_message(message: ToolResultMessage, emit: Emit) -> None:
    await emit(MessageStartEvent(message=message))
    await emit(MessageEndEvent(message=message))


def _should_terminate(finalized: Sequence[_Finalized]) -> bool:
    return bool(finalized) and all(item.result.terminate is True for item in finalized)


async def _fail_truncated_tool_calls(
    tool_calls: Sequence[ToolCall], emit: Emit
) -> tuple[list[ToolResultMessage], bool]:
    messages = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        finalized = _Finalized(tool_call, _error_result(TRUNCATED_TOOL_CALL.format(name=tool_call.name)), True)
        await _emit_tool_end(finalized, emit)
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        messages.append(message)
    return messages, False


async def _execute_tool_calls(
    context: AgentContext,
    assistant: AssistantMessage,
    tool_calls: Sequence[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    sequential = config.tool_execution == "sequential" or any(
        get_field(_find_tool(context, call.name), "execution_mode") == "sequential" for call in tool_calls
    )
    if sequential:
        return await _execute_sequential(context, assistant, tool_calls, config, signal, emit)
    return await _execute_parallel(context, assistant, tool_calls, config, signal, emit)


async def _execute_sequential(
    context: AgentContext,
    assistant: AssistantMessage,
    tool_calls: Sequence[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    finalized_calls: list[_Finalized] = []
    messages: list[ToolResultMessage] = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        preparation = await _prepare_tool_call(context, assistant, tool_call, config, signal)
        if isinstance(preparation, _Finalized):
            finalized = preparation
        else:
            result, is_error = await _execute_prepared(preparation, signal, emit)
            finalized = await _finalize(context, assistant, preparation, result, is_error, config, signal)
        await _emit_tool_end(finalized, emit)
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        finalized_calls.append(finalized)
        messages.append(message)
        if signal is not None and signal.aborted:
            break
    return messages, _should_terminate(finalized_calls)


async def _execute_parallel(
    context: AgentContext,
    assistant: AssistantMessage,
    tool_calls: Sequence[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> tuple[list[ToolResultMessage], bool]:
    entries: list[_Finalized | _Prepared] = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        preparation = await _prepare_tool_call(context, assistant, tool_call, config, signal)
        if isinstance(preparation, _Finalized):
            await _emit_tool_end(preparation, emit)
        entries.append(preparation)
        if signal is not None and signal.aborted:
            break

    # As pi: every prepared tool is started, in source order, before any is awaited, so what a
    # tool does before its first suspension (updates, a synchronous result or error) comes before
    # any tool_execution_end of the batch.
    started = {
        index: _start_execution(entry, signal, emit, turns=True)
        for index, entry in enumerate(entries)
        if isinstance(entry, _Prepared)
    }

    async def run(prepared: _Prepared, execution: _Execution) -> _Finalized:
        result, is_error = await _finish_execution(execution, turns=True)
        finalized = await _finalize(context, assistant, prepared, result, is_error, config, signal, turns=True)
        await asyncio.sleep(0)  # pi awaits the finalized call
        await _emit_tool_end(finalized, emit)
        return finalized

    jobs = {index: run(cast(_Prepared, entries[index]), execution) for index, execution in started.items()}
    # As pi's Promise.all: the first failure (a listener raised) fails the batch at once; the other
    # jobs run on, and gather marks their later errors as retrieved.
    outcomes = await asyncio.gather(*jobs.values())
    done = dict(zip(jobs, outcomes, strict=True))
    ordered: list[_Finalized] = [
        entry if isinstance(entry, _Finalized) else done[index] for index, entry in enumerate(entries)
    ]

    messages = []
    for finalized in ordered:
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        messages.append(message)
    return messages, _should_terminate(ordered)


async def _prepare_tool_call(
    context: AgentContext,
    assistant: AssistantMessage,
    tool_call: ToolCall,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
) -> _Finalized | _Prepared:
    tool = _find_tool(context, tool_call.name)
    if tool is None:
        return _Finalized(tool_call, _error_result(f"Tool {tool_call.name} not found"), True)
    try:
        call_for_validation: Any = tool_call
        prepare = get_field(tool, "prepare_arguments")
        if prepare is not None:
            prepared_args = prepare(tool_call.arguments)
            if prepared_args is not tool_call.arguments:
                call_for_validation = {"name": tool_call.name, "arguments": prepared_args}
        args = validate_tool_arguments(tool, call_for_validation)
        if config.before_tool_call is not None:
            before = _as_before_result(
                await maybe_await(
                    call_flex(
                        config.before_tool_call, BeforeToolCallContext(assistant, tool_call, args, context), signal
                    )
                )
            )
            if signal is not None and signal.aborted:
                return _Finalized(tool_call, _error_result("Operation aborted"), True)
            if before is not None and before.block:
                return _Finalized(tool_call, _error_result(before.reason or "Tool execution was blocked"), True)
        if signal is not None and signal.aborted:
            return _Finalized(tool_call, _error_result("Operation aborted"), True)
        return _Prepared(tool_call, tool, args)
    except Exception as error:
        return _Finalized(tool_call, _error_result(error_text(error)), True)


@dataclasses.dataclass
class _Execution:
    """A tool's ``execute`` started up to its first suspension, with the updates it reported."""

    tool_call: ToolCall
    updates: list[asyncio.Future[None]]
    outcome: asyncio.Future[Any] | None = None
    value: Any = None
    error: Exception | None = None
    accepting: bool = True
    settled_at_start: bool = True
    """Whether ``execute`` had returned or raised by the end of its synchronous start."""


def _start_execution(prepared: _Prepared, signal: AbortSignal | None, emit: Emit, turns: bool = False) -> _Execution:
    tool_call = prepared.tool_call
    execution = _Execution(tool_call, [])

    def on_update(partial_result: Any) -> None:
        if not execution.accepting:
            return
        event = emit(
            ToolExecutionUpdateEvent(
                tool_call_id=tool_call.id,
                tool_name=tool_call.name,
                args=tool_call.arguments,
                partial_result=partial_result,
            )
        )
        # In a parallel batch the event settles a turn later, as pi's emit settles after its
        # listeners' awaits: tools with updates end after those without, in update order.
        execution.updates.append(start_eagerly(_then_turn(event) if turns else event))  # type: ignore[arg-type]

    execute = get_field(prepared.tool, "execute")
    try:
        if execute is None:
            raise TypeError(f"Tool {tool_call.name} has no execute function")
        raw = call_flex(execute, tool_call.id, prepared.args, signal, on_update)
        if asyncio.iscoroutine(raw):
            execution.outcome = start_eagerly(raw)
            execution.settled_at_start = execution.outcome.done()
        elif isawaitable(raw):
            execution.outcome = asyncio.ensure_future(raw)
            execution.settled_at_start = False
        else:
            execution.value = raw
    except Exception as error:
        execution.error = error
    return execution


async def _finish_execution(execution: _Execution, turns: bool = False) -> tuple[AgentToolResult, bool]:
    """The tool's result once it and its update events settled.

    With ``turns`` (a parallel batch) the awaits take the turns pi's awaits take, so tools that
    finish without a real suspension end in pi's order: pi's ``await execute()`` costs a turn
    unless ``execute`` threw synchronously, and awaiting update events costs more than awaiting none.
    """
    try:
        if execution.error is not None:
            raise execution.error
        if execution.outcome is not None:
            if turns and execution.outcome.done():
                # pi resumes a turn after the result settled: at once for a result settled at the
                # start, a turn later for one that settled since.
                await asyncio.sleep(0)
                if not execution.settled_at_start:
                    await asyncio.sleep(0)
            elif turns:
                with contextlib.suppress(Exception):  # read below, the way it settled
                    await execution.outcome
                await asyncio.sleep(0)
            raw = await execution.outcome
        else:
            if turns:
                await asyncio.sleep(0)
            raw = execution.value
        result = _as_tool_result(raw)
    except Exception as error:
        execution.accepting = False
        await _settle(execution.updates, turns)
        return _error_result(error_text(error)), True
    execution.accepting = False
    await _settle(execution.updates, turns)
    return result, False


async def _execute_prepared(
    prepared: _Prepared, signal: AbortSignal | None, emit: Emit
) -> tuple[AgentToolResult, bool]:
    return await _finish_execution(_start_execution(prepared, signal, emit))


async def _then_turn(event: Awaitable[None]) -> None:
    await event
    for _ in range(_UPDATE_TURNS):
        await asyncio.sleep(0)


async def _settle(updates: list[asyncio.Future[None]], turns: bool = False) -> None:
    if not updates:
        if turns:
            await asyncio.sleep(0)
        return
    outcomes = await asyncio.gather(*updates, return_exceptions=True)
    if turns:
        await asyncio.sleep(0)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


async def _finalize(
    context: AgentContext,
    assistant: AssistantMessage,
    prepared: _Prepared,
    result: AgentToolResult,
    is_error: bool,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    turns: bool = False,
) -> _Finalized:
    if config.after_tool_call is not None:
        try:
            after = _as_after_result(
                await maybe_await(
                    call_flex(
                        config.after_tool_call,
                        AfterToolCallContext(assistant, prepared.tool_call, prepared.args, result, is_error, context),
                        signal,
                    )
                )
            )
            if turns:
                await asyncio.sleep(0)  # pi awaits the hook
            if after is not None:
                fields: dict[str, Any] = {
                    "content": after.content if after.content is not None else result.content,
                    "details": after.details if after.details is not None else result.details,
                }
                if after.terminate is not None:
                    fields["terminate"] = after.terminate
                elif "terminate" in result.model_fields_set:
                    fields["terminate"] = result.terminate
                result = fast_construct(AgentToolResult, **fields)
                if after.is_error is not None:
                    is_error = after.is_error
        except Exception as error:
            result = _error_result(error_text(error))
            is_error = True
    return _Finalized(prepared.tool_call, result, is_error)


# ---------------------------------------------------------------------------------------------
# Accepting plain dicts wherever pi accepts object literals


def _as_tool_result(value: Any) -> AgentToolResult:
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, Mapping):
        return AgentToolResult.model_validate(dict(value))
    if value is None:
        raise TypeError("Tool returned no result")
    return AgentToolResult.model_validate(
        {"content": getattr(value, "content", []), "details": getattr(value, "details", None)}
        | ({"terminate": value.terminate} if getattr(value, "terminate", None) is not None else {})
    )


def _as_before_result(value: Any) -> BeforeToolCallResult | None:
    if value is None or isinstance(value, BeforeToolCallResult):
        return value
    return BeforeToolCallResult(block=bool(get_field(value, "block")), reason=get_field(value, "reason"))


def _as_after_result(value: Any) -> AfterToolCallResult | None:
    if value is None:
        return None
    if isinstance(value, AfterToolCallResult):
        content = value.content
        details, is_error, terminate = value.details, value.is_error, value.terminate
    else:
        content = get_field(value, "content")
        details, is_error, terminate = (
            get_field(value, "details"),
            get_field(value, "is_error"),
            get_field(value, "terminate"),
        )
    if content is not None:
        content = AgentToolResult.model_validate({"content": content}).content
    return AfterToolCallResult(content=content, details=details, is_error=is_error, terminate=terminate)


def _as_turn_update(value: Any) -> AgentLoopTurnUpdate | None:
    if value is None:
        return None
    if isinstance(value, AgentLoopTurnUpdate):
        update = value
    else:
        update = AgentLoopTurnUpdate(
            context=get_field(value, "context"),
            model=get_field(value, "model"),
            thinking_level=get_field(value, "thinking_level"),
        )
    if update.context is not None and not isinstance(update.context, AgentContext):
        update = dataclasses.replace(update, context=_as_context(update.context))
    if update.model is not None and not isinstance(update.model, Model):
        update = dataclasses.replace(update, model=Model.model_validate(update.model))
    return update


def _as_context(value: AgentContext | Mapping[str, Any] | Any) -> AgentContext:
    if isinstance(value, AgentContext):
        return value
    messages = get_field(value, "messages")
    return AgentContext(
        system_prompt=get_field(value, "system_prompt") or "",
        messages=messages if isinstance(messages, list) else list(messages or []),
        tools=get_field(value, "tools"),
    )


_CONFIG_FIELDS = {field.name for field in dataclasses.fields(AgentLoopConfig)}


def _as_config(value: AgentLoopConfig | Mapping[str, Any]) -> AgentLoopConfig:
    if isinstance(value, AgentLoopConfig):
        return value
    values: dict[str, Any] = {}
    for key, item in value.items():
        name = key if key in _CONFIG_FIELDS else camel_to_snake(key)
        if name in _CONFIG_FIELDS:
            values[name] = item
    model = values.get("model")
    if model is not None and not isinstance(model, Model):
        values["model"] = Model.model_validate(model)
    values.setdefault("convert_to_llm", default_convert_to_llm)
    return AgentLoopConfig(**values)


def default_convert_to_llm(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """Keep the messages an LLM understands (``user``, ``assistant``, ``toolResult``); drop the rest."""
    return [message for message in messages if role_of(message) in ("user", "assistant", "toolResult")]
