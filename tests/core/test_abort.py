"""Abort (test_s69 to test_s73)."""

import asyncio

import pytest
from helpers import (
    ABBREV,
    HangingStream,
    asst,
    asst_tools,
    call,
    echo_tool,
    new_agent,
    roles,
    seq,
    simple_tool,
    texts,
)

from py_agent.ai.types import TextContent
from py_agent.core.types import AgentToolResult

ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def abort_on_first_update(agent):
    flags = {}

    def listener(event, signal):
        if event.type == "message_update" and not signal.aborted and not flags.get("fired"):
            flags["fired"] = True
            agent.abort()
        if event.type == "agent_end":
            flags["aborted_at_end"] = signal.aborted
            flags["signal"] = signal

    agent.subscribe(listener)
    return flags


def assert_aborted_stream_shape(types):
    prefix = seq("AS TS MS ME MS")
    suffix = seq("ME TE AE")
    assert types[: len(prefix)] == prefix
    assert types[-len(suffix) :] == suffix
    middle = types[len(prefix) : -len(suffix)]
    assert len(middle) >= 1
    assert set(middle) == {ABBREV["MU"]}


async def test_s69_abort_mid_stream():
    agent, stream, rec = new_agent(asst(ALPHABET), streaming=True, chunk_chars=1)
    flags = abort_on_first_update(agent)
    await agent.prompt("hi")
    assert_aborted_stream_shape(rec.types)
    last = agent.state.messages[-1]
    assert last.role == "assistant"
    assert last.stop_reason == "aborted"
    assert last.error_message == "Request was aborted"
    assert len("".join(texts(last))) < 26
    assert agent.state.error_message == "Request was aborted"
    assert flags["aborted_at_end"] is True
    assert agent.state.is_streaming is False
    assert stream.call_count == 1
    assert rec.first("TE").message is last and rec.first("TE").tool_results == []
    assert roles(agent.state.messages) == ["user", "assistant"]


async def test_s69_abort_mid_stream_with_tool_call_in_partial():
    """No tools execute even if the partial message contained tool calls."""
    echo = echo_tool()
    message = asst([TextContent(text="calling"), *asst_tools(call("t1", "echo", {"value": "x"})).content], "toolUse")
    agent, _stream, rec = new_agent(message, streaming=True, chunk_chars=1, tools=[echo])

    def listener(event, signal):
        if event.type == "message_update" and event.assistant_message_event.type == "toolcall_start":
            agent.abort()

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert echo.calls == []
    assert "tool_execution_start" not in rec.types
    assert rec.types[-3:] == seq("ME TE AE")


async def test_s69_abort_of_hanging_stream_keeps_partial_and_listener_signal():
    hanging = HangingStream()
    agent, _, rec = new_agent(stream_fn=hanging)
    task = asyncio.create_task(agent.prompt("hi"))
    await hanging.started.wait()
    await asyncio.sleep(0)
    signal = agent.signal
    agent.abort()
    agent.abort()  # idempotent
    await task
    assert signal.aborted is True
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    # every event after the abort is delivered with the (aborted) run signal
    assert all(s is signal for s in rec.signals)
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_s70_abort_during_tool_execution():
    started = asyncio.Event()

    async def waiter(tool_call_id, params, signal, on_update):
        started.set()
        await signal.wait()
        raise RuntimeError("Tool aborted")

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "waiter", {})), asst("never used"), tools=[simple_tool("waiter", waiter)]
    )
    task = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    agent.abort()
    await task
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text="Tool aborted")]
    assert stream.call_count == 2
    assert stream.calls[1].signal.aborted is True
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.error_message == "Request was aborted"
    assert agent.state.error_message == "Request was aborted"
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]
    assert len(stream.responses) == 1  # the aborted call consumed no scripted response


