"""Tools (test_s30 to test_s56), with docs/port-decisions.md #4 (tool calls of a ``length`` reply are not executed)."""

import asyncio

import pytest
from helpers import (
    TRUNCATED_TEXT,
    asst,
    asst_tools,
    call,
    echo_tool,
    new_agent,
    result_text,
    roles,
    seq,
    settle,
    simple_tool,
    user,
)

from py_agent.ai.types import TextContent
from py_agent.core.types import AfterToolCallResult, AgentTool, AgentToolResult, BeforeToolCallResult

TWO_CALL_PARALLEL = "AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE TS MS ME TE AE"
ONE_CALL = "AS TS MS ME MS ME XS XE MS ME TE TS MS ME TE AE"


async def test_s30_single_tool_happy_path():
    echo = echo_tool()
    agent, stream, rec = new_agent(asst_tools(call("t1", "echo", {"value": "hello"})), asst("done"), tools=[echo])
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert rec.trace() == [
        "AS", "TS", "MS(user)", "ME(user)", "MS(assistant)", "ME(assistant)", "XS(t1)", "XE(t1)",
        "MS(toolResult)", "ME(toolResult)", "TE", "TS", "MS(assistant)", "ME(assistant)", "TE", "AE",
    ]  # fmt: skip
    start = rec.first("XS")
    assert start.tool_call_id == "t1"
    assert start.tool_name == "echo"
    assert start.args == {"value": "hello"}
    end = rec.first("XE")
    assert end.tool_call_id == "t1" and end.tool_name == "echo"
    assert end.is_error is False
    assert end.result.content == [TextContent(text="echoed: hello")]
    assert end.result.details == {"value": "hello"}
    result = agent.state.messages[2]
    assert result.role == "toolResult"
    assert result.tool_call_id == "t1"
    assert result.tool_name == "echo"
    assert result.content == [TextContent(text="echoed: hello")]
    assert result.details == {"value": "hello"}
    assert result.is_error is False
    assert isinstance(result.timestamp, int)
    assert "terminate" not in result.model_dump()
    assert not hasattr(result, "terminate")
    assert rec.of("MS")[2].message is result and rec.of("ME")[2].message is result
    first_turn_end = rec.of("TE")[0]
    assert first_turn_end.tool_results == [result] and first_turn_end.tool_results[0] is result
    assert rec.of("TE")[1].tool_results == []
    assert stream.call_count == 2
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult"]
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]
    assert echo.calls[0][0] == "t1" and echo.calls[0][1] == {"value": "hello"}
    assert echo.calls[0][2] is rec.signals[0]
    assert len(agent.state.pending_tool_calls) == 0


async def test_s30_tool_result_as_plain_dict():
    async def execute(tool_call_id, params, signal, on_update):
        return {"content": [{"type": "text", "text": "dict result"}], "details": {"k": 1}}

    tool = simple_tool("dict_tool", execute)
    agent, _, rec = new_agent(asst_tools(call("t1", "dict_tool")), asst("done"), tools=[tool])
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    result = agent.state.messages[2]
    assert result.content == [TextContent(text="dict result")]
    assert result.details == {"k": 1}
    assert result.is_error is False


async def test_s30_sync_execute_function():
    def execute(tool_call_id, params, signal, on_update):
        return AgentToolResult(content=[TextContent(text="sync")], details=None)

    tool = simple_tool("sync_tool", execute)
    agent, _, rec = new_agent(asst_tools(call("t1", "sync_tool")), asst("done"), tools=[tool])
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert result_text(agent.state.messages[2]) == "sync"


async def test_s30_tool_subclass_with_execute_method():
    class Upper(AgentTool):
        async def execute(self, tool_call_id, params, signal=None, on_update=None):
            return AgentToolResult(content=[TextContent(text=params["value"].upper())], details={})

    tool = Upper(name="upper", label="Upper", description="upper-case", parameters=echo_tool().parameters)
    agent, _, rec = new_agent(asst_tools(call("t1", "upper", {"value": "abc"})), asst("done"), tools=[tool])
    await agent.prompt("go")
    assert rec.first("XE").is_error is False
    assert result_text(agent.state.messages[2]) == "ABC"


