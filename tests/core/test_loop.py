"""The low-level loop (test_s74 to test_s86) and the agent-level prepareNextTurn."""

import asyncio

import pytest
from helpers import (
    M2,
    MODEL,
    Recorder,
    ScriptedStream,
    asst,
    asst_tools,
    call,
    echo_tool,
    new_agent,
    roles,
    seq,
    user,
)

from py_agent.ai.abort import AbortController, AbortSignal
from py_agent.ai.event_stream import AssistantMessageEventStream
from py_agent.ai.events import DoneEvent, StartEvent, TextDeltaEvent, TextEndEvent, TextStartEvent
from py_agent.core import (
    AgentContext,
    AgentLoopConfig,
    AgentLoopTurnUpdate,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)


def identity(messages):
    return messages


def config(**kwargs):
    return AgentLoopConfig(
        model=kwargs.pop("model", MODEL), convert_to_llm=kwargs.pop("convert_to_llm", identity), **kwargs
    )


async def collect(stream):
    return [event async for event in stream]


async def test_s74_agent_loop_basics():
    hello = user("Hello")
    context = AgentContext(system_prompt="You are helpful.", messages=[], tools=[])
    scripted = ScriptedStream(asst("Hi"))
    stream = agent_loop([hello], context, config(), None, scripted)
    events = await collect(stream)
    assert [e.type for e in events] == seq("AS TS MS ME MS ME TE AE")
    result = await stream.result()
    assert roles(result) == ["user", "assistant"]
    assert result[0] is hello
    assert result[1].content[0].text == "Hi"
    assert context.messages == []
    assert scripted.calls[0].system_prompt == "You are helpful."
    assert scripted.calls[0].messages == [hello]
    assert events[-1].messages == result


async def test_s74_agent_loop_accepts_dict_context_and_config():
    scripted = ScriptedStream(asst("Hi"))
    stream = agent_loop(
        [user("Hello")],
        {"systemPrompt": "sys", "messages": [], "tools": []},
        {"model": MODEL, "convertToLlm": identity},
        None,
        scripted,
    )
    events = await collect(stream)
    assert [e.type for e in events] == seq("AS TS MS ME MS ME TE AE")
    assert scripted.calls[0].system_prompt == "sys"


async def test_s74_run_agent_loop_returns_new_messages_and_uses_fresh_list():
    prior = [user("earlier"), asst("answer")]
    context = AgentContext(system_prompt="", messages=prior, tools=[])
    events = []
    scripted = ScriptedStream(asst("Hi"))
    prompt = user("Hello")
    result = await run_agent_loop([prompt], context, config(), events.append, None, scripted)
    assert roles(result) == ["user", "assistant"]
    assert result[0] is prompt
    assert [e.type for e in events] == seq("AS TS MS ME MS ME TE AE")
    assert len(prior) == 2  # the caller's list is not appended to
    assert scripted.calls[0].messages == [*prior, prompt]


async def test_s74_run_agent_loop_with_async_emit():
    events = []

    async def emit(event):
        await asyncio.sleep(0)
        events.append(event.type)

    result = await run_agent_loop([user("Hello")], AgentContext(), config(), emit, None, ScriptedStream(asst("Hi")))
    assert events == seq("AS TS MS ME MS ME TE AE")
    assert len(result) == 2


def exploding_stream(model, context, options):
    raise AssertionError("the stream function must not be called")


async def test_s75_agent_loop_continue_validation():
    with pytest.raises(Exception) as info:
        agent_loop_continue(AgentContext(system_prompt="", messages=[], tools=[]), config(), None, exploding_stream)
    assert str(info.value) == "Cannot continue: no messages in context"
    with pytest.raises(Exception) as info:
        agent_loop_continue(AgentContext(messages=[user("a"), asst("b")]), config(), None, exploding_stream)
    assert str(info.value) == "Cannot continue from message role: assistant"


async def test_s75_run_agent_loop_continue_validation_emits_nothing():
    events = []
    with pytest.raises(Exception) as info:
        await run_agent_loop_continue(AgentContext(), config(), events.append, None, exploding_stream)
    assert str(info.value) == "Cannot continue: no messages in context"
    with pytest.raises(Exception) as info:
        await run_agent_loop_continue(
            AgentContext(messages=[asst("b")]), config(), events.append, None, exploding_stream
        )
    assert str(info.value) == "Cannot continue from message role: assistant"
    assert events == []


