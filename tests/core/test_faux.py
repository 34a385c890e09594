"""The faux provider (``py_agent.ai.faux``). Expected numbers were produced by running pi-ai 0.79.10's
``registerFauxProvider`` on the same scripted conversations in Node."""

import asyncio

import pytest
from helpers import ECHO_SCHEMA, Recorder, echo_tool, roles, seq, settle

from py_agent import Agent
from py_agent.ai.abort import AbortController
from py_agent.ai.faux import (
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
)
from py_agent.ai.registry import get_api_provider, stream_simple
from py_agent.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from py_agent.core.types import AgentTool


def usage(input, output, cache_read=0, cache_write=0):
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


async def run(faux, context, options=None):
    stream = stream_simple(faux.get_model(), context, options)
    events = [event async for event in stream]
    return events, await stream.result()


def deltas(events):
    return [event.delta for event in events if hasattr(event, "delta")]


def one_token():
    return register_faux_provider(token_size={"min": 1, "max": 1})


async def test_faux_registration_and_default_model():
    faux = register_faux_provider()
    try:
        model = faux.get_model()
        assert model.id == "faux-1"
        assert model.name == "Faux Model"
        assert model.api == faux.api and faux.api.startswith("faux:")
        assert model.provider == "faux"
        assert model.base_url == "http://localhost:0"
        assert model.reasoning is False
        assert model.input == ["text", "image"]
        assert model.context_window == 128000
        assert model.max_tokens == 16384
        assert faux.models == [model]
        assert get_api_provider(faux.api) is not None
        other = register_faux_provider()
        assert other.api != faux.api
        other.unregister()
    finally:
        faux.unregister()


async def test_faux_custom_api_provider_and_models():
    faux = register_faux_provider(
        api="custom-api",
        provider="custom",
        models=[
            {"id": "m1"},
            {
                "id": "m2",
                "name": "Model Two",
                "reasoning": True,
                "contextWindow": 1000,
                "maxTokens": 10,
                "input": ["text"],
            },
        ],
    )
    try:
        assert faux.get_model().id == "m1"
        assert faux.get_model().name == "m1"
        m2 = faux.get_model("m2")
        assert (m2.name, m2.reasoning, m2.context_window, m2.max_tokens, m2.input) == (
            "Model Two",
            True,
            1000,
            10,
            ["text"],
        )
        assert m2.api == "custom-api" and m2.provider == "custom"
        assert faux.get_model("nope") is None
        faux.set_responses([faux_assistant_message("hi")])
        _events, final = await run(faux, Context(messages=[UserMessage(content="x", timestamp=1)]))
        assert (final.api, final.provider, final.model) == ("custom-api", "custom", "m1")
    finally:
        faux.unregister()


def test_faux_helpers():
    assert faux_text("hi") == TextContent(text="hi")
    assert faux_thinking("hmm") == ThinkingContent(thinking="hmm")
    call = faux_tool_call("echo", {"value": "x"}, id="c1")
    assert call == ToolCall(id="c1", name="echo", arguments={"value": "x"})
    generated = faux_tool_call("echo", {})
    assert generated.id.startswith("tool:")
    assert faux_tool_call("echo", {}).id != generated.id
    message = faux_assistant_message("hello")
    assert message.content == [TextContent(text="hello")]
    assert (message.api, message.provider, message.model) == ("faux", "faux", "faux-1")
    assert message.stop_reason == "stop"
    assert message.error_message is None
    assert message.usage == Usage()
    assert isinstance(message.timestamp, int)
    message = faux_assistant_message([faux_text("a"), call], stop_reason="toolUse", error_message=None, timestamp=42)
    assert message.content == [TextContent(text="a"), call]
    assert message.stop_reason == "toolUse"
    assert message.timestamp == 42
    single = faux_assistant_message(faux_thinking("t"), stop_reason="error", error_message="bad")
    assert single.content == [ThinkingContent(thinking="t")]
    assert single.error_message == "bad"


