"""The stateful ``Agent``: owns a transcript, emits lifecycle events, runs tools, queues messages.

A port of pi-agent-core's ``agent.ts`` (0.79.10). One ``Agent`` is one conversation and runs at
most one *active run* at a time; each ``prompt()``/``continue_()`` drives one invocation of the
low-level loop and rebuilds the transcript from its events (the reducer), before any listener
sees them. The agent has no storage, no processes and no I/O of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..ai._interop import get_field
from ..ai._util import call_flex, error_text, maybe_await, positional_capacity
from ..ai.abort import AbortController, AbortSignal
from ..ai.registry import stream_simple
from ..ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingBudgets,
    Usage,
    UserMessage,
    now_ms,
    role_of,
)
from .loop import default_convert_to_llm, run_agent_loop, run_agent_loop_continue
from .types import (
    AfterToolCall,
    AgentContext,
    AgentEndEvent,
    AgentError,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    BeforeToolCall,
    ConvertToLlm,
    GetApiKey,
    MessageEndEvent,
    MessageStartEvent,
    QueueMode,
    StreamFn,
    ThinkingLevel,
    ToolExecutionMode,
    TransformContext,
    TurnEndEvent,
)

Listener = Callable[..., Any]
"""``listener(event, signal)`` or ``listener(event)``, sync or async."""


def default_model() -> Model:
    """The placeholder model of an agent created without one (pi's ``DEFAULT_MODEL``)."""
    return Model(id="unknown", name="unknown", api="unknown", provider="unknown", base_url="", input=[])


class AgentState:
    """The agent's public state (pi's ``AgentState``).

    ``system_prompt``, ``model`` and ``thinking_level`` are plain attributes. Assigning ``tools``
    or ``messages`` stores a copy of the list; reading them returns the live list (appending to
    it changes the state). The runtime fields are read-only: ``is_streaming`` stays true until the
    ``agent_end`` listeners finished; ``pending_tool_calls`` is replaced, never mutated.
    """

    def __init__(self, initial: Any = None) -> None:
        model = get_field(initial, "model")
        if model is not None and not isinstance(model, Model):
            model = Model.model_validate(model)
        self.system_prompt: str = get_field(initial, "system_prompt") or ""
        self.model: Model = model if model is not None else default_model()
        self.thinking_level: ThinkingLevel = get_field(initial, "thinking_level") or "off"
        self._tools: list[Any] = list(get_field(initial, "tools") or [])
        self._messages: list[AgentMessage] = list(get_field(initial, "messages") or [])
        self._is_streaming = False
        self._streaming_message: AgentMessage | None = None
        self._pending_tool_calls: frozenset[str] = frozenset()
        self._error_message: str | None = None

    @property
    def tools(self) -> list[Any]:
        return self._tools

    @tools.setter
    def tools(self, tools: Sequence[Any]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        return self._messages

    @messages.setter
    def messages(self, messages: Sequence[AgentMessage]) -> None:
        self._messages = list(messages)

    @property
    def is_streaming(self) -> bool:
        return self._is_streaming

    @property
    def streaming_message(self) -> AgentMessage | None:
        """The message between its ``message_start`` and ``message_end`` (any role)."""
        return self._streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        """Ids of the tool calls currently executing."""
        return self._pending_tool_calls

    @property
    def error_message(self) -> str | None:
        """The error of the latest failed or aborted assistant turn of the current or last run."""
        return self._error_message


class _PendingMessageQueue:
    def __init__(self, mode: QueueMode) -> None:
        self.mode: QueueMode = mode
        self.messages: list[AgentMessage] = []

    def drain(self) -> list[AgentMessage]:
        if self.mode == "all":
            drained, self.messages = self.messages, []
            return drained
        if not self.messages:
            return []
        return [self.messages.pop(0)]


@dataclass
class _ActiveRun:
    done: asyncio.Event
    controller: AbortController


class Agent:
    """Stateful wrapper around the agent loop.

    Owns the transcript (``state``), emits lifecycle events to subscribers, executes tools and
    exposes steering and follow-up queues. Every hook may be a plain or an async function; hook
    results may be the result objects of :mod:`py_agent.core.types` or dicts with their keys.
    """

    def __init__(
        self,
        *,
        initial_state: Any = None,
        convert_to_llm: ConvertToLlm | None = None,
        transform_context: TransformContext | None = None,
        stream_fn: StreamFn | None = None,
        get_api_key: GetApiKey | None = None,
        on_payload: Callable[..., Any] | None = None,
        on_response: Callable[..., Any] | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        prepare_next_turn: Callable[[AbortSignal | None], Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        thinking_budgets: ThinkingBudgets | Mapping[str, int] | None = None,
        transport: str = "auto",
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
    ) -> None:
        self._state = AgentState(initial_state)
        self._listeners: dict[Listener, int | None] = {}
        self._listener_snapshot: tuple[tuple[Listener, int | None], ...] | None = None
        self._steering = _PendingMessageQueue(steering_mode)
        self._follow_up = _PendingMessageQueue(follow_up_mode)
        self._active: _ActiveRun | None = None
        self.convert_to_llm: ConvertToLlm = convert_to_llm or default_convert_to_llm
        self.transform_context = transform_context
        self.stream_fn: StreamFn = stream_fn or stream_simple
        self.get_api_key = get_api_key
        self.on_payload = on_payload
        self.on_response = on_response
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.prepare_next_turn = prepare_next_turn
        self.session_id = session_id
        """Forwarded to providers for cache-aware backends."""
        self.thinking_budgets = thinking_budgets
        self.transport = transport
        self.max_retry_delay_ms = max_retry_delay_ms
        """Cap for provider-requested retry delays."""
        self.tool_execution: ToolExecutionMode = tool_execution

    # -- state, subscription, queues ----------------------------------------------------------

    @property
    def state(self) -> AgentState:
        return self._state

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener ``(event, signal)`` (sync or async; ``(event)`` alone also works).

        Listeners are awaited one after another in subscription order, and are part of the run:
        the agent is idle only after the ``agent_end`` listeners finished. Returns a function that
        removes the listener.
        """
        if listener not in self._listeners:
            self._listeners[listener] = positional_capacity(listener)
            self._listener_snapshot = None

        def unsubscribe() -> None:
            self._listeners.pop(listener, None)
            self._listener_snapshot = None

        return unsubscribe

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    def steer(self, message: AgentMessage) -> None:
        """Queue a message to inject after the current turn (and its tool batch) finishes."""
        self._steering.messages.append(message)

    def follow_up(self, message: AgentMessage) -> None:
        """Queue a message to run only once the agent would otherwise stop."""
        self._follow_up.messages.append(message)

    def clear_steering_queue(self) -> None:
        self._steering.messages = []

    def clear_follow_up_queue(self) -> None:
        self._follow_up.messages = []

    def clear_all_queues(self) -> None:
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def has_queued_messages(self) -> bool:
        return bool(self._steering.messages or self._follow_up.messages)

    @property
    def signal(self) -> AbortSignal | None:
        """The active run's abort signal; ``None`` when idle."""
        return self._active.controller.signal if self._active else None

    def abort(self) -> None:
        """Abort the active run, if any (cooperative: the stream and tools observe the signal)."""
        if self._active is not None:
            self._active.controller.abort()

    async def wait_for_idle(self) -> None:
        """Return once the current run and its ``agent_end`` listeners finished (at once when idle)."""
        if self._active is not None:
            await self._active.done.wait()

    def reset(self) -> None:
        """Clear the transcript, runtime state and both queues (not the model, tools or listeners)."""
        if self._active is not None:
            raise AgentError("Agent is already processing. Wait for completion before resetting.")
        self._state.messages = []
        self._state._is_streaming = False
        self._state._streaming_message = None
        self._state._pending_tool_calls = frozenset()
        self._state._error_message = None
        self.clear_all_queues()

    # -- runs -----------------------------------------------------------------------------------

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent | Mapping[str, Any]] | None = None,
    ) -> None:
        """Start a run with text (plus images), one message or a list of messages.

        Returns once the run and its listeners finished. Model errors and aborts do not raise:
        look at ``state.error_message`` and the last message.
        """
        if self._active is not None:
            raise AgentError(
                # pi's wording, kept verbatim.
                "Agent is already processing a prompt. Use steer() or followUp() to queue messages, "
                "or wait for completion."
            )
        messages = self._normalize_prompt(input, images)
        await self._run(messages, skip_initial_steering_poll=False)

    async def continue_(self) -> None:
        """Continue from the transcript; the last message must not be an assistant message,
        unless steering or follow-up messages are queued (they are then run as prompts)."""
        if self._active is not None:
            raise AgentError("Agent is already processing. Wait for completion before continuing.")
        messages = self._state.messages
        if not messages:
            raise AgentError("No messages to continue from")
        if role_of(messages[-1]) == "assistant":
            steering = self._steering.drain()
            if steering:
                await self._run(steering, skip_initial_steering_poll=True)
                return
            follow_ups = self._follow_up.drain()
            if follow_ups:
                await self._run(follow_ups, skip_initial_steering_poll=False)
                return
            raise AgentError("Cannot continue from message role: assistant")
        await self._run(None, skip_initial_steering_poll=False)

    def _normalize_prompt(self, input: Any, images: Sequence[Any] | None) -> list[AgentMessage]:
        if isinstance(input, list | tuple):
            return list(input)
        if not isinstance(input, str):
            return [input]
        content: list[Any] = [TextContent(text=input)]
        if images:
            content.extend(images)
        return [UserMessage(content=content, timestamp=now_ms())]

    async def _run(self, prompts: list[AgentMessage] | None, *, skip_initial_steering_poll: bool) -> None:
        # The prologue runs before the first await, so two concurrent calls can never both start.
        if self._active is not None:
            raise AgentError("Agent is already processing.")
        run = _ActiveRun(asyncio.Event(), AbortController())
        self._active = run
        self._state._is_streaming = True
        self._state._streaming_message = None
        self._state._error_message = None
        signal = run.controller.signal
        try:
            context = AgentContext(
                system_prompt=self._state.system_prompt,
                messages=list(self._state.messages),
                tools=list(self._state.tools),
            )
            config = self._loop_config(skip_initial_steering_poll)
            if prompts is None:
                await run_agent_loop_continue(context, config, self._emit, signal, self.stream_fn)
            else:
                await run_agent_loop(prompts, context, config, self._emit, signal, self.stream_fn)
        except Exception as error:
            await self._handle_run_failure(error, signal.aborted)
        finally:
            self._finish_run(run)

    def _loop_config(self, skip_initial_steering_poll: bool) -> AgentLoopConfig:
        skip = skip_initial_steering_poll

        async def get_steering_messages() -> list[AgentMessage]:
            nonlocal skip
            if skip:
                skip = False
                return []
            return self._steering.drain()

        async def get_follow_up_messages() -> list[AgentMessage]:
            return self._follow_up.drain()

        async def prepare_next_turn(_: Any) -> Any:
            # The agent-level hook sees only the run's signal; it is looked up at each call.
            hook = self.prepare_next_turn
            return await maybe_await(call_flex(hook, self.signal)) if hook is not None else None

        state = self._state
        return AgentLoopConfig(
            model=state.model,
            reasoning=None if state.thinking_level == "off" else state.thinking_level,
            session_id=self.session_id,
            on_payload=self.on_payload,
            on_response=self.on_response,
            transport=self.transport,
            thinking_budgets=self.thinking_budgets,
            max_retry_delay_ms=self.max_retry_delay_ms,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            prepare_next_turn=prepare_next_turn if self.prepare_next_turn is not None else None,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            get_steering_messages=get_steering_messages,
            get_follow_up_messages=get_follow_up_messages,
        )

    async def _handle_run_failure(self, error: Exception, aborted: bool) -> None:
        model = self._state.model
        failure = AssistantMessage(
            content=[TextContent(text="")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="aborted" if aborted else "error",
            error_message=error_text(error),
            timestamp=now_ms(),
        )
        await self._process_event(MessageStartEvent(message=failure))
        await self._process_event(MessageEndEvent(message=failure))
        await self._process_event(TurnEndEvent(message=failure, tool_results=[]))
        await self._process_event(AgentEndEvent(messages=[failure]))

    def _finish_run(self, run: _ActiveRun) -> None:
        self._state._is_streaming = False
        self._state._streaming_message = None
        self._state._pending_tool_calls = frozenset()
        run.done.set()
        self._active = None

    async def _process_event(self, event: AgentEvent) -> None:
        """Reduce the event into the state, then await every listener in order."""
        pending = self._emit(event)
        if pending is not None:
            await pending

    def _emit(self, event: AgentEvent) -> Awaitable[None] | None:
        """``_process_event`` without a coroutine while every listener is synchronous.

        Reduces the event and calls the listeners in order; at the first listener that returns an
        awaitable, returns a coroutine that awaits it and runs the rest. The loop's per-delta path
        calls this directly, so a delta with synchronous listeners creates no coroutine here.
        """
        state = self._state
        kind = event.type
        if kind == "message_update" or kind == "message_start":
            state._streaming_message = event.message  # type: ignore[union-attr]
        elif kind == "message_end":
            state._streaming_message = None
            state._messages.append(event.message)  # type: ignore[union-attr]
        elif kind == "tool_execution_start":
            state._pending_tool_calls = state._pending_tool_calls | {event.tool_call_id}  # type: ignore[union-attr]
        elif kind == "tool_execution_end":
            state._pending_tool_calls = state._pending_tool_calls - {event.tool_call_id}  # type: ignore[union-attr]
        elif kind == "turn_end":
            message = event.message  # type: ignore[union-attr]
            if role_of(message) == "assistant":
                error_message = get_field(message, "error_message")
                if error_message:
                    state._error_message = error_message
        elif kind == "agent_end":
            state._streaming_message = None

        active = self._active
        if active is None:
            raise AgentError("Agent listener invoked outside active run")
        listeners = self._listeners
        # The listeners as of the start of this dispatch (cached until the next (un)subscribe).
        snapshot = self._listener_snapshot
        if snapshot is None:
            snapshot = self._listener_snapshot = tuple(listeners.items())
        for entry in snapshot:
            listener, capacity = entry
            if listener not in listeners:
                continue  # removed by an earlier listener during this dispatch
            result = listener(event) if capacity == 1 else listener(event, active.controller.signal)
            if result is not None and hasattr(result, "__await__"):
                # (No index kept in the loop: each listener is once in the snapshot.)
                start = snapshot.index(entry) + 1
                return self._finish_dispatch(result, event, active.controller.signal, snapshot, start)
        return None

    async def _finish_dispatch(
        self,
        pending: Awaitable[Any],
        event: AgentEvent,
        signal: AbortSignal,
        snapshot: tuple[tuple[Listener, int | None], ...],
        start: int,
    ) -> None:
        await pending
        listeners = self._listeners
        for listener, capacity in snapshot[start:]:
            if listener not in listeners:
                continue  # removed by an earlier listener during this dispatch
            result = listener(event) if capacity == 1 else listener(event, signal)
            if result is not None and hasattr(result, "__await__"):
                await result