def gated_echo(log=None, **kwargs):
    """``first`` waits for a gate that ``second`` opens."""
    gate = asyncio.Event()
    observed = []

    async def before(tool_call_id, params, signal, on_update):
        if params["value"] == "first":
            await gate.wait()
        else:
            observed.append(not gate.is_set() and "start:first" in (log or []) and "end:first" not in (log or []))
            gate.set()

    log = [] if log is None else log
    return echo_tool(before=before, log=log, **kwargs), log, observed


async def test_s31_parallel_completion_order_vs_source_order():
    tool, _log, observed = gated_echo()
    agent, stream, rec = new_agent(
        asst_tools(call("tool-1", "echo", {"value": "first"}), call("tool-2", "echo", {"value": "second"})),
        asst("done"),
        tools=[tool],
    )
    await agent.prompt("go")
    assert rec.types == seq(TWO_CALL_PARALLEL)
    assert rec.trace()[6:14] == [
        "XS(tool-1)", "XS(tool-2)", "XE(tool-2)", "XE(tool-1)",
        "MS(toolResult)", "ME(toolResult)", "MS(toolResult)", "ME(toolResult)",
    ]  # fmt: skip
    assert [m.tool_call_id for m in (e.message for e in rec.of("MS")[2:4])] == ["tool-1", "tool-2"]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["tool-1", "tool-2"]
    assert observed == [True]
    assert [m.tool_call_id for m in agent.state.messages[2:4]] == ["tool-1", "tool-2"]
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult", "toolResult"]


async def test_s32_sequential_mode():
    log = []

    async def before(tool_call_id, params, signal, on_update):
        if params["value"] == "first":
            await asyncio.sleep(0.02)

    tool = echo_tool(before=before, log=log)
    agent, stream, rec = new_agent(
        asst_tools(call("tool-1", "echo", {"value": "first"}), call("tool-2", "echo", {"value": "second"})),
        asst("done"),
        tools=[tool],
        tool_execution="sequential",
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME XS XE MS ME TE TS MS ME TE AE")
    assert rec.trace()[6:14] == [
        "XS(tool-1)", "XE(tool-1)", "MS(toolResult)", "ME(toolResult)",
        "XS(tool-2)", "XE(tool-2)", "MS(toolResult)", "ME(toolResult)",
    ]  # fmt: skip
    assert log == ["start:first", "end:first", "start:second", "end:second"]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["tool-1", "tool-2"]
    assert stream.call_count == 2


def mode_tools(slow_mode, fast_mode, log):
    async def slow_execute(tool_call_id, params, signal, on_update):
        log.append(f"slow:{params['value']}:start")
        await asyncio.sleep(0.02)
        log.append(f"slow:{params['value']}:end")
        return AgentToolResult(content=[TextContent(text="slow")], details={})

    async def fast_execute(tool_call_id, params, signal, on_update):
        log.append(f"fast:{params['value']}:start")
        log.append(f"fast:{params['value']}:end")
        return AgentToolResult(content=[TextContent(text="fast")], details={})

    schema = {"type": "object", "properties": {"value": {"type": "string"}}}
    slow = simple_tool("slow", slow_execute, schema, execution_mode=slow_mode)
    fast = simple_tool("fast", fast_execute, schema, execution_mode=fast_mode)
    return [slow, fast]


async def test_s33_execution_mode_forces_sequential():
    log = []
    agent, _, rec = new_agent(
        asst_tools(call("c1", "slow", {"value": "a"}), call("c2", "fast", {"value": "b"})),
        asst("done"),
        tools=mode_tools("sequential", None, log),
    )
    await agent.prompt("go")
    assert log == ["slow:a:start", "slow:a:end", "fast:b:start", "fast:b:end"]
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME XS XE MS ME TE TS MS ME TE AE")
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["c1", "c2"]


async def test_s33_sequential_tool_not_called_still_forces_sequential():
    """Any call naming a sequential tool forces the whole batch sequential, whatever its position."""
    log = []
    agent, _, rec = new_agent(
        asst_tools(call("c1", "fast", {"value": "b"}), call("c2", "slow", {"value": "a"})),
        asst("done"),
        tools=mode_tools("sequential", None, log),
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME XS XE MS ME TE TS MS ME TE AE")


async def test_s33_parallel_execution_mode_overlaps():
    log = []
    agent, _, rec = new_agent(
        asst_tools(call("c1", "slow", {"value": "a"}), call("c2", "fast", {"value": "b"})),
        asst("done"),
        tools=mode_tools("parallel", "parallel", log),
    )
    await agent.prompt("go")
    assert log == ["slow:a:start", "fast:b:start", "fast:b:end", "slow:a:end"]
    assert rec.trace()[6:10] == ["XS(c1)", "XS(c2)", "XE(c2)", "XE(c1)"]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["c1", "c2"]


async def test_s33_parallel_mode_does_not_override_sequential_config():
    log = []
    agent, _, _rec = new_agent(
        asst_tools(call("c1", "slow", {"value": "a"}), call("c2", "fast", {"value": "b"})),
        asst("done"),
        tools=mode_tools("parallel", "parallel", log),
        tool_execution="sequential",
    )
    await agent.prompt("go")
    assert log == ["slow:a:start", "slow:a:end", "fast:b:start", "fast:b:end"]


async def test_s34_parallel_preflight_precedes_execution():
    log = []
    agent = None

    def before(ctx, signal):
        log.append(f"before:{ctx.tool_call.id}")

    def on_event(event, signal):
        if event.type == "tool_execution_start":
            log.append(f"XS:{event.tool_call_id}")

    async def exec_log(tool_call_id, params, signal, on_update):
        log.append(f"exec:{tool_call_id}")

    agent, _, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})),
        asst("done"),
        tools=[echo_tool(before=exec_log)],
        before_tool_call=before,
    )
    agent.subscribe(on_event)
    await agent.prompt("go")
    assert log == ["XS:t1", "before:t1", "XS:t2", "before:t2", "exec:t1", "exec:t2"]
    assert rec.types == seq(TWO_CALL_PARALLEL)


