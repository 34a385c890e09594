"""Prompt flow, hooks on the LLM path, reducer (test_s09 to test_s18)."""

import pytest
from helpers import (
    MODEL,
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
from pydantic import BaseModel

from py_agent import Agent
from py_agent.ai.types import ImageContent, TextContent, UserMessage


async def test_s09_plain_text_reply():
    agent, stream, rec = new_agent(asst("Hi there!"), initial_state={"system_prompt": "sys"})
    result = await agent.prompt("Hello")
    assert result is None
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.trace() == ["AS", "TS", "MS(user)", "ME(user)", "MS(assistant)", "ME(assistant)", "TE", "AE"]
    messages = agent.state.messages
    assert roles(messages) == ["user", "assistant"]
    assert messages[0].content == [TextContent(text="Hello")]
    assert isinstance(messages[0].timestamp, int) and messages[0].timestamp > 0
    assert messages[1].content == [TextContent(text="Hi there!")]
    assert messages[1].stop_reason == "stop"
    turn_end = rec.first("TE")
    assert turn_end.message is messages[1]
    assert turn_end.tool_results == []
    agent_end = rec.first("AE")
    assert len(agent_end.messages) == len(messages)
    assert all(a is b for a, b in zip(agent_end.messages, messages, strict=True))
    assert stream.call_count == 1
    first = stream.calls[0]
    assert first.system_prompt == "sys"
    assert first.messages == [messages[0]]
    assert first.messages[0] is messages[0]
    assert first.tools == []
    assert first.model is MODEL
    assert agent.state.is_streaming is False
    assert agent.state.streaming_message is None
    assert agent.state.error_message is None
    assert agent.signal is None


async def test_s09_prompt_message_objects_identity():
    agent, _, rec = new_agent(asst("ok"))
    await agent.prompt("Hello")
    ms_user, ms_asst = rec.of("MS")
    me_user, me_asst = rec.of("ME")
    # prompt messages: the same object in MS, ME and the transcript
    assert ms_user.message is me_user.message is agent.state.messages[0]
    # the assistant ME carries the final message; the done-only MS carries a copy of it
    assert me_asst.message is agent.state.messages[1]
    assert ms_asst.message is not me_asst.message
    assert ms_asst.message == me_asst.message


async def test_s10_streaming_updates():
    seen = []
    agent, _, rec = new_agent(asst("abc"), streaming=True, chunk_chars=1)

    def check(event, signal):
        if event.type == "message_update":
            seen.append(agent.state.streaming_message is event.message)
            assert event.message.role == "assistant"

    agent.subscribe(check)
    await agent.prompt("Hello")
    assert rec.types == seq("AS TS MS ME MS MU MU MU MU MU ME TE AE")
    updates = rec.of("MU")
    assert [u.assistant_message_event.type for u in updates] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
    ]
    assert [u.assistant_message_event.delta for u in updates[1:4]] == ["a", "b", "c"]
    assert updates[4].assistant_message_event.content == "abc"
    assert seen == [True] * 5
    final = rec.of("ME")[1].message
    assert final is agent.state.messages[-1]
    assert all(u.message is not final for u in updates)
    assert all(u.message is not u.assistant_message_event.partial for u in updates)
    assert agent.state.streaming_message is None
    assert final.content == [TextContent(text="abc")]


async def test_s10_streaming_message_tracks_every_role():
    agent, _, _ = new_agent(asst("ok"))
    seen = []

    def check(event, signal):
        if event.type in ("message_start", "message_end"):
            current = agent.state.streaming_message
            seen.append((event.type, None if current is None else current.role))

    agent.subscribe(check)
    await agent.prompt("hi")
    assert seen == [
        ("message_start", "user"),
        ("message_end", None),
        ("message_start", "assistant"),
        ("message_end", None),
    ]


async def test_s11_prompt_with_images():
    img = ImageContent(data="aGVsbG8=", mime_type="image/png")
    agent, stream, _ = new_agent(asst("ok"), asst("ok"), asst("ok"))
    await agent.prompt("look", [img])
    assert agent.state.messages[0].content == [TextContent(text="look"), img]
    await agent.prompt("x", [])
    assert agent.state.messages[2].content == [TextContent(text="x")]
    await agent.prompt("y", None)
    assert agent.state.messages[4].content == [TextContent(text="y")]
    assert stream.calls[0].messages[0].content[1] is img


async def test_s12_prompt_list_of_messages():
    m1, m2 = user("one"), user("two")
    agent, stream, rec = new_agent(asst("ok"))
    await agent.prompt([m1, m2])
    assert rec.types == seq("AS TS MS ME MS ME MS ME TE AE")
    assert [e.message for e in rec.of("MS")[:2]] == [m1, m2]
    assert rec.of("MS")[0].message is m1 and rec.of("MS")[1].message is m2
    assert agent.state.messages[0] is m1
    assert agent.state.messages[1] is m2
    assert stream.calls[0].messages == [m1, m2]
    assert rec.first("AE").messages[:2] == [m1, m2]


