"""Lifecycle, listeners, failures (test_s19 to test_s29) and docs/port-decisions.md #2, #5 and #7."""

import asyncio

import pytest
from helpers import (
    MODEL,
    HangingStream,
    Recorder,
    ScriptedStream,
    asst,
    new_agent,
    roles,
    seq,
    settle,
    user,
)

from py_agent import Agent
from py_agent.ai.event_stream import AssistantMessageEventStream
from py_agent.ai.events import StartEvent, TextStartEvent
from py_agent.ai.types import TextContent, Usage

BUSY_PROMPT = (
    "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
)
BUSY_CONTINUE = "Agent is already processing. Wait for completion before continuing."


async def test_s19_prompt_waits_for_async_agent_end_listeners():
    gate = asyncio.Event()
    finished = []
    agent, _, _ = new_agent(asst("ok"))

    async def slow_end(event, signal):
        if event.type == "agent_end":
            await gate.wait()
            finished.append(True)

    agent.subscribe(slow_end)
    task = asyncio.create_task(agent.prompt("hello"))
    await asyncio.sleep(0.01)
    assert not task.done()
    assert finished == []
    assert agent.state.is_streaming is True
    assert agent.signal is not None
    gate.set()
    await task
    assert finished == [True]
    assert agent.state.is_streaming is False
    assert agent.signal is None


async def test_s20_wait_for_idle_waits_for_listeners():
    gate = asyncio.Event()
    agent, _, _ = new_agent(asst("ok"))

    async def block(event, signal):
        if event.type == "message_end" and event.message.role == "assistant":
            await gate.wait()

    agent.subscribe(block)
    prompt_task = asyncio.create_task(agent.prompt("hello"))
    await settle()
    idle_task = asyncio.create_task(agent.wait_for_idle())
    await asyncio.sleep(0.01)
    assert not idle_task.done()
    assert not prompt_task.done()
    assert agent.state.is_streaming is True
    gate.set()
    await asyncio.wait_for(asyncio.gather(prompt_task, idle_task), 1)
    assert agent.state.is_streaming is False


async def test_s20_wait_for_idle_completes_after_agent_end_listeners():
    order = []
    gate = asyncio.Event()
    agent, _, _ = new_agent(asst("ok"))

    async def end_listener(event, signal):
        if event.type == "agent_end":
            await gate.wait()
            order.append("listener")

    agent.subscribe(end_listener)
    prompt_task = asyncio.create_task(agent.prompt("x"))
    await settle()

    async def idle():
        await agent.wait_for_idle()
        order.append("idle")

    idle_task = asyncio.create_task(idle())
    await settle()
    gate.set()
    await asyncio.gather(prompt_task, idle_task)
    assert order == ["listener", "idle"]


async def test_s21_listeners_sequential_in_registration_order():
    gate = asyncio.Event()
    log = []
    stream = ScriptedStream(asst("ok"))
    agent = Agent(stream_fn=stream, initial_state={"model": MODEL})

    async def l1(event, signal):
        if event.type == "agent_start":
            await gate.wait()
        log.append(f"L1:{event.type}")

    def l2(event, signal):
        log.append(f"L2:{event.type}")

    agent.subscribe(l1)
    agent.subscribe(l2)
    task = asyncio.create_task(agent.prompt("hi"))
    await asyncio.sleep(0.01)
    assert log == []
    gate.set()
    await task
    expected_types = seq("AS TS MS ME MS ME TE AE")
    expected = []
    for kind in expected_types:
        expected += [f"L1:{kind}", f"L2:{kind}"]
    assert log == expected


async def test_s22_listener_receives_run_signal():
    hanging = HangingStream()
    agent, _, rec = new_agent(stream_fn=hanging)
    stored = []

    def keep(event, signal):
        if event.type == "agent_start":
            stored.append(signal)

    agent.subscribe(keep)
    task = asyncio.create_task(agent.prompt("hi"))
    await hanging.started.wait()
    await settle()
    assert stored[0] is agent.signal
    assert stored[0].aborted is False
    agent.abort()
    await task
    assert stored[0].aborted is True
    assert agent.signal is None
    assert all(s is stored[0] for s in rec.signals)
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert agent.state.messages[-1].error_message == "Request was aborted"


async def test_s23_concurrent_prompt_and_continue_rejected():
    hanging = HangingStream()
    agent, _, rec = new_agent(stream_fn=hanging)
    task = asyncio.create_task(agent.prompt("first"))
    await hanging.started.wait()
    await settle()
    before = list(rec.types)
    with pytest.raises(Exception) as info:
        await agent.prompt("second")
    assert str(info.value) == BUSY_PROMPT
    with pytest.raises(Exception) as info:
        await agent.continue_()
    assert str(info.value) == BUSY_CONTINUE
    assert roles(agent.state.messages) == ["user"]
    assert rec.types == before
    assert agent.state.is_streaming is True
    agent.abort()
    await task
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert hanging.call_count == 1