async def test_faux_text_chunking_and_usage_estimate():
    faux = one_token()
    faux.set_responses([faux_assistant_message("Hi! How can I help?")])
    events, final = await run(
        faux, Context(system_prompt="You are helpful.", messages=[UserMessage(content="Hello there", timestamp=1)])
    )
    assert [e.type for e in events] == [
        "start", "text_start", "text_delta", "text_delta", "text_delta", "text_delta", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert deltas(events) == ["Hi! ", "How ", "can ", "I he", "lp?"]
    assert events[-2].content == "Hi! How can I help?"
    assert events[-1].reason == "stop"
    assert final.usage.model_dump() == usage(11, 5)
    assert final.content == [TextContent(text="Hi! How can I help?")]
    assert events[-1].message is final
    assert events[0].partial.content == []
    faux.unregister()


async def test_faux_default_token_size_is_3_to_5_tokens():
    faux = register_faux_provider()
    text = "x" * 400
    faux.set_responses([faux_assistant_message(text)])
    events, _final = await run(faux, Context(messages=[UserMessage(content="go", timestamp=1)]))
    pieces = deltas(events)
    assert "".join(pieces) == text
    assert all(12 <= len(piece) <= 20 for piece in pieces[:-1])
    assert 1 <= len(pieces[-1]) <= 20
    faux.unregister()


async def test_faux_session_prompt_cache():
    faux = one_token()
    faux.set_responses([faux_assistant_message("First answer"), faux_assistant_message("Second answer")])
    first_messages = [UserMessage(content="Question one", timestamp=1)]
    _, first = await run(
        faux, Context(system_prompt="sys", messages=first_messages), SimpleStreamOptions(session_id="s1")
    )
    assert first.usage.model_dump() == usage(8, 3, 0, 8)
    second_messages = [
        *first_messages,
        faux_assistant_message("First answer"),
        UserMessage(content="Question two", timestamp=2),
    ]
    events, second = await run(faux, Context(system_prompt="sys", messages=second_messages), {"sessionId": "s1"})
    assert deltas(events) == ["Seco", "nd a", "nswe", "r"]
    assert second.usage.model_dump() == usage(10, 4, 8, 11)
    faux.unregister()


async def test_faux_session_cache_identical_prompt_and_retention_none():
    faux = one_token()
    faux.set_responses([faux_assistant_message(x) for x in "abcd"])
    context = Context(system_prompt="sys", messages=[UserMessage(content="hello", timestamp=1)])
    _, first = await run(faux, context, SimpleStreamOptions(session_id="g"))
    _, second = await run(faux, context, SimpleStreamOptions(session_id="g"))
    assert first.usage.model_dump() == usage(6, 1, 0, 6)
    assert second.usage.model_dump() == usage(0, 1, 6, 0)
    _, third = await run(faux, context, SimpleStreamOptions(session_id="n", cache_retention="none"))
    _, fourth = await run(faux, context, SimpleStreamOptions(session_id="n", cache_retention="none"))
    assert third.usage.model_dump() == usage(6, 1)
    assert fourth.usage.model_dump() == usage(6, 1)
    faux.unregister()


async def test_faux_tool_call_chunking_and_tools_in_usage():
    faux = one_token()
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("echo", {"value": "hi"}, id="c1")], stop_reason="toolUse")]
    )
    tool = AgentTool(name="echo", label="Echo", description="Echo the value back", parameters=ECHO_SCHEMA)
    stream = stream_simple(
        faux.get_model(),
        Context(
            system_prompt="", messages=[UserMessage(content=[TextContent(text="call it")], timestamp=1)], tools=[tool]
        ),
    )
    events = []
    arguments_seen = []
    async for event in stream:
        events.append(event)
        if event.type.startswith("toolcall_"):
            arguments_seen.append(dict(event.partial.content[0].arguments))
    final = await stream.result()
    assert [e.type for e in events] == [
        "start", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_delta",
        "toolcall_end", "done",
    ]  # fmt: skip
    assert deltas(events) == ['{"va', 'lue"', ':"hi', '"}']
    assert arguments_seen == [{}, {}, {}, {}, {}, {"value": "hi"}]  # filled in at toolcall_end
    assert events[-2].tool_call == ToolCall(id="c1", name="echo", arguments={"value": "hi"})
    assert events[-2].partial.content[0].arguments == {"value": "hi"}
    assert events[-1].reason == "toolUse"
    assert final.usage.model_dump() == usage(46, 5)
    faux.unregister()