async def test_s12_prompt_single_message():
    m1 = user("one")
    agent, stream, rec = new_agent(asst("ok"))
    await agent.prompt(m1)
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    assert rec.first("MS").message is m1
    assert agent.state.messages[0] is m1
    assert stream.calls[0].messages == [m1]


async def test_s12_prompt_empty_list_calls_model_on_existing_transcript():
    first = user("earlier")
    agent, stream, rec = new_agent(asst("ok"), initial_state={"messages": [first]})
    await agent.prompt([])
    assert rec.types == seq("AS TS MS ME TE AE")
    assert stream.calls[0].messages == [first]
    assert roles(agent.state.messages) == ["user", "assistant"]


async def test_s13_default_convert_to_llm_drops_custom_messages():
    note = {"role": "notification", "text": "n", "timestamp": 1}
    agent, stream, _ = new_agent(asst("ok"), initial_state={"messages": [note]})
    await agent.prompt("hi")
    llm_messages = stream.calls[0].messages
    assert len(llm_messages) == 1
    assert llm_messages[0].role == "user"
    assert llm_messages[0].content == [TextContent(text="hi")]
    assert roles(agent.state.messages) == ["notification", "user", "assistant"]
    assert agent.state.messages[0] is note


async def test_s13_custom_pydantic_message_is_carried_and_dropped():
    class Notice(BaseModel):
        role: str = "notice"
        text: str
        timestamp: int = 0

    notice = Notice(text="hello")
    agent, stream, rec = new_agent(asst("ok"))
    await agent.prompt([notice, user("q")])
    assert rec.trace()[:6] == ["AS", "TS", "MS(notice)", "ME(notice)", "MS(user)", "ME(user)"]
    assert agent.state.messages[0] is notice
    assert roles(stream.calls[0].messages) == ["user"]


@pytest.mark.parametrize("async_hooks", [False, True])
async def test_s14_transform_context_before_convert_to_llm(async_hooks):
    log = []
    prior = [user("u1"), asst("a1"), user("u2"), asst("a2")]
    agent = None
    transform_got = []
    convert_got = []

    def transform_sync(messages, signal):
        log.append("transform")
        transform_got.append(len(messages))
        log.append(signal is agent.signal and signal is not None and not signal.aborted)
        return messages[-2:]

    async def transform_async(messages, signal):
        return transform_sync(messages, signal)

    def convert_sync(messages):
        log.append("convert")
        convert_got.append(len(messages))
        return list(messages)

    async def convert_async(messages):
        return convert_sync(messages)

    stream = ScriptedStream(asst("ok"))

    def stream_fn(model, context, options):
        log.append("stream")
        return stream(model, context, options)

    agent = Agent(
        stream_fn=stream_fn,
        initial_state={"model": MODEL, "messages": prior},
        transform_context=transform_async if async_hooks else transform_sync,
        convert_to_llm=convert_async if async_hooks else convert_sync,
    )
    await agent.prompt("new")
    assert log == ["transform", True, "convert", "stream"]
    assert transform_got == [5]
    assert convert_got == [2]
    assert len(stream.calls[0].messages) == 2
    assert stream.calls[0].messages[-1].content == [TextContent(text="new")]
    # the transcript is not affected by the transform
    assert roles(agent.state.messages) == ["user", "assistant", "user", "assistant", "user", "assistant"]


@pytest.mark.parametrize("async_hook", [False, True])
async def test_s15_get_api_key_per_call(async_hook):
    keys = iter(["key-1", "key-2"])
    asked = []

    def get_key(provider):
        asked.append(provider)
        return next(keys)

    async def get_key_async(provider):
        return get_key(provider)

    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})),
        asst("done"),
        tools=[echo_tool()],
        get_api_key=get_key_async if async_hook else get_key,
    )
    await agent.prompt("go")
    assert asked == ["openai", "openai"]
    assert [c.options.api_key for c in stream.calls] == ["key-1", "key-2"]


async def test_s15_empty_or_missing_api_key_gives_none():
    agent, stream, _ = new_agent(asst("ok"), get_api_key=lambda provider: "")
    await agent.prompt("hi")
    assert stream.calls[0].options.api_key is None

    agent, stream, _ = new_agent(asst("ok"), get_api_key=lambda provider: None)
    await agent.prompt("hi")
    assert stream.calls[0].options.api_key is None

    agent, stream, _ = new_agent(asst("ok"))
    await agent.prompt("hi")
    assert stream.calls[0].options.api_key is None