async def test_s35_tool_not_found():
    agent, stream, rec = new_agent(asst_tools(call("c1", "missing", {})), asst("ok"), tools=[echo_tool()])
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text="Tool missing not found")]
    assert end.result.details == {}
    assert end.result.model_dump() == {"content": [{"type": "text", "text": "Tool missing not found"}], "details": {}}
    result = agent.state.messages[2]
    assert result.is_error is True
    assert result.content == [TextContent(text="Tool missing not found")]
    assert result.details == {}
    assert stream.call_count == 2


async def test_s35_no_tools_at_all():
    agent, _stream, rec = new_agent(asst_tools(call("c1", "echo", {"value": "x"})), asst("ok"))
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert result_text(rec.first("XE").result) == "Tool echo not found"


async def test_s36_argument_validation_failure():
    hooks = []
    echo = echo_tool()
    agent, stream, rec = new_agent(
        asst_tools(call("c1", "echo", {})),
        asst("ok"),
        tools=[echo],
        before_tool_call=lambda ctx, signal: hooks.append("before"),
        after_tool_call=lambda ctx, signal: hooks.append("after"),
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert echo.calls == []
    assert hooks == []
    end = rec.first("XE")
    assert end.is_error is True
    text = result_text(end.result)
    assert text.startswith('Validation failed for tool "echo":\n')
    assert "value" in text
    assert "Received arguments:" in text
    assert text == (
        'Validation failed for tool "echo":\n  - value: must have required properties value\n\nReceived arguments:\n{}'
    )
    assert end.result.details == {}
    assert agent.state.messages[2].is_error is True
    assert stream.call_count == 2


async def test_s37_argument_coercion():
    received = []

    async def execute(tool_call_id, params, signal, on_update):
        received.append(params)
        return AgentToolResult(content=[TextContent(text=str(params["count"]))], details={})

    schema = {"type": "object", "properties": {"count": {"type": "number"}}, "required": ["count"]}
    tool = simple_tool("counter", execute, schema)
    assistant = asst_tools(call("c1", "counter", {"count": "5"}))
    agent, _, rec = new_agent(assistant, asst("ok"), tools=[tool])
    await agent.prompt("go")
    assert received[0]["count"] == 5
    assert isinstance(received[0]["count"], (int, float)) and not isinstance(received[0]["count"], bool)
    assert rec.first("XS").args == {"count": "5"}
    assert assistant.content[0].arguments == {"count": "5"}
    assert received[0] is not assistant.content[0].arguments
    assert rec.first("XE").is_error is False


@pytest.mark.parametrize(
    "before_result, text",
    [
        ({"block": True, "reason": "Blocked by policy"}, "Blocked by policy"),
        (BeforeToolCallResult(block=True, reason="Blocked by policy"), "Blocked by policy"),
        ({"block": True}, "Tool execution was blocked"),
        ({"block": True, "reason": ""}, "Tool execution was blocked"),
        (BeforeToolCallResult(block=True), "Tool execution was blocked"),
    ],
)
async def test_s38_before_tool_call_blocks(before_result, text):
    echo = echo_tool()
    after = []
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})),
        asst("ok"),
        tools=[echo],
        before_tool_call=lambda ctx, signal: before_result,
        after_tool_call=lambda ctx, signal: after.append(1),
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text=text)]
    assert end.result.details == {}
    assert echo.calls == [] and after == []
    assert stream.call_count == 2


