"""Agent construction, state, subscription and queues (test_s01 to test_s08)."""

import asyncio
from types import SimpleNamespace

import pytest
from helpers import (
    MODEL,
    HangingStream,
    Recorder,
    ScriptedStream,
    asst,
    echo_tool,
    new_agent,
    roles,
    seq,
    settle,
    user,
)

from py_agent import Agent
from py_agent.ai.registry import stream_simple
from py_agent.core.loop import default_convert_to_llm


def test_s01_default_state():
    agent = Agent(stream_fn=ScriptedStream())
    state = agent.state
    assert state.system_prompt == ""
    assert state.model.id == "unknown"
    assert state.model.name == "unknown"
    assert state.model.api == "unknown"
    assert state.model.provider == "unknown"
    assert state.model.base_url == ""
    assert state.model.reasoning is False
    assert state.model.input == []
    assert state.model.context_window == 0
    assert state.model.max_tokens == 0
    assert (state.model.cost.input, state.model.cost.output) == (0, 0)
    assert (state.model.cost.cache_read, state.model.cost.cache_write) == (0, 0)
    assert state.thinking_level == "off"
    assert state.tools == []
    assert state.messages == []
    assert state.is_streaming is False
    assert state.streaming_message is None
    assert len(state.pending_tool_calls) == 0
    assert state.error_message is None
    assert agent.signal is None
    assert agent.steering_mode == "one-at-a-time"
    assert agent.follow_up_mode == "one-at-a-time"
    assert agent.tool_execution == "parallel"
    assert agent.transport == "auto"
    assert agent.session_id is None
    assert agent.thinking_budgets is None
    assert agent.max_retry_delay_ms is None
    assert agent.has_queued_messages() is False
    assert agent.state is state  # always the same object


def test_s01_defaults_without_any_option():
    agent = Agent()
    assert agent.stream_fn is stream_simple
    assert agent.convert_to_llm is default_convert_to_llm
    for name in (
        "transform_context",
        "get_api_key",
        "on_payload",
        "on_response",
        "before_tool_call",
        "after_tool_call",
        "prepare_next_turn",
    ):
        assert getattr(agent, name) is None, name


def test_s01_runtime_fields_are_read_only():
    agent = Agent(stream_fn=ScriptedStream())
    for name, value in (
        ("is_streaming", True),
        ("streaming_message", asst("x")),
        ("pending_tool_calls", {"t"}),
        ("error_message", "x"),
    ):
        with pytest.raises(AttributeError):
            setattr(agent.state, name, value)
    assert agent.state.is_streaming is False
    assert agent.state.error_message is None


def test_s02_custom_initial_state_and_copying():
    echo = echo_tool()
    other = echo_tool("other")
    tools = [echo]
    messages = [user("x")]
    agent = Agent(
        stream_fn=ScriptedStream(),
        initial_state={
            "system_prompt": "You are a helpful assistant.",
            "model": MODEL,
            "thinking_level": "low",
            "tools": tools,
            "messages": messages,
        },
    )
    state = agent.state
    assert state.system_prompt == "You are a helpful assistant."
    assert state.model is MODEL
    assert state.thinking_level == "low"
    assert state.tools == tools and state.tools is not tools
    assert state.tools[0] is echo
    assert state.messages == messages and state.messages is not messages
    assert state.messages[0] is messages[0]
    tools.append(other)
    messages.clear()
    assert state.tools == [echo]
    assert len(state.messages) == 1


def test_s02_initial_state_camel_case_keys_and_runtime_fields_ignored():
    agent = Agent(
        stream_fn=ScriptedStream(),
        initial_state={
            "systemPrompt": "sys",
            "model": MODEL,
            "thinkingLevel": "high",
            "isStreaming": True,
            "is_streaming": True,
            "errorMessage": "boom",
            "error_message": "boom",
            "streamingMessage": asst("x"),
            "pendingToolCalls": {"t1"},
        },
    )
    assert agent.state.system_prompt == "sys"
    assert agent.state.thinking_level == "high"
    assert agent.state.is_streaming is False
    assert agent.state.error_message is None
    assert agent.state.streaming_message is None
    assert len(agent.state.pending_tool_calls) == 0


def test_s02_initial_state_as_object():
    initial = SimpleNamespace(
        system_prompt="obj",
        model=MODEL,
        thinking_level="medium",
        tools=[echo_tool()],
        messages=[user("a"), asst("b")],
    )
    agent = Agent(stream_fn=ScriptedStream(), initial_state=initial)
    assert agent.state.system_prompt == "obj"
    assert agent.state.model is MODEL
    assert agent.state.thinking_level == "medium"
    assert [t.name for t in agent.state.tools] == ["echo"]
    assert agent.state.tools is not initial.tools
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert agent.state.messages is not initial.messages


def test_s02_initial_model_given_as_pi_json():
    agent = Agent(stream_fn=ScriptedStream(), initial_state={"model": MODEL.model_dump()})
    assert agent.state.model == MODEL
    assert agent.state.model.base_url == "https://example.invalid"


def test_s03_accessor_copy_semantics():
    agent = Agent(stream_fn=ScriptedStream())
    echo = echo_tool()
    tools = [echo]
    agent.state.tools = tools
    assert agent.state.tools == tools
    assert agent.state.tools is not tools
    tools.append(echo_tool("x"))
    assert len(agent.state.tools) == 1

    hello = user("Hello")
    messages = [hello]
    agent.state.messages = messages
    assert agent.state.messages == messages
    assert agent.state.messages is not messages
    messages.append(user("later"))
    assert len(agent.state.messages) == 1

    a = asst("Hi")
    agent.state.messages.append(a)  # the getter returns the live list
    assert len(agent.state.messages) == 2
    assert agent.state.messages[1] is a
    assert agent.state.messages is agent.state.messages

    agent.state.messages = []
    assert agent.state.messages == []

    agent.state.system_prompt = "new prompt"
    agent.state.model = MODEL
    agent.state.thinking_level = "xhigh"
    assert agent.state.system_prompt == "new prompt"
    assert agent.state.model is MODEL
    assert agent.state.thinking_level == "xhigh"