async def test_faux_mixed_content_and_context_serialization():
    faux = register_faux_provider(token_size={"min": 2, "max": 2})
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("let me think"),
                    faux_text("answer text here"),
                    faux_tool_call("echo", {"value": "x"}, id="c2"),
                ],
                stop_reason="toolUse",
            )
        ]
    )
    messages = [
        UserMessage(
            content=[TextContent(text="look"), ImageContent(data="AAAAAAAA", mime_type="image/png")], timestamp=1
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm"),
                TextContent(text="ok"),
                ToolCall(id="a", name="echo", arguments={"value": "v"}),
            ],
            api="x", provider="y", model="z", stop_reason="toolUse", timestamp=1,
        ),
        ToolResultMessage(
            tool_call_id="a", tool_name="echo", content=[TextContent(text="echoed: v")], is_error=False, timestamp=1
        ),
    ]  # fmt: skip
    events, final = await run(faux, Context(system_prompt="S", messages=messages))
    assert [e.type for e in events] == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end", "text_start", "text_delta",
        "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    assert deltas(events) == ["let me t", "hink", "answer t", "ext here", '{"value"', ':"x"}']
    assert [e.content_index for e in events[1:-1]] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    assert final.usage.model_dump() == usage(26, 12)
    faux.unregister()


async def test_faux_usage_counts_utf16_units():
    faux = one_token()
    faux.set_responses([faux_assistant_message("héllo wörld 😀 ok")])
    events, final = await run(faux, Context(messages=[UserMessage(content="naïve 😀", timestamp=1)]))
    assert "".join(deltas(events)) == "héllo wörld 😀 ok"
    assert final.usage.model_dump() == usage(4, 5)
    faux.unregister()


async def test_faux_no_more_responses_queued():
    faux = register_faux_provider()
    events, final = await run(faux, Context(system_prompt="sys", messages=[UserMessage(content="hello", timestamp=1)]))
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error"
    assert final.stop_reason == "error"
    assert final.error_message == "No more faux responses queued"
    assert final.content == []
    assert final.usage.model_dump() == usage(6, 0)
    assert faux.state.call_count == 1
    faux.unregister()


async def test_faux_scripted_error_message_and_raising_step():
    faux = one_token()

    def failing(context, options, state, model):
        raise RuntimeError("step failed")

    faux.set_responses([faux_assistant_message("partial text", stop_reason="error", error_message="boom"), failing])
    context = Context(messages=[UserMessage(content="hello", timestamp=1)])
    events, final = await run(faux, context)
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "error",
    ]
    assert events[-1].reason == "error"
    assert final.stop_reason == "error" and final.error_message == "boom"
    assert final.content == [TextContent(text="partial text")]
    assert final.usage.model_dump() == usage(3, 3)
    events, final = await run(faux, context)
    assert [e.type for e in events] == ["error"]
    assert final.error_message == "step failed"
    assert final.content == []
    assert final.usage == Usage()
    faux.unregister()


async def test_faux_queue_management():
    faux = one_token()
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    assert faux.pending_response_count() == 2
    faux.append_responses([faux_assistant_message("c")])
    assert faux.pending_response_count() == 3
    faux.set_responses([faux_assistant_message("z")])
    assert faux.pending_response_count() == 1
    _, final = await run(faux, Context(messages=[UserMessage(content="x", timestamp=1)]))
    assert final.content == [TextContent(text="z")]
    assert faux.pending_response_count() == 0
    assert faux.state.call_count == 1
    faux.unregister()


async def test_faux_final_message_is_a_clone():
    faux = one_token()
    scripted = faux_assistant_message("hello")
    faux.set_responses([scripted])
    _, final = await run(faux, Context(messages=[UserMessage(content="x", timestamp=1)]))
    assert final is not scripted
    assert scripted.api == "faux" and scripted.usage == Usage()
    assert final.api == faux.api
    assert final.timestamp == scripted.timestamp
    faux.unregister()


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_faux_callable_steps(asynchronous):
    faux = one_token()
    seen = []

    def step(context, options, state, model):
        seen.append((context, options, state.call_count, model))
        return faux_assistant_message(f"call {state.call_count}")

    async def async_step(context, options, state, model):
        await asyncio.sleep(0)
        return step(context, options, state, model)

    faux.set_responses([async_step if asynchronous else step, faux_assistant_message("static")])
    context = Context(system_prompt="sys", messages=[UserMessage(content="x", timestamp=1)])
    options = SimpleStreamOptions(session_id="abc")
    _, final = await run(faux, context, options)
    assert final.content == [TextContent(text="call 1")]
    assert seen[0][0] is context
    assert seen[0][1] is options
    assert seen[0][2] == 1
    assert seen[0][3] is faux.get_model()
    _, final = await run(faux, context)
    assert final.content == [TextContent(text="static")]
    assert faux.state.call_count == 2
    faux.unregister()