async def test_s76_agent_loop_continue():
    hello = user("Hello")
    context = AgentContext(system_prompt="", messages=[hello], tools=[])
    stream = agent_loop_continue(context, config(), None, ScriptedStream(asst("Hi")))
    events = await collect(stream)
    assert [e.type for e in events] == seq("AS TS MS ME TE AE")
    assert [e.type for e in events].count("message_end") == 1
    assert events[2].message.role == "assistant"
    result = await stream.result()
    assert len(result) == 1 and result[0].role == "assistant"
    # faithful to pi: the loop appended to the caller's list
    assert context.messages[-1] is result[0]
    assert roles(context.messages) == ["user", "assistant"]


async def test_s76_continue_with_custom_last_message():
    custom = {"role": "custom", "text": "x", "timestamp": 1}
    scripted = ScriptedStream(asst("Hi"))
    events = []
    result = await run_agent_loop_continue(
        AgentContext(messages=[custom]),
        config(convert_to_llm=lambda messages: [user(m["text"]) if isinstance(m, dict) else m for m in messages]),
        events.append,
        None,
        scripted,
    )
    assert [e.type for e in events] == seq("AS TS MS ME TE AE")
    assert roles(result) == ["assistant"]
    assert scripted.calls[0].messages[0].content == "x"


@pytest.mark.parametrize("as_dict", [True, False])
async def test_s77_prepare_next_turn_replaces_the_context(as_dict):
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    fired = []

    def prepare(ctx):
        if fired:
            return None
        fired.append(ctx)
        if as_dict:
            return {
                "context": {
                    "systemPrompt": "second prompt",
                    "messages": list(ctx.context.messages),
                    "tools": ctx.context.tools,
                }
            }
        return AgentLoopTurnUpdate(
            context=AgentContext(
                system_prompt="second prompt", messages=list(ctx.context.messages), tools=ctx.context.tools
            )
        )

    events = []
    result = await run_agent_loop(
        [user("go")],
        AgentContext(system_prompt="first prompt", messages=[], tools=[echo]),
        config(prepare_next_turn=prepare),
        events.append,
        None,
        scripted,
    )
    assert scripted.call_count == 2
    assert scripted.calls[0].system_prompt == "first prompt"
    assert scripted.calls[1].system_prompt == "second prompt"
    assert roles(scripted.calls[1].messages) == ["user", "assistant", "toolResult"]
    assert roles(result) == ["user", "assistant", "toolResult", "assistant"]


async def test_s77_replaced_context_receives_later_appends():
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    replacement = AgentContext(system_prompt="new", messages=[user("only this")], tools=[echo])
    fired = []

    def prepare(ctx):
        if not fired:
            fired.append(1)
            return {"context": replacement}
        return None

    await run_agent_loop(
        [user("go")], AgentContext(tools=[echo]), config(prepare_next_turn=prepare), lambda e: None, None, scripted
    )
    assert scripted.calls[1].messages == [replacement.messages[0]]
    assert roles(replacement.messages) == ["user", "assistant"]


@pytest.mark.parametrize(
    "update, model, reasoning",
    [
        ({"model": M2, "thinking_level": "high"}, M2, "high"),
        ({"model": M2, "thinkingLevel": "high"}, M2, "high"),
        (AgentLoopTurnUpdate(model=M2, thinking_level="high"), M2, "high"),
        ({"thinking_level": "off"}, MODEL, None),
        ({}, MODEL, "low"),
        (None, MODEL, "low"),
    ],
)
async def test_s78_prepare_next_turn_replaces_model_and_thinking(update, model, reasoning):
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    providers = []
    fired = []

    def prepare(ctx):
        if fired:
            return None
        fired.append(1)
        return update

    await run_agent_loop(
        [user("go")],
        AgentContext(tools=[echo]),
        config(
            prepare_next_turn=prepare,
            reasoning="low",
            get_api_key=lambda p: providers.append(p) or "k",
            session_id="sess",
        ),
        lambda e: None,
        None,
        scripted,
    )
    assert scripted.calls[0].model is MODEL
    assert scripted.calls[0].options.reasoning == "low"
    assert scripted.calls[1].model == model
    assert scripted.calls[1].options.reasoning == reasoning
    assert providers == ["openai", model.provider]
    assert scripted.calls[1].options.session_id == "sess"  # other config fields kept