@pytest.mark.parametrize("before_result", [None, {"block": False, "reason": "x"}, BeforeToolCallResult()])
async def test_s38_before_tool_call_allows(before_result):
    echo = echo_tool()

    async def before(ctx, signal):
        return before_result

    agent, _, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("ok"), tools=[echo], before_tool_call=before
    )
    await agent.prompt("go")
    assert rec.first("XE").is_error is False
    assert len(echo.calls) == 1


async def test_s39_before_tool_call_raises():
    echo = echo_tool()

    def before(ctx, signal):
        raise RuntimeError("policy crashed")

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("ok"), tools=[echo], before_tool_call=before
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text="policy crashed")]
    assert echo.calls == []
    assert stream.call_count == 2
    assert agent.state.error_message is None
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]


async def test_s40_before_tool_call_context_and_args_mutation():
    echo = echo_tool()
    checks = []
    agent = None

    def before(ctx, signal):
        checks.append(any(block is ctx.tool_call for block in ctx.assistant_message.content))
        checks.append(ctx.args == {"value": "hello"})
        checks.append(ctx.context.messages[-1] is ctx.assistant_message)
        checks.append(signal is agent.signal)
        checks.append(ctx.tool_call.arguments is not ctx.args)
        ctx.args["value"] = 123
        return None

    agent, _, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "hello"})), asst("ok"), tools=[echo], before_tool_call=before
    )
    await agent.prompt("go")
    assert checks == [True] * 5
    assert echo.calls[0][1]["value"] == 123  # executed without re-validation
    assert rec.first("XS").args == {"value": "hello"}
    assert result_text(rec.first("XE").result) == "echoed: 123"


async def test_s41_prepare_arguments():
    received = []

    async def execute(tool_call_id, params, signal, on_update):
        received.append(params)
        return AgentToolResult(content=[TextContent(text="edited")], details={})

    def prepare(args):
        if "edits" not in args and "oldText" in args:
            return {"edits": [{"oldText": args["oldText"], "newText": args["newText"]}]}
        return args

    schema = {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                },
            }
        },
        "required": ["edits"],
    }
    tool = simple_tool("edit", execute, schema, prepare_arguments=prepare)
    before_seen = []
    assistant = asst_tools(call("e1", "edit", {"oldText": "before", "newText": "after"}))
    agent, _, rec = new_agent(
        assistant,
        asst("ok"),
        tools=[tool],
        before_tool_call=lambda ctx, signal: before_seen.append((ctx.tool_call, ctx.args)),
    )
    await agent.prompt("go")
    assert received[0]["edits"] == [{"oldText": "before", "newText": "after"}]
    assert rec.first("XS").args == {"oldText": "before", "newText": "after"}
    assert before_seen[0][0] is assistant.content[0]  # the raw block
    assert before_seen[0][1] == {"edits": [{"oldText": "before", "newText": "after"}]}
    assert rec.first("XE").is_error is False


async def test_s41_prepare_arguments_raising_is_an_error_result():
    def prepare(args):
        raise ValueError("cannot prepare")

    tool = echo_tool()
    tool.prepare_arguments = prepare
    agent, _, rec = new_agent(asst_tools(call("t1", "echo", {"value": "x"})), asst("ok"), tools=[tool])
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert rec.first("XE").is_error is True
    assert result_text(rec.first("XE").result) == "cannot prepare"
    assert tool.calls == []


def raw_tool():
    async def execute(tool_call_id, params, signal, on_update):
        return AgentToolResult(content=[TextContent(text="raw")], details={"v": 1})

    return simple_tool("raw", execute)