async def test_faux_abort_mid_stream():
    faux = one_token()
    text = "abcdefghijklmnopqrstuvwxyz"
    faux.set_responses([faux_assistant_message(text)])
    controller = AbortController()
    stream = stream_simple(
        faux.get_model(),
        Context(messages=[UserMessage(content="x", timestamp=1)]),
        SimpleStreamOptions(signal=controller.signal),
    )
    events = []
    async for event in stream:
        events.append(event)
        if event.type == "text_delta":
            controller.abort()
    final = await stream.result()
    assert events[-1].type == "error"
    assert events[-1].reason == "aborted"
    assert events[-1].error is final
    types = [e.type for e in events]
    assert types[:3] == ["start", "text_start", "text_delta"]
    assert "text_end" not in types and "done" not in types
    assert final.stop_reason == "aborted"
    assert final.error_message == "Request was aborted"
    streamed = "".join(deltas(events))
    assert final.content == [TextContent(text=streamed)]
    assert len(streamed) < len(text)
    faux.unregister()


async def test_faux_aborted_before_start_emits_no_start():
    faux = one_token()
    faux.set_responses([faux_assistant_message("abcdefgh"), faux_assistant_message("next")])
    controller = AbortController()
    controller.abort()
    responses = []
    options = SimpleStreamOptions(
        signal=controller.signal, on_response=lambda r, m: responses.append((r.status, r.headers, m.id))
    )
    events, final = await run(
        faux, Context(system_prompt="sys", messages=[UserMessage(content="hello", timestamp=1)]), options
    )
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "aborted"
    assert final.content == []
    assert final.stop_reason == "aborted"
    assert final.error_message == "Request was aborted"
    assert final.usage.model_dump() == usage(6, 2)
    assert faux.state.call_count == 1
    assert faux.pending_response_count() == 1  # as pi: the scripted response was consumed
    assert responses == [(200, {}, "faux-1")]
    faux.unregister()


async def test_faux_on_response_is_awaited_when_async():
    faux = one_token()
    faux.set_responses([faux_assistant_message("ok")])
    order = []

    async def on_response(response, model):
        await asyncio.sleep(0)
        order.append("on_response")

    stream = stream_simple(faux.get_model(), Context(messages=[]), SimpleStreamOptions(on_response=on_response))
    async for event in stream:
        order.append(event.type)
    assert order[0] == "on_response"
    faux.unregister()


async def test_faux_tokens_per_second_pacing():
    """With pacing, deltas wait on timers; without, they only yield to the loop."""
    unpaced = one_token()
    unpaced.set_responses([faux_assistant_message("abcdefgh")])
    # Slow enough that a loaded machine's 30 turns of the loop do not outlast the first timer.
    paced = register_faux_provider(tokens_per_second=4, token_size={"min": 1, "max": 1})
    paced.set_responses([faux_assistant_message("abcdefgh")])
    context = Context(messages=[UserMessage(content="x", timestamp=1)])

    received = {"paced": [], "unpaced": []}

    async def consume(name, faux):
        async for event in stream_simple(faux.get_model(), context):
            received[name].append(event.type)

    tasks = [asyncio.create_task(consume("paced", paced)), asyncio.create_task(consume("unpaced", unpaced))]
    await settle(30)
    assert received["unpaced"][-1] == "done"
    assert "text_delta" not in received["paced"]  # the first chunk waits 250 ms
    await asyncio.gather(*tasks)
    assert received["paced"] == received["unpaced"] == [
        "start", "text_start", "text_delta", "text_delta", "text_end", "done",
    ]  # fmt: skip
    paced.unregister()
    unpaced.unregister()


async def test_faux_unregister():
    faux = register_faux_provider()
    model = faux.get_model()
    faux.unregister()
    assert get_api_provider(faux.api) is None
    with pytest.raises(Exception) as info:
        stream_simple(model, Context(messages=[]))
    assert str(info.value) == f"No API provider registered for api: {faux.api}"
    faux.unregister()  # harmless