async def test_decision2_prologue_is_synchronous():
    """Two prompts scheduled back to back: the first installs its run before any await."""
    agent, stream, rec = new_agent(asst("one"), asst("two"))
    first = asyncio.create_task(agent.prompt("a"))
    second = asyncio.create_task(agent.prompt("b"))
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert results[0] is None
    assert isinstance(results[1], Exception)
    assert str(results[1]) == BUSY_PROMPT
    assert stream.call_count == 1
    assert rec.types == seq("AS TS MS ME MS ME TE AE")


async def test_decision2_is_streaming_true_after_first_step():
    agent, _, _ = new_agent(asst("ok"))
    task = asyncio.create_task(agent.prompt("a"))
    await asyncio.sleep(0)
    assert agent.state.is_streaming is True
    assert agent.signal is not None
    await task
    assert agent.state.is_streaming is False


def assert_failure(message, text, stop_reason="error"):
    assert message.role == "assistant"
    assert message.content == [TextContent(text="")]
    assert message.stop_reason == stop_reason
    assert message.error_message == text
    assert message.usage == Usage()
    assert (message.api, message.provider, message.model) == ("openai-responses", "openai", "mock")
    assert isinstance(message.timestamp, int)


@pytest.mark.parametrize("variant", ["sync", "async"])
async def test_s24_stream_function_raises(variant):
    def raising(model, context, options):
        raise RuntimeError("provider exploded")

    async def raising_async(model, context, options):
        await asyncio.sleep(0)
        raise RuntimeError("provider exploded")

    agent, _, rec = new_agent(stream_fn=raising if variant == "sync" else raising_async)
    await agent.prompt("hello")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.trace()[4:6] == ["MS(assistant)", "ME(assistant)"]
    last = agent.state.messages[-1]
    assert_failure(last, "provider exploded")
    assert agent.state.error_message == "provider exploded"
    agent_end = rec.first("AE")
    assert len(agent_end.messages) == 1 and agent_end.messages[0] is last
    turn_end = rec.first("TE")
    assert turn_end.tool_results == [] and turn_end.message is last
    assert rec.of("MS")[1].message is last and rec.of("ME")[1].message is last
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert agent.state.is_streaming is False


@pytest.mark.parametrize("hook", ["get_api_key", "transform_context", "convert_to_llm"])
async def test_s25_other_raising_callbacks_on_the_llm_path(hook):
    def boom(*args):
        raise RuntimeError("X")

    agent, stream, rec = new_agent(asst("never"), **{hook: boom})
    await agent.prompt("hello")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert_failure(agent.state.messages[-1], "X")
    assert agent.state.error_message == "X"
    assert stream.call_count == 0


async def test_s25_failure_uses_model_of_state_at_failure_time():
    """handleRunFailure reads state.model when it runs (not the run's snapshot)."""
    other = MODEL.model_copy(update={"id": "other-model", "provider": "other", "api": "other-api"})
    agent = None

    def boom(messages, signal):
        agent.state.model = other
        raise RuntimeError("X")

    agent, _, _ = new_agent(transform_context=boom)
    await agent.prompt("hello")
    last = agent.state.messages[-1]
    assert (last.api, last.provider, last.model) == ("other-api", "other", "other-model")


async def test_s26_listener_raises_during_normal_events():
    agent, _stream, rec = new_agent(asst("ok"))
    raised = []

    def bad(event, signal):
        if event.type == "message_end" and event.message.role == "assistant" and not raised:
            raised.append(True)
            raise RuntimeError("listener boom")

    late = Recorder()
    agent.subscribe(bad)
    agent.subscribe(late)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME MS ME TE AE")
    failure = agent.state.messages[-1]
    assert_failure(failure, "listener boom")
    assert rec.of("MS")[2].message is failure
    assert late.types == seq("AS TS MS ME MS MS ME TE AE")
    assert late.of("ME")[-1].message is failure
    assert roles(agent.state.messages) == ["user", "assistant", "assistant"]
    assert agent.state.messages[1].stop_reason == "stop"
    assert agent.state.error_message == "listener boom"
    assert agent.state.is_streaming is False


async def test_s27_listener_raises_again_while_failure_is_delivered():
    agent, _, rec = new_agent(asst("ok"))

    def bad(event, signal):
        if event.type == "agent_end":
            raise RuntimeError("end boom")

    agent.subscribe(bad)
    with pytest.raises(RuntimeError) as info:
        await agent.prompt("hi")
    assert str(info.value) == "end boom"
    assert rec.types == seq("AS TS MS ME MS ME TE AE MS ME TE AE")
    assert agent.state.is_streaming is False
    assert agent.signal is None
    await asyncio.wait_for(agent.wait_for_idle(), 1)
    assert roles(agent.state.messages) == ["user", "assistant", "assistant"]
    assert agent.state.messages[-1].error_message == "end boom"