@pytest.mark.parametrize(
    "override, content, details, is_error",
    [
        ({"content": [TextContent(text="patched")]}, "patched", {"v": 1}, False),
        ({"content": [{"type": "text", "text": "patched"}]}, "patched", {"v": 1}, False),
        (AfterToolCallResult(content=[TextContent(text="patched")]), "patched", {"v": 1}, False),
        ({"is_error": True}, "raw", {"v": 1}, True),
        ({"isError": True}, "raw", {"v": 1}, True),
        (AfterToolCallResult(is_error=True), "raw", {"v": 1}, True),
        ({"details": {"w": 2}}, "raw", {"w": 2}, False),
        (None, "raw", {"v": 1}, False),
        ({}, "raw", {"v": 1}, False),
    ],
)
async def test_s42_after_tool_call_overrides(override, content, details, is_error):
    seen = []
    live = []

    async def after(ctx, signal):
        seen.append(ctx)
        live.append(ctx.context.messages[-1] is ctx.assistant_message)
        return override

    agent, _, rec = new_agent(asst_tools(call("t1", "raw", {})), asst("ok"), tools=[raw_tool()], after_tool_call=after)
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    ctx = seen[0]
    assert ctx.result.content == [TextContent(text="raw")]
    assert ctx.is_error is False
    assert ctx.args == {}
    assert ctx.tool_call is ctx.assistant_message.content[0]
    assert live == [True]
    message = agent.state.messages[2]
    assert message.content == [TextContent(text=content)]
    assert message.details == details
    assert message.is_error is is_error
    end = rec.first("XE")
    assert end.result.content == [TextContent(text=content)]
    assert end.result.details == details
    assert end.is_error is is_error


async def test_s43_after_tool_call_raises():
    def after(ctx, signal):
        raise RuntimeError("after failed")

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "raw", {})), asst("ok"), tools=[raw_tool()], after_tool_call=after
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    message = agent.state.messages[2]
    assert message.is_error is True
    assert message.content == [TextContent(text="after failed")]
    assert message.details == {}
    assert stream.call_count == 2


async def test_s44_tool_raises():
    seen = []

    async def execute(tool_call_id, params, signal, on_update):
        raise RuntimeError("boom")

    def after(ctx, signal):
        seen.append((ctx.is_error, ctx.result.content, ctx.result.details))

    tool = simple_tool("bad", execute)
    agent, stream, rec = new_agent(asst_tools(call("t1", "bad", {})), asst("ok"), tools=[tool], after_tool_call=after)
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text="boom")]
    assert end.result.details == {}
    assert seen == [(True, [TextContent(text="boom")], {})]
    assert stream.call_count == 2
    assert agent.state.error_message is None


async def test_s44_tool_raises_and_after_overrides_error():
    async def execute(tool_call_id, params, signal, on_update):
        raise RuntimeError("boom")

    tool = simple_tool("bad", execute)
    agent, _, rec = new_agent(
        asst_tools(call("t1", "bad", {})),
        asst("ok"),
        tools=[tool],
        after_tool_call=lambda ctx, signal: {"content": [TextContent(text="recovered")], "is_error": False},
    )
    await agent.prompt("go")
    assert rec.first("XE").is_error is False
    assert result_text(agent.state.messages[2]) == "recovered"


async def test_s44_tool_raising_without_message_uses_class_name():
    async def execute(tool_call_id, params, signal, on_update):
        raise KeyError()

    tool = simple_tool("bad", execute)
    agent, _, rec = new_agent(asst_tools(call("t1", "bad", {})), asst("ok"), tools=[tool])
    await agent.prompt("go")
    assert result_text(rec.first("XE").result) == "KeyError"


async def test_s45_progress_updates_and_late_update_ignored():
    p1 = AgentToolResult(content=[TextContent(text="p1")], details={"n": 1})
    p2 = AgentToolResult(content=[TextContent(text="p2")], details={"n": 2})
    stored = []

    async def execute(tool_call_id, params, signal, on_update):
        on_update(p1)
        on_update(p2)
        stored.append(on_update)
        return AgentToolResult(content=[TextContent(text="done")], details={}, terminate=True)

    tool = simple_tool("progress", execute, {"type": "object", "properties": {"x": {"type": "string"}}})
    agent, stream, rec = new_agent(asst_tools(call("t1", "progress", {"x": "raw"})), tools=[tool])
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XU XU XE MS ME TE AE")
    updates = rec.of("XU")
    assert updates[0].partial_result is p1
    assert updates[1].partial_result is p2
    assert all(u.args == {"x": "raw"} for u in updates)
    assert all(u.tool_call_id == "t1" and u.tool_name == "progress" for u in updates)
    count = len(rec.events)
    stored[0](AgentToolResult(content=[TextContent(text="p3")], details={}))
    await settle()
    assert len(rec.events) == count
    assert stream.call_count == 1