async def test_s79_prepare_next_turn_call_points():
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    seen = []

    def prepare(ctx):
        seen.append((ctx.message, list(ctx.tool_results), roles(ctx.context.messages), roles(ctx.new_messages)))

    events = Recorder()
    await run_agent_loop(
        [user("go")], AgentContext(tools=[echo]), config(prepare_next_turn=prepare), events, None, scripted
    )
    assert len(seen) == 2
    first, second = seen
    assistant_1 = events.of("TE")[0].message
    assert first[0] is assistant_1
    assert first[1] == events.of("TE")[0].tool_results and len(first[1]) == 1
    assert first[2] == ["user", "assistant", "toolResult"]
    assert first[3] == ["user", "assistant", "toolResult"]
    assert second[0] is events.of("TE")[1].message
    assert second[1] == []


async def test_s79_prepare_next_turn_not_called_on_error_turn():
    seen = []
    should_stop = []
    scripted = ScriptedStream(asst([call("t1", "echo", {"value": "a"})], stop_reason="error", error_message="x"))
    events = Recorder()
    steering_polls = []
    follow_polls = []
    await run_agent_loop(
        [user("go")],
        AgentContext(tools=[echo_tool()]),
        config(
            prepare_next_turn=lambda ctx: seen.append(1),
            should_stop_after_turn=lambda ctx: should_stop.append(1),
            get_steering_messages=lambda: steering_polls.append(1) or [],
            get_follow_up_messages=lambda: follow_polls.append(1) or [],
        ),
        events,
        None,
        scripted,
    )
    assert events.types == seq("AS TS MS ME MS ME TE AE")
    assert seen == [] and should_stop == []
    assert len(steering_polls) == 1 and follow_polls == []


async def test_s80_should_stop_after_turn():
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("tool-1", "echo", {"value": "x"})), asst("never"))
    polls = {"steering": 0, "follow": 0}
    recorded = {}

    async def get_steering():
        polls["steering"] += 1
        return []

    async def get_follow():
        polls["follow"] += 1
        return [user("follow-up")]

    def should_stop(ctx):
        recorded["ids"] = [r.tool_call_id for r in ctx.tool_results]
        recorded["roles"] = roles(ctx.context.messages)
        recorded["new"] = roles(ctx.new_messages)
        return True

    events = Recorder()
    result = await run_agent_loop(
        [user("go")],
        AgentContext(tools=[echo]),
        config(
            get_steering_messages=get_steering, get_follow_up_messages=get_follow, should_stop_after_turn=should_stop
        ),
        events,
        None,
        scripted,
    )
    assert events.types == seq("AS TS MS ME MS ME XS XE MS ME TE AE")
    assert scripted.call_count == 1
    assert polls == {"steering": 1, "follow": 0}
    assert recorded["ids"] == ["tool-1"]
    assert recorded["roles"] == ["user", "assistant", "toolResult"]
    assert recorded["new"] == ["user", "assistant", "toolResult"]
    assert roles(result) == ["user", "assistant", "toolResult"]
    assert events.first("AE").messages == result


async def test_s80_should_stop_after_turn_async_false_continues():
    async def should_stop(ctx):
        return False

    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    events = Recorder()
    await run_agent_loop(
        [user("go")],
        AgentContext(tools=[echo_tool()]),
        config(should_stop_after_turn=should_stop),
        events,
        None,
        scripted,
    )
    assert scripted.call_count == 2
    assert events.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")


async def test_s81_should_stop_after_turn_sees_the_replaced_context():
    seen = []
    await run_agent_loop(
        [user("go")],
        AgentContext(system_prompt="s", tools=[]),
        config(
            prepare_next_turn=lambda ctx: {"context": {"system_prompt": "s2", "messages": [], "tools": []}},
            should_stop_after_turn=lambda ctx: seen.append((list(ctx.context.messages), ctx.context.system_prompt)),
        ),
        lambda e: None,
        None,
        ScriptedStream(asst("done")),
    )
    assert seen == [([], "s2")]