async def test_faux_agent_conversation_matches_reference():
    """Agent with the default stream function (stream_simple) driving a faux model; event sequence
    and usage numbers as pi-agent-core 0.79.10 produces them."""
    faux = one_token()
    seen = []

    def second(context, options, state, model):
        seen.append((roles(context.messages), options.session_id, state.call_count, model.id))
        return faux_assistant_message("All done.")

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_thinking("plan"), faux_text("I will call"), faux_tool_call("echo", {"value": "hello"}, id="t1")],
                stop_reason="toolUse",
            ),
            second,
        ]
    )
    agent = Agent(
        initial_state={"model": faux.get_model(), "system_prompt": "Be brief.", "tools": [echo_tool()]},
        session_id="sess-1",
    )
    rec = Recorder()
    agent.subscribe(rec)
    await agent.prompt("Say hello")
    labelled = [
        e.type + (":" + e.assistant_message_event.type if e.type == "message_update" else "") for e in rec.events
    ]
    assert labelled == [
        "agent_start", "turn_start", "message_start", "message_end", "message_start",
        "message_update:thinking_start", "message_update:thinking_delta", "message_update:thinking_end",
        "message_update:text_start", "message_update:text_delta", "message_update:text_delta",
        "message_update:text_delta", "message_update:text_end", "message_update:toolcall_start",
        "message_update:toolcall_delta", "message_update:toolcall_delta", "message_update:toolcall_delta",
        "message_update:toolcall_delta", "message_update:toolcall_delta", "message_update:toolcall_end",
        "message_end", "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_update:text_start", "message_update:text_delta",
        "message_update:text_delta", "message_update:text_delta", "message_update:text_end", "message_end",
        "turn_end", "agent_end",
    ]  # fmt: skip
    assert seen == [(["user", "assistant", "toolResult"], "sess-1", 2, "faux-1")]
    messages = agent.state.messages
    assert roles(messages) == ["user", "assistant", "toolResult", "assistant"]
    assert messages[1].usage.model_dump() == usage(51, 10, 0, 51)
    assert messages[3].usage.model_dump() == usage(62, 3, 9, 63)
    assert (messages[1].api, messages[1].provider, messages[1].model) == (faux.api, "faux", "faux-1")
    assert messages[2].content == [TextContent(text="echoed: hello")]
    assert faux.state.call_count == 2
    assert faux.pending_response_count() == 0
    faux.unregister()


async def test_faux_agent_abort_mid_stream():
    faux = one_token()
    faux.set_responses([faux_assistant_message("a long answer that will be cut short by the abort")])
    agent = Agent(initial_state={"model": faux.get_model()})
    rec = Recorder()
    agent.subscribe(rec)

    def abort_once(event, signal):
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta" and not signal.aborted:
            agent.abort()

    agent.subscribe(abort_once)
    await agent.prompt("go")
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.error_message == "Request was aborted"
    assert agent.state.error_message == "Request was aborted"
    assert rec.types[-3:] == seq("ME TE AE")
    assert "text_end" not in [e.assistant_message_event.type for e in rec.of("MU")]
    faux.unregister()


async def test_faux_agent_with_unregistered_provider_fails_the_run():
    faux = register_faux_provider()
    model = faux.get_model()
    faux.unregister()
    agent = Agent(initial_state={"model": model})
    rec = Recorder()
    agent.subscribe(rec)
    await agent.prompt("hi")
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert agent.state.error_message == f"No API provider registered for api: {faux.api}"
    assert agent.state.messages[-1].stop_reason == "error"


async def test_faux_chunks_are_sized_in_utf16_units():
    """pi slices text by JavaScript string length (UTF-16 code units): an astral character counts
    as two. (Where pi would cut a surrogate pair in half a Python port cannot follow; this text
    has no such cut.)"""
    faux = one_token()
    faux.set_responses([faux_assistant_message("héllo wörld 😀 ok")])
    events, _ = await run(faux, Context(messages=[UserMessage(content="naïve 😀", timestamp=1)]))
    assert deltas(events) == ["héll", "o wö", "rld ", "😀 o", "k"]
    faux.unregister()