async def test_s45_updates_are_delivered_before_after_tool_call():
    order = []

    async def execute(tool_call_id, params, signal, on_update):
        on_update(AgentToolResult(content=[TextContent(text="p")], details={}))
        return AgentToolResult(content=[TextContent(text="done")], details={})

    async def slow_update_listener(event, signal):
        if event.type == "tool_execution_update":
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            order.append("update-listener-done")

    tool = simple_tool("progress", execute)
    agent, _, rec = new_agent(
        asst_tools(call("t1", "progress")),
        asst("ok"),
        tools=[tool],
        after_tool_call=lambda ctx, signal: order.append("after"),
    )
    agent.subscribe(slow_update_listener)
    await agent.prompt("go")
    assert order == ["update-listener-done", "after"]
    assert rec.types == seq("AS TS MS ME MS ME XS XU XE MS ME TE TS MS ME TE AE")


async def test_s45_update_listener_raising_fails_the_run():
    async def execute(tool_call_id, params, signal, on_update):
        on_update(AgentToolResult(content=[TextContent(text="p")], details={}))
        return AgentToolResult(content=[TextContent(text="done")], details={})

    def bad(event, signal):
        if event.type == "tool_execution_update":
            raise RuntimeError("update listener failed")

    tool = simple_tool("progress", execute)
    agent, stream, rec = new_agent(asst_tools(call("t1", "progress")), asst("ok"), tools=[tool])
    agent.subscribe(bad)
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XU MS ME TE AE")
    assert agent.state.messages[-1].error_message == "update listener failed"
    assert agent.state.messages[-1].stop_reason == "error"
    assert roles(agent.state.messages) == ["user", "assistant", "assistant"]
    assert stream.call_count == 1


async def test_s46_late_update_from_settled_parallel_tool():
    stored = []
    release = asyncio.Event()

    async def settled(tool_call_id, params, signal, on_update):
        stored.append(on_update)
        return AgentToolResult(content=[TextContent(text="settled")], details={}, terminate=True)

    async def slow(tool_call_id, params, signal, on_update):
        await release.wait()
        return AgentToolResult(content=[TextContent(text="slow")], details={}, terminate=True)

    count_at_late_call = []

    def on_event(event, signal):
        if event.type == "tool_execution_end" and event.tool_call_id == "s1":
            count_at_late_call.append(len(rec.events))
            stored[0](AgentToolResult(content=[TextContent(text="late")], details={}))
            release.set()

    agent, stream, rec = new_agent(
        asst_tools(call("s1", "settled"), call("s2", "slow")),
        tools=[simple_tool("settled", settled), simple_tool("slow", slow)],
    )
    agent.subscribe(on_event)
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE AE")
    assert rec.trace()[6:10] == ["XS(s1)", "XS(s2)", "XE(s1)", "XE(s2)"]
    assert rec.of("XU") == []
    assert stream.call_count == 1  # both terminate


async def test_s47_pending_tool_calls_tracking():
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow(tool_call_id, params, signal, on_update):
        started.set()
        await release.wait()
        return AgentToolResult(content=[TextContent(text="slow")], details={}, terminate=True)

    agent, _, rec = new_agent(asst_tools(call("t1", "slow")), tools=[simple_tool("slow", slow)])
    sizes = []
    snapshots = []

    def on_event(event, signal):
        if event.type in ("tool_execution_start", "tool_execution_end"):
            sizes.append(len(agent.state.pending_tool_calls))
            snapshots.append(agent.state.pending_tool_calls)

    agent.subscribe(on_event)
    task = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    assert set(agent.state.pending_tool_calls) == {"t1"}
    release.set()
    await task
    assert sizes == [1, 0]
    assert set(snapshots[0]) == {"t1"}  # an earlier reference is an immutable snapshot
    assert len(agent.state.pending_tool_calls) == 0
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE AE")


async def test_s48_terminate_all_results_terminate():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "hello"})), tools=[echo_tool(terminate=True)]
    )
    await agent.prompt("go")
    assert stream.call_count == 1
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE AE")
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult"]
    assert len(rec.of("TE")) == 1
    assert rec.first("XE").result.terminate is True
    assert "terminate" not in agent.state.messages[2].model_dump()