@pytest.mark.parametrize("with_tool, steering, follow", [(False, 2, 1), (True, 3, 1)])
async def test_s82_poll_counts(with_tool, steering, follow):
    polls = {"steering": 0, "follow": 0}

    def get_steering():
        polls["steering"] += 1
        return []

    def get_follow():
        polls["follow"] += 1
        return None

    responses = [asst_tools(call("t1", "echo", {"value": "x"})), asst("done")] if with_tool else [asst("done")]
    await run_agent_loop(
        [user("go")],
        AgentContext(tools=[echo_tool()]),
        config(get_steering_messages=get_steering, get_follow_up_messages=get_follow),
        lambda e: None,
        None,
        ScriptedStream(*responses),
    )
    assert polls == {"steering": steering, "follow": follow}


async def test_s82_poll_counts_with_delivered_follow_up():
    polls = {"steering": 0, "follow": 0}
    follow_ups = [[user("f")], []]

    def get_follow():
        polls["follow"] += 1
        return follow_ups.pop(0)

    def get_steering():
        polls["steering"] += 1
        return []

    events = Recorder()
    await run_agent_loop(
        [user("go")],
        AgentContext(),
        config(get_steering_messages=get_steering, get_follow_up_messages=get_follow),
        events,
        None,
        ScriptedStream(asst("one"), asst("two")),
    )
    assert polls == {"steering": 3, "follow": 2}
    assert events.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE AE")


async def test_s83_done_only_stream_message_identity():
    agent, _, rec = new_agent(asst("Hi"))
    await agent.prompt("hello")
    start, end = rec.of("MS")[1], rec.of("ME")[1]
    assert start.message == end.message
    assert start.message is not end.message
    assert end.message is agent.state.messages[-1]


async def test_s83_partial_events_before_start_are_ignored():
    final = asst("final")

    def stream_fn(model, context, options):
        stream = AssistantMessageEventStream()
        partial = asst("")
        stream.push(TextDeltaEvent(content_index=0, delta="x", partial=partial))
        stream.push(TextDeltaEvent(content_index=0, delta="y", partial=partial))
        stream.push(DoneEvent(reason="stop", message=final))
        return stream

    agent, _, rec = new_agent(stream_fn=stream_fn)
    await agent.prompt("hello")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.messages[-1] is final


async def test_s83_async_stream_function_returning_a_stream():
    scripted = ScriptedStream(asst("Hi"))

    async def stream_fn(model, context, options):
        await asyncio.sleep(0)
        return scripted(model, context, options)

    agent, _, rec = new_agent(stream_fn=stream_fn)
    await agent.prompt("hello")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.messages[-1].content[0].text == "Hi"


async def test_s83_error_event_whose_message_says_stop_is_a_successful_turn():
    """The loop reads the final message's stop_reason, never the event's reason."""
    odd = asst("fine")

    def stream_fn(model, context, options):
        from py_agent.ai.events import ErrorEvent

        stream = AssistantMessageEventStream()
        stream.push(ErrorEvent.model_construct(type="error", reason="error", error=odd))
        return stream

    agent, _, rec = new_agent(stream_fn=stream_fn)
    agent.follow_up(user("f"))
    await agent.prompt("x")
    # the turn counted as successful: the follow-up queue was drained (and the next call failed)
    assert agent.has_queued_messages() is False
    assert rec.types[:8] == seq("AS TS MS ME MS ME TE TS")


async def test_s84_agent_level_prepare_next_turn_receives_only_the_signal():
    seen = []
    agent = None

    def hook(*args):
        seen.append((len(args), args[0] is agent.signal, isinstance(args[0], AbortSignal)))
        return None

    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("done"), tools=[echo_tool()], prepare_next_turn=hook
    )
    await agent.prompt("go")
    assert stream.call_count == 2
    assert seen == [(1, True, True), (1, True, True)]


async def test_s84_agent_prepare_next_turn_async_and_cleared_mid_run():
    calls = []
    agent = None

    async def hook(signal):
        calls.append(signal)
        agent.prepare_next_turn = None  # looked up at each call: the second turn sees None
        return None

    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("done"), tools=[echo_tool()], prepare_next_turn=hook
    )
    await agent.prompt("go")
    assert len(calls) == 1
    assert stream.call_count == 2


async def test_s85_agent_level_prepare_next_turn_update():
    fired = []

    def hook(signal):
        if not fired:
            fired.append(1)
            return {"model": M2, "thinking_level": "high"}
        return None

    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("done"), tools=[echo_tool()], prepare_next_turn=hook
    )
    await agent.prompt("go")
    assert stream.calls[0].model is MODEL
    assert stream.calls[1].model is M2
    assert stream.calls[1].options.reasoning == "high"
    assert agent.state.model is MODEL
    assert agent.state.thinking_level == "off"


