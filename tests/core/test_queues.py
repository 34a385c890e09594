"""Steering and follow-up (test_s57 to test_s68)."""

import pytest
from helpers import (
    asst,
    asst_tools,
    call,
    echo_tool,
    new_agent,
    roles,
    seq,
    user,
)

from py_agent.ai.types import TextContent


async def test_s57_steering_during_tool_execution_does_not_skip_tools():
    steer_msg = user("steer")
    agent = None

    async def before(tool_call_id, params, signal, on_update):
        if tool_call_id == "t1":
            agent.steer(steer_msg)

    echo = echo_tool(before=before)
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})),
        asst("done"),
        tools=[echo],
        tool_execution="sequential",
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME XS XE MS ME TE TS MS ME MS ME TE AE")
    assert rec.trace() == [
        "AS", "TS", "MS(user)", "ME(user)", "MS(assistant)", "ME(assistant)",
        "XS(t1)", "XE(t1)", "MS(toolResult)", "ME(toolResult)",
        "XS(t2)", "XE(t2)", "MS(toolResult)", "ME(toolResult)",
        "TE", "TS", "MS(user)", "ME(user)", "MS(assistant)", "ME(assistant)", "TE", "AE",
    ]  # fmt: skip
    assert [c[0] for c in echo.calls] == ["t1", "t2"]
    assert all(e.is_error is False for e in rec.of("XE"))
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult", "toolResult", "user"]
    assert stream.calls[1].messages[-1] is steer_msg
    assert rec.of("MS")[4].message is steer_msg


async def test_s57_steering_during_parallel_tools_does_not_skip_tools():
    steer_msg = user("steer")
    agent = None

    async def before(tool_call_id, params, signal, on_update):
        if tool_call_id == "t1":
            agent.steer(steer_msg)

    echo = echo_tool(before=before)
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})),
        asst("done"),
        tools=[echo],
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE TS MS ME MS ME TE AE")
    assert len(echo.calls) == 2
    assert stream.calls[1].messages[-1] is steer_msg


async def test_s58_steering_queued_while_idle():
    p_msg = user("p")
    s_msg = user("S")
    agent, stream, rec = new_agent(asst("ok"))
    agent.steer(s_msg)
    await agent.prompt(p_msg)
    assert rec.types == seq("AS TS MS ME MS ME MS ME TE AE")
    assert [e.message for e in rec.of("MS")[:2]] == [p_msg, s_msg]
    assert rec.of("MS")[1].message is s_msg
    assert stream.call_count == 1
    assert stream.calls[0].messages == [p_msg, s_msg]
    assert agent.has_queued_messages() is False
    assert roles(agent.state.messages) == ["user", "user", "assistant"]


def steer_on_first_turn_end(agent, *actions):
    fired = []

    def listener(event, signal):
        if event.type == "turn_end" and not fired:
            fired.append(True)
            for action, message in actions:
                getattr(agent, action)(message)

    agent.subscribe(listener)


async def test_s59_one_at_a_time_steering():
    s1, s2 = user("S1"), user("S2")
    agent, stream, rec = new_agent(asst("one"), asst("two"), asst("three"))
    steer_on_first_turn_end(agent, ("steer", s1), ("steer", s2))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE TS MS ME MS ME TE AE")
    injected = [e.message for e in rec.of("MS") if e.message is s1 or e.message is s2]
    assert injected == [s1, s2]
    assert rec.of("MS")[2].message is s1
    assert rec.of("MS")[4].message is s2
    assert stream.call_count == 3
    assert stream.calls[1].messages[-1] is s1
    assert stream.calls[2].messages[-1] is s2


async def test_s60_all_steering():
    s1, s2 = user("S1"), user("S2")
    agent, stream, rec = new_agent(asst("one"), asst("two"), steering_mode="all")
    steer_on_first_turn_end(agent, ("steer", s1), ("steer", s2))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME MS ME TE AE")
    assert rec.of("MS")[2].message is s1
    assert rec.of("MS")[3].message is s2
    assert stream.call_count == 2
    assert stream.calls[1].messages[-2:] == [s1, s2]


async def test_s60_mode_change_takes_effect_at_next_drain():
    s1, s2 = user("S1"), user("S2")
    agent, stream, rec = new_agent(asst("one"), asst("two"))

    fired = []

    def listener(event, signal):
        if event.type == "turn_end" and not fired:
            fired.append(True)
            agent.steer(s1)
            agent.steer(s2)
            agent.steering_mode = "all"

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME MS ME TE AE")
    assert stream.call_count == 2