async def test_s49_terminate_mixed_batch_continues():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "first"}), call("t2", "echo", {"value": "second"})),
        asst("done"),
        tools=[echo_tool(terminate=lambda value: value == "first")],
    )
    await agent.prompt("go")
    assert stream.call_count == 2
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert rec.types == seq(TWO_CALL_PARALLEL)


async def test_s49_terminate_all_in_parallel_batch_stops():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "first"}), call("t2", "echo", {"value": "second"})),
        tools=[echo_tool(terminate=True)],
    )
    await agent.prompt("go")
    assert stream.call_count == 1
    assert rec.types == seq("AS TS MS ME MS ME XS XS XE XE MS ME MS ME TE AE")


async def test_s50_after_tool_call_sets_terminate():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})),
        asst("never"),
        tools=[echo_tool()],
        after_tool_call=lambda ctx, signal: {"terminate": True},
    )
    await agent.prompt("go")
    assert stream.call_count == 1
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE AE")
    assert rec.first("XE").result.terminate is True
    assert result_text(rec.first("XE").result) == "echoed: x"


async def test_s50_after_tool_call_clears_terminate():
    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})),
        asst("again"),
        tools=[echo_tool(terminate=True)],
        after_tool_call=lambda ctx, signal: AfterToolCallResult(terminate=False),
    )
    await agent.prompt("go")
    assert stream.call_count == 2


async def test_s51_terminate_with_immediate_error_in_batch():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"}), call("t2", "missing", {})),
        asst("done"),
        tools=[echo_tool(terminate=True)],
    )
    await agent.prompt("go")
    assert stream.call_count == 2
    # the immediate (not found) XE comes during preflight, before the executed tool's XE
    assert rec.trace()[6:10] == ["XS(t1)", "XS(t2)", "XE(t2)", "XE(t1)"]
    assert [r.tool_call_id for r in rec.of("TE")[0].tool_results] == ["t1", "t2"]


async def test_s52_terminate_does_not_suppress_queued_steering():
    steer_msg = user("steer")
    agent = None

    async def before(tool_call_id, params, signal, on_update):
        agent.steer(steer_msg)

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})),
        asst("after steer"),
        tools=[echo_tool(terminate=True, before=before)],
    )
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[3].message is steer_msg
    assert stream.call_count == 2
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "user", "assistant"]


async def test_s52_terminate_does_not_suppress_follow_up():
    follow = user("follow")
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})), asst("after follow"), tools=[echo_tool(terminate=True)]
    )
    agent.follow_up(follow)
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME XS XE MS ME TE TS MS ME MS ME TE AE")
    assert rec.of("MS")[3].message is follow
    assert stream.call_count == 2


async def test_s53_tool_calls_in_stop_message_execute():
    echo = echo_tool()
    agent, stream, rec = new_agent(
        asst([call("t1", "echo", {"value": "a"})], stop_reason="stop"), asst("done"), tools=[echo]
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert len(echo.calls) == 1
    assert stream.call_count == 2
    assert rec.first("XE").is_error is False


async def test_s53_decision4_length_tool_calls_are_not_executed():
    echo = echo_tool()
    hooks = []
    agent, stream, rec = new_agent(
        asst([call("t1", "echo", {"value": "a"})], stop_reason="length"),
        asst("done"),
        tools=[echo],
        before_tool_call=lambda ctx, signal: hooks.append("before"),
        after_tool_call=lambda ctx, signal: hooks.append("after"),
    )
    await agent.prompt("go")
    assert rec.types == seq(ONE_CALL)
    assert echo.calls == []
    assert hooks == []
    start = rec.first("XS")
    assert (start.tool_call_id, start.tool_name, start.args) == ("t1", "echo", {"value": "a"})
    end = rec.first("XE")
    assert end.is_error is True
    assert end.result.content == [TextContent(text=TRUNCATED_TEXT.format(name="echo"))]
    assert end.result.details == {}
    message = agent.state.messages[2]
    assert message.role == "toolResult" and message.is_error is True
    assert message.content == [TextContent(text=TRUNCATED_TEXT.format(name="echo"))]
    assert rec.of("TE")[0].tool_results == [message]
    assert stream.call_count == 2
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult"]
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]