def test_s03_tuple_assignment_is_stored_as_list():
    agent = Agent(stream_fn=ScriptedStream())
    m = user("a")
    agent.state.messages = (m,)
    assert agent.state.messages == [m]
    agent.state.messages.append(user("b"))
    assert len(agent.state.messages) == 2


async def test_s04_subscribe_semantics():
    agent, _, _ = new_agent(asst("ok"))
    count = 0

    def counter(event, signal):
        nonlocal count
        count += 1

    unsubscribe = agent.subscribe(counter)
    assert count == 0
    agent.state.system_prompt = "Test prompt"
    assert count == 0
    unsubscribe()
    unsubscribe()  # harmless
    await agent.prompt("hi")
    assert count == 0


async def test_s04_same_listener_registered_once():
    stream = ScriptedStream(asst("ok"))
    agent = Agent(stream_fn=stream, initial_state={"model": MODEL})
    recorder = Recorder()
    unsubscribe_1 = agent.subscribe(recorder)
    agent.subscribe(recorder)
    await agent.prompt("hi")
    assert recorder.types == seq("AS TS MS ME MS ME TE AE")
    unsubscribe_1()  # removes the single registration
    recorder.clear()
    stream.add(asst("again"))
    await agent.prompt("again")
    assert recorder.types == []


async def test_s04_listener_removed_during_dispatch_is_not_called():
    agent, _, recorder = new_agent(asst("ok"))
    late = Recorder()
    unsubscribe_late = None

    def remover(event, signal):
        if event.type == "agent_start":
            unsubscribe_late()

    agent.subscribe(remover)
    unsubscribe_late = agent.subscribe(late)
    await agent.prompt("hi")
    assert recorder.types == seq("AS TS MS ME MS ME TE AE")
    assert late.types == []


async def test_s05_idle_controls():
    agent = Agent(stream_fn=ScriptedStream())
    agent.abort()
    agent.abort()
    await asyncio.wait_for(agent.wait_for_idle(), 1)
    assert agent.signal is None
    assert agent.state.is_streaming is False


def test_s06_queues_while_idle():
    agent = Agent(stream_fn=ScriptedStream())
    steer_msg = user("steer")
    follow_msg = user("follow")
    agent.steer(steer_msg)
    assert steer_msg not in agent.state.messages
    assert agent.state.messages == []
    assert agent.has_queued_messages() is True
    agent.clear_steering_queue()
    assert agent.has_queued_messages() is False

    agent.follow_up(follow_msg)
    assert agent.state.messages == []
    assert agent.has_queued_messages() is True
    agent.clear_follow_up_queue()
    assert agent.has_queued_messages() is False

    agent.steer(steer_msg)
    agent.follow_up(follow_msg)
    agent.clear_steering_queue()
    assert agent.has_queued_messages() is True  # the follow-up is still queued
    agent.steer(steer_msg)
    agent.clear_all_queues()
    assert agent.has_queued_messages() is False


def test_s06_queue_modes_are_settable():
    agent = Agent(stream_fn=ScriptedStream(), steering_mode="all", follow_up_mode="all")
    assert agent.steering_mode == "all"
    assert agent.follow_up_mode == "all"
    agent.steering_mode = "one-at-a-time"
    agent.follow_up_mode = "one-at-a-time"
    assert agent.steering_mode == "one-at-a-time"
    assert agent.follow_up_mode == "one-at-a-time"


async def test_s07_reset():
    agent, stream, recorder = new_agent(asst("", stop_reason="error", error_message="quota"))
    await agent.prompt("hi")
    assert agent.state.error_message == "quota"
    echo = echo_tool()
    agent.state.system_prompt = "p"
    agent.state.tools = [echo]
    agent.state.thinking_level = "low"
    agent.steer(user("s"))
    agent.follow_up(user("f"))

    agent.reset()
    assert agent.state.messages == []
    assert agent.state.error_message is None
    assert agent.state.is_streaming is False
    assert agent.state.streaming_message is None
    assert len(agent.state.pending_tool_calls) == 0
    assert agent.has_queued_messages() is False
    assert agent.state.system_prompt == "p"
    assert agent.state.tools == [echo]
    assert agent.state.model is MODEL
    assert agent.state.thinking_level == "low"

    recorder.clear()
    stream.add(asst("after reset"))
    await agent.prompt("again")
    assert recorder.types == seq("AS TS MS ME MS ME TE AE")
    assert roles(agent.state.messages) == ["user", "assistant"]


async def test_s08_reset_while_running_raises():
    hanging = HangingStream(final=asst("done"))
    agent, _, recorder = new_agent(stream_fn=hanging)
    task = asyncio.create_task(agent.prompt("hi"))
    await hanging.started.wait()
    await settle()
    with pytest.raises(Exception) as info:
        agent.reset()
    assert str(info.value) == "Agent is already processing. Wait for completion before resetting."
    assert agent.state.is_streaming is True
    assert roles(agent.state.messages) == ["user"]
    assert agent.signal is not None
    hanging.release()
    await task
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert recorder.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.is_streaming is False