async def test_s61_follow_up():
    f = user("F")
    agent, stream, rec = new_agent(asst("one"), asst("two"))
    steer_on_first_turn_end(agent, ("follow_up", f))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[2].message is f
    assert stream.call_count == 2
    assert stream.calls[1].messages[-1] is f
    assert roles(agent.state.messages) == ["user", "assistant", "user", "assistant"]


async def test_s61_follow_up_waits_for_tool_turns():
    f = user("F")
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})), asst("after tool"), asst("after follow-up"), tools=[echo_tool()]
    )
    steer_on_first_turn_end(agent, ("follow_up", f))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE TS MS ME MS ME TE AE")
    assert stream.call_count == 3
    assert stream.calls[2].messages[-1] is f
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult"]


async def test_s62_steering_wins_over_follow_up():
    f, s = user("F"), user("S")
    agent, stream, rec = new_agent(asst("one"), asst("two"), asst("three"))
    steer_on_first_turn_end(agent, ("follow_up", f), ("steer", s))
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[2].message is s
    assert rec.of("MS")[4].message is f
    assert stream.call_count == 3


@pytest.mark.parametrize("mode, calls", [("one-at-a-time", 3), ("all", 2)])
async def test_s63_follow_up_modes(mode, calls):
    f1, f2 = user("F1"), user("F2")
    agent, stream, rec = new_agent(asst("one"), asst("two"), asst("three"), follow_up_mode=mode)
    steer_on_first_turn_end(agent, ("follow_up", f1), ("follow_up", f2))
    await agent.prompt("hi")
    assert stream.call_count == calls
    if mode == "all":
        assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME MS ME TE AE")
        assert stream.calls[1].messages[-2:] == [f1, f2]
    else:
        assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE TS MS ME MS ME TE AE")
        assert stream.calls[1].messages[-1] is f1
        assert stream.calls[2].messages[-1] is f2
    assert agent.has_queued_messages() is False


async def test_s64_clear_steering_queue_before_the_poll():
    s = user("S")
    agent, stream, rec = new_agent(asst("one"), asst("never"))

    def listener(event, signal):
        if event.type == "turn_end":
            agent.steer(s)
            agent.clear_steering_queue()

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert stream.call_count == 1


async def test_s64_clear_follow_up_queue_before_the_poll():
    f = user("F")
    agent, stream, rec = new_agent(asst("one"), asst("never"))

    def listener(event, signal):
        if event.type == "turn_end":
            agent.follow_up(f)
            agent.clear_all_queues()

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert stream.call_count == 1


async def test_s65_continue_from_assistant_tail_with_follow_up():
    f = user("F")
    agent, stream, rec = new_agent(asst("second"))
    agent.state.messages = [user("first"), asst("Initial response")]
    agent.follow_up(f)
    result = await agent.continue_()
    assert result is None
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.trace()[2:4] == ["MS(user)", "ME(user)"]
    assert rec.first("MS").message is f
    assert roles(agent.state.messages) == ["user", "assistant", "user", "assistant"]
    assert stream.calls[0].messages[-1] is f
    assert agent.has_queued_messages() is False


async def test_s65_follow_up_all_mode_on_continue():
    f1, f2 = user("F1"), user("F2")
    agent, stream, rec = new_agent(asst("reply"), follow_up_mode="all")
    agent.state.messages = [user("first"), asst("Initial response")]
    agent.follow_up(f1)
    agent.follow_up(f2)
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME MS ME MS ME TE AE")
    assert stream.call_count == 1
    assert stream.calls[0].messages[-2:] == [f1, f2]


async def test_s66_continue_from_assistant_tail_with_two_steering_messages():
    s1, s2 = user("S1"), user("S2")
    agent, stream, rec = new_agent(asst("one"), asst("two"))
    agent.state.messages = [user("first"), asst("Initial response")]
    agent.steer(s1)
    agent.steer(s2)
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[0].message is s1
    assert rec.of("MS")[2].message is s2
    assert stream.call_count == 2
    assert roles(agent.state.messages)[-4:] == ["user", "assistant", "user", "assistant"]
    assert len(agent.state.messages) == 6