async def test_s28_thrown_error_after_abort_is_aborted_failure():
    agent = None

    def stream_fn(model, context, options):
        agent.abort()
        raise RuntimeError("boom")

    agent, _, rec = new_agent(stream_fn=stream_fn)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert_failure(agent.state.messages[-1], "boom", stop_reason="aborted")
    assert agent.state.error_message == "boom"


async def test_s29_error_message_lifecycle():
    agent, stream, rec = new_agent(asst("", stop_reason="error", error_message="quota"))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.error_message == "quota"
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert agent.state.messages[-1].stop_reason == "error"

    seen = []

    def check(event, signal):
        if event.type == "agent_start":
            seen.append(agent.state.error_message)

    agent.subscribe(check)
    stream.add(asst("ok"))
    await agent.prompt("again")
    assert seen == [None]
    assert agent.state.error_message is None


async def test_s29_error_message_persists_after_run_until_next_run():
    agent, _stream, _ = new_agent(asst("", stop_reason="aborted", error_message="stopped"))
    await agent.prompt("hi")
    assert agent.state.error_message == "stopped"
    assert agent.state.is_streaming is False
    assert agent.state.error_message == "stopped"


async def test_decision5_stream_ends_without_terminal_event_or_result():
    """A stream that ends without done/error and without a result must not hang (docs/port-decisions.md #5)."""

    def stream_fn(model, context, options):
        stream = AssistantMessageEventStream()
        partial = asst("")
        partial.content = []
        stream.push(StartEvent(partial=partial))
        stream.push(TextStartEvent(content_index=0, partial=partial))
        stream.end()
        return stream

    agent, _, rec = new_agent(stream_fn=stream_fn)
    await asyncio.wait_for(agent.prompt("hi"), 2)
    assert rec.types == seq("AS TS MS ME MS MU MS ME TE AE")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    assert isinstance(last.error_message, str) and last.error_message
    assert agent.state.error_message == last.error_message
    # the partial never reached message_end: it is not in the transcript
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert rec.first("AE").messages == [last]


async def test_decision5_stream_ends_with_result_but_no_terminal_event():
    """Iteration ends without done/error but the producer resolved a result: the loop uses it."""
    final = asst("from end()")

    def stream_fn(model, context, options):
        stream = AssistantMessageEventStream()
        stream.end(final)
        return stream

    agent, _, rec = new_agent(stream_fn=stream_fn)
    await asyncio.wait_for(agent.prompt("hi"), 2)
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.messages[-1] is final
    assert rec.of("MS")[1].message is not final
    assert rec.of("MS")[1].message == final


@pytest.mark.parametrize("where", ["stream_fn", "transform_context", "listener"])
async def test_decision7_empty_exception_text_becomes_class_name(where):
    class QuietError(Exception):
        pass

    def boom(*args):
        raise QuietError()

    options = {"stream_fn": boom} if where == "stream_fn" else {}
    if where == "transform_context":
        options["transform_context"] = boom
    agent, _, _rec = new_agent(asst("ok"), **options)
    if where == "listener":
        fired = []

        def listener(event, signal):
            if event.type == "turn_end" and not fired:
                fired.append(1)
                raise QuietError()

        agent.subscribe(listener)
    await agent.prompt("hi")
    last = agent.state.messages[-1]
    assert last.stop_reason == "error"
    assert last.error_message == "QuietError"
    assert agent.state.error_message == "QuietError"


async def test_cancelled_prompt_task_still_finishes_run():
    hanging = HangingStream()
    agent, _, rec = new_agent(stream_fn=hanging)
    task = asyncio.create_task(agent.prompt("hi"))
    await hanging.started.wait()
    await settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.state.is_streaming is False
    assert agent.signal is None
    assert agent.state.streaming_message is None
    assert "agent_end" not in rec.types  # no failure message is synthesized
    assert roles(agent.state.messages) == ["user"]
    await asyncio.wait_for(agent.wait_for_idle(), 1)
    hanging.release()
    await settle()


async def test_new_signal_per_run():
    agent, _, rec = new_agent(asst("one"), asst("two"))
    await agent.prompt("a")
    await agent.prompt("b")
    first_run = rec.signals[0]
    second_run = rec.signals[-1]
    assert first_run is not second_run
    assert all(s is first_run for s in rec.signals[:8])
    assert all(s is second_run for s in rec.signals[8:])
    assert agent.signal is None