async def test_s53_decision4_length_multiple_calls_unknown_tools_and_terminate():
    """Every call gets XS XE MS ME in order (no preflight, no not-found check); the batch never terminates."""
    echo = echo_tool(terminate=True)
    agent, stream, rec = new_agent(
        asst([call("t1", "echo", {"value": "a"}), call("t2", "missing", {"x": 1})], stop_reason="length"),
        asst("done"),
        tools=[echo],
    )
    await agent.prompt("go")
    assert rec.trace()[6:16] == [
        "XS(t1)", "XE(t1)", "MS(toolResult)", "ME(toolResult)",
        "XS(t2)", "XE(t2)", "MS(toolResult)", "ME(toolResult)", "TE", "TS",
    ]  # fmt: skip
    ends = rec.of("XE")
    assert [result_text(e.result) for e in ends] == [
        TRUNCATED_TEXT.format(name="echo"),
        TRUNCATED_TEXT.format(name="missing"),
    ]
    assert all(e.is_error for e in ends)
    assert echo.calls == []
    assert stream.call_count == 2


async def test_s53_length_without_tool_calls_ends_normally():
    agent, stream, rec = new_agent(asst("cut off", stop_reason="length"))
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert stream.call_count == 1
    assert agent.state.error_message is None


@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
async def test_s54_error_turn_never_executes_tools(stop_reason):
    echo = echo_tool()
    agent, stream, rec = new_agent(
        asst([call("t1", "echo", {"value": "a"})], stop_reason=stop_reason, error_message="upstream 500"),
        asst("never"),
        tools=[echo],
    )
    prepare_calls = []
    agent.prepare_next_turn = lambda signal: prepare_calls.append(signal)
    agent.follow_up(user("queued follow-up"))
    await agent.prompt("go")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert echo.calls == []
    assert rec.first("TE").tool_results == []
    assert agent.state.error_message == "upstream 500"
    assert prepare_calls == []
    assert agent.has_queued_messages() is True  # the follow-up queue was not polled
    assert stream.call_count == 1


async def test_s55_hook_order():
    log = []

    def transform(messages, signal):
        log.append("transform")
        return messages

    def convert(messages):
        log.append("convert")
        return list(messages)

    def before(ctx, signal):
        log.append("before")

    async def execute_hook(tool_call_id, params, signal, on_update):
        log.append("execute")

    def after(ctx, signal):
        log.append("after")
        return {"content": [TextContent(text="patched")]}

    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "x"})),
        tools=[echo_tool(terminate=True, before=execute_hook)],
        transform_context=transform,
        convert_to_llm=convert,
        before_tool_call=before,
        after_tool_call=after,
    )
    await agent.prompt("go")
    assert log == ["transform", "convert", "before", "execute", "after"]
    assert agent.state.messages[-1].content == [TextContent(text="patched")]
    assert stream.call_count == 1  # terminate kept from the original result
    assert rec.first("XE").result.terminate is True


async def test_s56_continue_after_terminating_batch():
    agent, stream, rec = new_agent(
        asst_tools(call("t1", "echo", {"value": "hello"})), tools=[echo_tool(terminate=True)]
    )
    await agent.prompt("go")
    rec.clear()
    stream.add(asst("after tools"))
    result = await agent.continue_()
    assert result is None
    assert rec.types == seq("AS TS MS ME TE AE")
    assert rec.trace() == ["AS", "TS", "MS(assistant)", "ME(assistant)", "TE", "AE"]
    assert roles(agent.state.messages) == ["user", "assistant", "toolResult", "assistant"]
    assert roles(stream.calls[1].messages) == ["user", "assistant", "toolResult"]


async def test_tool_result_content_images_pass_through():
    from py_agent.ai.types import ImageContent

    image = ImageContent(data="AAAA", mime_type="image/png")

    async def execute(tool_call_id, params, signal, on_update):
        return AgentToolResult(content=[TextContent(text="see image"), image], details=None)

    agent, _, _ = new_agent(asst_tools(call("t1", "shot")), asst("ok"), tools=[simple_tool("shot", execute)])
    await agent.prompt("go")
    assert agent.state.messages[2].content == [TextContent(text="see image"), image]


async def test_s42_after_tool_call_empty_content_replaces_content():
    agent, _, rec = new_agent(
        asst_tools(call("t1", "raw", {})),
        asst("ok"),
        tools=[raw_tool()],
        after_tool_call=lambda ctx, signal: {"content": [], "details": None},
    )
    await agent.prompt("go")
    message = agent.state.messages[2]
    assert message.content == []  # an empty list is a value, not "not given"
    assert message.details == {"v": 1}  # None means "keep"
    assert rec.first("XE").result.content == []