async def test_s66_steering_wins_over_follow_up_on_continue():
    s, f = user("S"), user("F")
    agent, _stream, rec = new_agent(asst("one"), asst("two"))
    agent.state.messages = [user("first"), asst("Initial response")]
    agent.follow_up(f)
    agent.steer(s)
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[0].message is s
    assert rec.of("MS")[2].message is f


async def test_s67_continue_preconditions():
    agent, stream, rec = new_agent(asst("never"))
    with pytest.raises(Exception) as info:
        await agent.continue_()
    assert str(info.value) == "No messages to continue from"
    agent.state.messages = [user("hi"), asst("reply")]
    with pytest.raises(Exception) as info:
        await agent.continue_()
    assert str(info.value) == "Cannot continue from message role: assistant"
    assert rec.types == []
    assert agent.state.is_streaming is False
    assert stream.call_count == 0
    assert agent.signal is None


async def test_s68_continue_from_user_tail():
    hi = user("hi")
    agent, stream, rec = new_agent(asst("reply"))
    agent.state.messages = [hi]
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME TE AE")
    assert rec.trace() == ["AS", "TS", "MS(assistant)", "ME(assistant)", "TE", "AE"]
    assert stream.calls[0].messages == [hi]
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert rec.first("AE").messages == [agent.state.messages[-1]]


async def test_s68_continue_from_tool_result_tail():
    agent, stream, rec = new_agent(asst("reply"))
    await_messages = [user("go"), asst_tools(call("t1", "echo", {"value": "a"}))]
    from py_agent.ai.types import ToolResultMessage

    result = ToolResultMessage(
        tool_call_id="t1", tool_name="echo", content=[TextContent(text="echoed: a")], details={}, is_error=False
    )
    agent.state.messages = [*await_messages, result]
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME TE AE")
    assert roles(stream.calls[0].messages) == ["user", "assistant", "toolResult"]


async def test_s68_continue_from_custom_tail():
    custom = {"role": "custom", "text": "Hook content", "timestamp": 1}

    def convert(messages):
        out = []
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "custom":
                out.append(user(m["text"]))
            else:
                out.append(m)
        return out

    agent, stream, rec = new_agent(asst("reply"), convert_to_llm=convert)
    agent.state.messages = [custom]
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME TE AE")
    assert len(stream.calls[0].messages) == 1
    assert stream.calls[0].messages[0].content == "Hook content"
    assert roles(agent.state.messages) == ["custom", "assistant"]


async def test_s68_continue_from_user_tail_still_polls_steering():
    s = user("S")
    agent, stream, rec = new_agent(asst("reply"))
    agent.state.messages = [user("hi")]
    agent.steer(s)
    await agent.continue_()
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.first("MS").message is s
    assert stream.calls[0].messages[-1] is s


async def test_s58_agent_end_messages_include_injected_messages():
    p_msg, s_msg = user("p"), user("S")
    agent, _, rec = new_agent(asst("ok"))
    agent.steer(s_msg)
    await agent.prompt(p_msg)
    end_messages = rec.first("AE").messages
    assert roles(end_messages) == ["user", "user", "assistant"]
    assert end_messages[0] is p_msg and end_messages[1] is s_msg
    assert end_messages[2] is agent.state.messages[-1]


async def test_steering_stays_queued_when_the_turn_errors():
    s = user("S")
    agent, stream, rec = new_agent(asst("", stop_reason="error", error_message="down"), asst("ok"))

    def listener(event, signal):
        # after the run's initial steering poll (a steer during the prompt's own events would be
        # picked up by that poll)
        if event.type == "message_start" and event.message.role == "assistant":
            agent.steer(s)

    unsubscribe = agent.subscribe(listener)
    await agent.prompt("first")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.has_queued_messages() is True
    unsubscribe()
    rec.clear()
    await agent.prompt("second")
    assert rec.types == seq("AS TS MS ME MS ME MS ME TE AE")
    assert rec.of("MS")[1].message is s
    assert stream.calls[1].messages[-1] is s


async def test_follow_up_queued_in_agent_end_listener_waits_for_next_run():
    f = user("F")
    agent, stream, rec = new_agent(asst("one"), asst("two"))
    queued = []

    def listener(event, signal):
        if event.type == "agent_end" and not queued:
            queued.append(True)
            agent.follow_up(f)

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.has_queued_messages() is True
    rec.clear()
    await agent.continue_()  # assistant tail + queued follow-up: runs it as a prompt
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.first("MS").message is f
    assert stream.call_count == 2