async def test_async_and_sync_listeners_mixed_with_user_message_prompt():
    agent, _, rec = new_agent(asst("ok"))
    log = []

    async def async_listener(event, signal):
        await asyncio.sleep(0)
        log.append(event.type)

    agent.subscribe(async_listener)
    await agent.prompt(user("typed"))
    assert log == rec.types == seq("AS TS MS ME MS ME TE AE")


async def test_prepare_next_turn_raising_fails_the_run():
    from helpers import asst_tools, call, echo_tool

    def prepare(signal):
        raise RuntimeError("prep failed")

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("never"), tools=[echo_tool()], prepare_next_turn=prepare
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE MS ME TE AE")
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]
    assert_failure(agent.state.messages[-1], "prep failed")
    assert stream.call_count == 1


async def test_listener_raising_on_tool_execution_end_fails_the_run():
    from helpers import asst_tools, call, echo_tool

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("never"), tools=[echo_tool()], tool_execution="sequential"
    )

    def bad(event, signal):
        if event.type == "tool_execution_end":
            raise RuntimeError("end listener failed")

    agent.subscribe(bad)
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE AE")
    assert roles(agent.state.messages) == ["user", "assistant", "assistant"]
    assert agent.state.error_message == "end listener failed"
    assert len(agent.state.pending_tool_calls) == 0
    assert stream.call_count == 1


async def test_parallel_listener_failure_fails_the_run_at_once():
    """A listener raising inside a parallel job fails the run at once (pi's Promise.all rejects);
    the sibling job is not cancelled, keeps running, and its late events reach no listener.
    (No port decision covers this, so pi 0.79.10 decides: docs/port-decisions.md.)"""
    from helpers import asst_tools, call, simple_tool

    from py_agent.ai.types import TextContent
    from py_agent.core.types import AgentToolResult

    slow_done = asyncio.Event()

    async def quick(tool_call_id, params, signal, on_update):
        return AgentToolResult(content=[TextContent(text="quick")], details={})

    async def slow(tool_call_id, params, signal, on_update):
        await asyncio.sleep(0.01)
        slow_done.set()
        return AgentToolResult(content=[TextContent(text="slow")], details={})

    agent, stream, rec = new_agent(
        asst_tools(call("q1", "quick"), call("s1", "slow")),
        asst("never"),
        tools=[simple_tool("quick", quick), simple_tool("slow", slow)],
    )

    def bad(event, signal):
        if event.type == "tool_execution_end" and event.tool_call_id == "q1":
            raise RuntimeError("job listener failed")

    agent.subscribe(bad)
    await agent.prompt("go")
    expected = seq("AS TS MS ME MS ME XS XS XE MS ME TE AE")
    assert rec.types == expected
    assert rec.trace()[6:9] == ["XS(q1)", "XS(s1)", "XE(q1)"]
    assert agent.state.error_message == "job listener failed"
    assert roles(agent.state.messages) == ["user", "assistant", "assistant"]
    assert agent.state.is_streaming is False
    await asyncio.wait_for(slow_done.wait(), 1)  # the sibling was not cancelled
    await settle()
    assert rec.types == expected  # its tool_execution_end reached no listener
    assert len(agent.state.pending_tool_calls) == 0
    assert stream.call_count == 1


async def test_prompt_rejected_while_agent_end_listeners_run():
    gate = asyncio.Event()
    agent, stream, _ = new_agent(asst("one"), asst("two"))

    async def slow_end(event, signal):
        if event.type == "agent_end":
            await gate.wait()

    agent.subscribe(slow_end)
    task = asyncio.create_task(agent.prompt("a"))
    await asyncio.sleep(0.01)
    assert agent.state.is_streaming is True
    with pytest.raises(Exception) as info:
        await agent.prompt("b")
    assert str(info.value) == BUSY_PROMPT
    gate.set()
    await task
    await agent.prompt("c")
    assert stream.call_count == 2


async def test_listener_unsubscribing_itself_stops_receiving():
    agent, _, rec = new_agent(asst("ok"))
    got = []
    unsubscribe = None

    def once(event, signal):
        got.append(event.type)
        if event.type == "message_start":
            unsubscribe()

    unsubscribe = agent.subscribe(once)
    await agent.prompt("hi")
    assert got == seq("AS TS MS")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")


async def test_replacing_state_messages_mid_run():
    """The reducer appends to whatever list state.messages is; the LLM sees the run's own copy."""
    agent, stream, _rec = new_agent(asst("reply"), initial_state={"messages": [user("old")]})
    replaced = []

    def listener(event, signal):
        if event.type == "message_end" and event.message.role == "user" and not replaced:
            replaced.append(True)
            agent.state.messages = []

    agent.subscribe(listener)
    await agent.prompt("new")
    assert roles(agent.state.messages) == ["assistant"]
    assert [m.content for m in stream.calls[0].messages] == ["old", [TextContent(text="new")]]