async def test_s85_agent_level_prepare_next_turn_context_does_not_touch_transcript():
    def hook(signal):
        return AgentLoopTurnUpdate(context=AgentContext(system_prompt="replaced", messages=[user("only")], tools=[]))

    agent, stream, _rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("done"), tools=[echo_tool()], prepare_next_turn=hook
    )
    await agent.prompt("go")
    assert stream.calls[1].system_prompt == "replaced"
    assert roles(stream.calls[1].messages) == ["user"]
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]
    assert agent.state.system_prompt == ""


async def test_s86_thrown_error_in_the_low_level_loop():
    events = Recorder()

    def boom(model, context, options):
        raise RuntimeError("stream failed")

    with pytest.raises(RuntimeError) as info:
        await run_agent_loop([user("go")], AgentContext(), config(), events, None, boom)
    assert str(info.value) == "stream failed"
    assert events.types == seq("AS TS MS ME")


async def test_s86_agent_loop_whose_run_raises_ends_the_stream():
    def boom(model, context, options):
        raise RuntimeError("stream failed")

    stream = agent_loop([user("go")], AgentContext(), config(), None, boom)
    events = await asyncio.wait_for(collect(stream), 2)
    assert [e.type for e in events] == seq("AS TS MS ME")
    with pytest.raises(RuntimeError) as info:
        await asyncio.wait_for(stream.result(), 2)
    assert str(info.value) == "stream failed"


async def test_s86_agent_loop_continue_whose_run_raises_ends_the_stream():
    def boom(messages):
        raise ValueError("convert failed")

    stream = agent_loop_continue(
        AgentContext(messages=[user("go")]), config(convert_to_llm=boom), None, ScriptedStream(asst("x"))
    )
    events = await asyncio.wait_for(collect(stream), 2)
    assert [e.type for e in events] == seq("AS TS")
    with pytest.raises(ValueError) as info:
        await asyncio.wait_for(stream.result(), 2)
    assert str(info.value) == "convert failed"


async def test_loop_signal_is_forwarded_to_stream_and_tools():
    controller = AbortController()
    echo = echo_tool()
    scripted = ScriptedStream(asst_tools(call("t1", "echo", {"value": "x"})), asst("done"))
    await run_agent_loop(
        [user("go")], AgentContext(tools=[echo]), config(), lambda e: None, controller.signal, scripted
    )
    assert scripted.calls[0].signal is controller.signal
    assert echo.calls[0][2] is controller.signal


async def test_loop_does_not_check_abort_before_calling_the_stream():
    controller = AbortController()
    controller.abort()
    scripted = ScriptedStream(asst("never"))
    events = Recorder()
    result = await run_agent_loop([user("go")], AgentContext(), config(), events, controller.signal, scripted)
    assert scripted.call_count == 1
    assert events.types == seq("AS TS MS ME MS ME TE AE")
    assert result[-1].stop_reason == "aborted"


async def test_loop_consumes_a_stream_that_is_not_an_event_stream():
    """A stream function may return any async iterable with ``result()`` (the loop awaits it)."""
    final = asst("ab")
    partials = [asst(""), asst("a"), asst("ab")]

    class Stream:
        def __aiter__(self):
            return self._events()

        async def _events(self):
            yield StartEvent(partial=partials[0])
            yield TextStartEvent(content_index=0, partial=partials[0])
            for index, delta in ((1, "a"), (2, "b")):
                await asyncio.sleep(0)
                yield TextDeltaEvent(content_index=0, delta=delta, partial=partials[index])
            yield TextEndEvent(content_index=0, content="ab", partial=partials[2])
            yield DoneEvent(reason="stop", message=final)

        async def result(self):
            return final

    recorder = Recorder()
    messages = await run_agent_loop(
        [user("go")], AgentContext(messages=[]), config(), recorder, None, lambda *_: Stream()
    )
    assert messages[-1] is final
    updates = recorder.of("MU")
    assert [u.assistant_message_event.type for u in updates] == ["text_start", "text_delta", "text_delta", "text_end"]
    assert [u.message for u in updates] == [partials[0], partials[1], partials[2], partials[2]]
    assert all(u.message is not u.assistant_message_event.partial for u in updates)