async def test_s16_stream_options_forwarding():
    on_payload = lambda payload, model: None  # noqa: E731
    on_response = lambda response, model: None  # noqa: E731
    signal_at_call = []
    stream = ScriptedStream(asst("one"), asst("two"))

    def stream_fn(model, context, options):
        signal_at_call.append((options.signal is agent.signal, options.signal.aborted))
        return stream(model, context, options)

    agent = Agent(
        stream_fn=stream_fn,
        session_id="session-abc",
        transport="websocket",
        thinking_budgets={"low": 512},
        max_retry_delay_ms=1234,
        on_payload=on_payload,
        on_response=on_response,
        initial_state={"model": MODEL, "thinking_level": "medium"},
    )
    await agent.prompt("first")
    options = stream.calls[0].options
    assert options.session_id == "session-abc"
    assert options.transport == "websocket"
    assert options.thinking_budgets == {"low": 512}
    assert options.max_retry_delay_ms == 1234
    assert options.reasoning == "medium"
    assert options.on_payload is on_payload
    assert options.on_response is on_response
    assert options.api_key is None
    assert signal_at_call == [(True, False)]
    assert options.signal is not None

    agent.session_id = "session-def"
    agent.state.thinking_level = "off"
    await agent.prompt("second")
    options = stream.calls[1].options
    assert options.session_id == "session-def"
    assert options.reasoning is None
    assert stream.calls[1].options.signal is not stream.calls[0].options.signal


@pytest.mark.parametrize("level", ["minimal", "low", "high", "xhigh"])
async def test_s16_reasoning_is_the_thinking_level(level):
    agent, stream, _ = new_agent(asst("ok"), initial_state={"thinking_level": level})
    await agent.prompt("hi")
    assert stream.calls[0].options.reasoning == level


async def test_s16_settings_snapshotted_at_run_start():
    """Changing settings mid-run affects only the next run."""
    agent, stream, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})), asst("done"), tools=[echo_tool()], session_id="s1"
    )

    def change(event, signal):
        if event.type == "tool_execution_start":
            agent.session_id = "s2"
            agent.state.model = MODEL.model_copy(update={"id": "other"})
            agent.state.system_prompt = "changed"
            agent.state.tools = []

    agent.subscribe(change)
    await agent.prompt("go")
    assert [c.options.session_id for c in stream.calls] == ["s1", "s1"]
    assert [c.model.id for c in stream.calls] == ["mock", "mock"]
    assert [c.system_prompt for c in stream.calls] == ["", ""]
    assert [len(c.tools) for c in stream.calls] == [1, 1]
    assert agent.state.messages[2].is_error is False  # the tool still ran


async def test_s17_reducer_runs_before_listeners():
    agent, _, _ = new_agent(asst("ok"))
    at_start = []
    at_end = []

    def check(event, signal):
        if event.type == "message_start":
            at_start.append(agent.state.streaming_message.role)
        elif event.type == "message_end":
            at_end.append(agent.state.messages[-1] is event.message)

    agent.subscribe(check)
    await agent.prompt("hi")
    assert at_start == ["user", "assistant"]
    assert at_end == [True, True]


async def test_s18_barrier_before_tool_preflight():
    checks = []
    agent = None

    def before(ctx, signal):
        assistant = agent.state.messages[-1]
        checks.append(assistant.role == "assistant")
        checks.append(any(block is ctx.tool_call for block in assistant.content))
        checks.append(ctx.context.messages[-1] is assistant)
        checks.append(ctx.assistant_message is assistant)

    agent, _, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})), asst("done"), tools=[echo_tool()], before_tool_call=before
    )
    await agent.prompt("go")
    assert checks == [True, True, True, True]


async def test_prompt_user_message_given_as_dict():
    """A pi-JSON dict prompt is accepted (kept as is or turned into its model, equal either way);
    one object travels through message_start, message_end, the transcript and the LLM context."""
    message = {"role": "user", "content": "from dict", "timestamp": 5}
    agent, stream, rec = new_agent(asst("ok"))
    await agent.prompt(message)
    assert rec.types == seq("AS TS MS ME MS ME TE AE")
    stored = agent.state.messages[0]
    assert as_json(stored) == message
    assert rec.of("MS")[0].message is stored and rec.of("ME")[0].message is stored
    assert stream.calls[0].messages[0] is stored


def as_json(message):
    return message.model_dump() if isinstance(message, BaseModel) else message


async def test_prompt_user_message_model():
    message = UserMessage(content=[TextContent(text="typed")], timestamp=7)
    agent, stream, _ = new_agent(asst("ok"))
    await agent.prompt(message)
    assert agent.state.messages[0] is message
    assert stream.calls[0].messages[0] is message


async def test_s14_transform_context_receives_the_live_loop_list():
    """Within a run the hook gets the loop context's own list (not a copy, not the transcript)."""
    received = []

    def transform(messages, signal):
        received.append(messages)
        return list(messages)

    agent, _, _ = new_agent(
        asst_tools(call("t1", "echo", {"value": "a"})), asst("done"), tools=[echo_tool()], transform_context=transform
    )
    await agent.prompt("go")
    assert len(received) == 2
    assert received[0] is received[1]
    assert received[0] is not agent.state.messages
    assert roles(received[0]) == ["user", "assistant", "toolResult", "assistant"]


async def test_s11_images_given_as_pi_json():
    agent, _stream, _ = new_agent(asst("ok"))
    await agent.prompt("look", [{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    content = agent.state.messages[0].content
    assert content[0] == TextContent(text="look")
    assert content[1].type == "image"
    image = content[1]
    assert (getattr(image, "data", None) or image["data"]) == "AAAA"
    dumped = agent.state.messages[0].model_dump()
    assert dumped["content"][1] == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