async def test_s70_abort_during_parallel_tools_runs_all_prepared_jobs():
    started = asyncio.Event()
    executed = []

    async def waiter(tool_call_id, params, signal, on_update):
        executed.append(tool_call_id)
        started.set()
        await signal.wait()
        raise RuntimeError("Tool aborted")

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "waiter", {}), call("t2", "waiter", {})), tools=[simple_tool("waiter", waiter)]
    )
    task = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    agent.abort()
    await task
    assert executed == ["t1", "t2"]
    assert rec.types == seq("AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE TS MS ME TE AE")
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["t1", "t2"]
    assert stream.call_count == 2


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
async def test_s71_s72_abort_during_preflight(mode):
    echo = echo_tool()
    agent = None
    before_calls = []

    def before(ctx, signal):
        before_calls.append(ctx.tool_call.id)
        if ctx.tool_call.id == "t1":
            agent.abort()
        return None

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})),
        asst("never used"),
        tools=[echo],
        before_tool_call=before,
        tool_execution=mode,
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")
    assert rec.trace()[6:10] == ["XS(t1)", "XE(t1)", "MS(toolResult)", "ME(toolResult)"]
    end = rec.first("XE")
    assert end.result.content == [TextContent(text="Operation aborted")]
    assert end.result.details == {}
    assert end.is_error is True
    assert echo.calls == []
    assert before_calls == ["t1"]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["t1"]
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert stream.call_count == 2


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
async def test_abort_in_tool_start_listener_before_preflight(mode):
    """An abort observed during preflight (without beforeToolCall) yields "Operation aborted"."""
    echo = echo_tool()
    agent, _stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})),
        tools=[echo],
        tool_execution=mode,
    )

    def listener(event, signal):
        if event.type == "tool_execution_start":
            agent.abort()

    agent.subscribe(listener)
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")
    assert rec.first("XE").result.content == [TextContent(text="Operation aborted")]
    assert echo.calls == []


async def test_sequential_abort_after_first_tool_skips_the_rest():
    agent = None

    async def first(tool_call_id, params, signal, on_update):
        agent.abort()
        return AgentToolResult(content=[TextContent(text="first done")], details={})

    echo = echo_tool()
    agent, _stream, rec = new_agent(
        asst_tools(call("t1", "first"), call("t2", "echo", {"value": "b"})),
        tools=[simple_tool("first", first), echo],
        tool_execution="sequential",
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")
    assert rec.first("XE").is_error is False
    assert echo.calls == []
    assert len(rec.of("TE")[0].tool_results) == 1


async def test_s73_new_run_after_an_aborted_run():
    agent, stream, rec = new_agent(asst(ALPHABET), streaming=True, chunk_chars=1)
    flags = abort_on_first_update(agent)
    await agent.prompt("hi")
    first_signal = flags["signal"]
    assert first_signal.aborted is True
    stream.add(asst("ok"))
    rec.clear()
    await agent.prompt("again")
    assert rec.types == seq("AS TS MS ME MS MU MU MU MU ME TE AE")
    assert agent.state.messages[-1].stop_reason == "stop"
    assert agent.state.messages[-1].content == [TextContent(text="ok")]
    second_signal = flags["signal"]
    assert second_signal is not first_signal
    assert second_signal.aborted is False
    assert all(s is second_signal for s in rec.signals)
    assert agent.state.error_message is None


async def test_abort_in_before_tool_call_wins_over_block_reason():
    agent = None

    def before(ctx, signal):
        agent.abort()
        return {"block": True, "reason": "Blocked by policy"}

    agent, _, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})), tools=[echo_tool()], before_tool_call=before
    )
    await agent.prompt("go")
    assert rec.first("XE").result.content == [TextContent(text="Operation aborted")]
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE")


async def test_tool_ignoring_abort_runs_to_completion():
    agent = None

    async def stubborn(tool_call_id, params, signal, on_update):
        agent.abort()
        await asyncio.sleep(0)
        return AgentToolResult(content=[TextContent(text="finished anyway")], details={})

    agent, stream, rec = new_agent(asst_tools(call("t1", "stubborn")), tools=[simple_tool("stubborn", stubborn)])
    await agent.prompt("go")
    assert rec.first("XE").is_error is False
    assert agent.state.messages[2].content == [TextContent(text="finished anyway")]
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert stream.call_count == 2


async def test_parallel_calls_prepared_before_the_abort_still_execute():
    """B (0.79.x): an abort observed while preflighting a later call stops the preflight phase, but
    calls already prepared still run, with the aborted signal."""
    agent = None
    echo = echo_tool()

    def before(ctx, signal):
        if ctx.tool_call.id == "t2":
            agent.abort()

    agent, _stream, rec = new_agent(
        asst_tools(
            call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"}), call("t3", "echo", {"value": "c"})
        ),
        tools=[echo],
        before_tool_call=before,
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE TS MS ME TE AE")
    assert rec.trace()[6:10] == ["XS(t1)", "XS(t2)", "XE(t2)", "XE(t1)"]
    assert [c[0] for c in echo.calls] == ["t1"]
    assert echo.calls[0][2].aborted is True
    ends = {e.tool_call_id: e for e in rec.of("XE")}
    assert ends["t1"].is_error is False
    assert ends["t2"].result.content == [TextContent(text="Operation aborted")]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["t1", "t2"]
    assert agent.state.messages[-1].stop_reason == "aborted"
