"""The payload cache (py_agent/ai/providers/payload_cache.py): a request body built from the cache
is the one an uncached build writes, byte for byte, for every wire API, as a conversation grows the
way an agent's does; and the cache is used (earlier messages are not converted or written again).

The uncached body is the driver's own path for a request with an ``on_payload`` hook (no cache,
the payload written whole by ``json_stringify``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

# Imported, not importorskip'ed: CI must never skip these (hypothesis is in the test extras).
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_helpers import Reply, _model, f_ant, f_chat, f_ds, f_gem, f_gem3, f_or, f_resp, run_stream
from test_e2e_httpx import echo_tool
from test_e2e_httpx import model_for as e2e_model

from py_agent.ai import stream_simple
from py_agent.ai._util import json_stringify
from py_agent.ai.providers import anthropic, google, openai_completions, openai_responses, payload_cache
from py_agent.ai.transport import HttpRequest
from py_agent.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from py_agent.core import Agent
from py_agent.testing.mock_server import MockProviderServer
from py_agent.transports.httpx import HttpxTransport

BUDGET = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

MODELS: list[Model] = [
    f_chat(),
    f_chat().model_copy(update={"input": ["text"]}),  # the same model without images: another key
    f_or("anthropic/claude-sonnet-4"),  # OpenRouter's Anthropic cache marks (copied, never in place)
    _model(
        "local-model",
        "openai-completions",
        "local",
        "http://localhost:8080/v1",
        True,
        vision=False,
        compat={
            "cacheControlFormat": "anthropic",
            "requiresAssistantAfterToolResult": True,
            "requiresToolResultName": True,
            "requiresThinkingAsText": True,
        },
    ),
    f_ds(),
    f_resp(),
    _model("gpt-5-mini", "openai-responses", "azure", "https://example.com/v1", True, vision=False),
    f_ant(),
    _model(
        "claude-x", "anthropic-messages", "proxy", "https://example.com", True, compat={"allowEmptySignature": True}
    ),
    f_gem(),
    f_gem3(),
    _model("claude-on-vertex", "google-generative-ai", "google", "https://example.com/v1beta", False, vision=False),
]
SOURCES = [(m.api, m.provider, m.id) for m in MODELS] + [("openai-completions", "elsewhere", "other-model")]
CALL_IDS = ["call_1", "call_1|fc_1", "toolu_01", "id with space|item/x", "call_2|" + "x" * 70, "c"]
TEXTS = [
    "",
    " ",
    "hi",
    "Héllo 🌍 wörld",
    "lone \ud800 surrogate",
    "line\nbreak",
    "(image omitted: model does not support images)",
]
IMAGE = ImageContent(data="aGk=", mime_type="image/png")
TOOL = Tool(
    name="read", description="Read a file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}
)

texts = st.sampled_from(TEXTS)
values = st.one_of(
    st.integers(-(10**22), 10**22),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)
arguments = st.dictionaries(st.sampled_from(["path", "n", "x"]), values | st.lists(values, max_size=2), max_size=3)

text_blocks = st.builds(
    lambda text, signature, extra: TextContent(text=text, text_signature=signature, **extra),
    texts,
    st.sampled_from([None, "sig", '{"v":1,"id":"msg_1","phase":"final_answer"}', "m" * 70]),
    st.sampled_from([{}, {"citations": [1.5]}]),
)
thinking_blocks = st.builds(
    lambda text, signature, redacted: ThinkingContent(thinking=text, thinking_signature=signature, redacted=redacted),
    texts,
    st.sampled_from([None, "", "c2lnbmF0dXJl", '{"type":"reasoning","id":"rs_1"}', "reasoning_content"]),
    st.sampled_from([None, None, True]),
)
tool_calls = st.builds(
    lambda id, arguments, signature: ToolCall(id=id, name="read", arguments=arguments, thought_signature=signature),
    st.sampled_from(CALL_IDS),
    arguments,
    st.sampled_from([None, "c2ln", '{"type":"reasoning.encrypted","id":"call_1","data":"e"}']),
)


def _assistant(source: tuple[str, str, str], content: list[Any], stop: str) -> AssistantMessage:
    api, provider, model = source
    return AssistantMessage(content=content, api=api, provider=provider, model=model, stop_reason=stop, timestamp=2)


assistants = st.builds(
    _assistant,
    st.sampled_from(SOURCES),
    st.lists(st.one_of(text_blocks, thinking_blocks, tool_calls), max_size=4),
    st.sampled_from(["stop", "toolUse", "toolUse", "length", "error", "aborted"]),
)
users = st.builds(
    lambda content: UserMessage(content=content, timestamp=1),
    texts | st.lists(st.one_of(st.builds(TextContent, text=texts), st.just(IMAGE)), max_size=3),
)
results = st.builds(
    lambda id, content, error: ToolResultMessage(
        tool_call_id=id, tool_name="read", content=content, is_error=error, timestamp=3
    ),
    st.sampled_from(CALL_IDS),
    st.lists(st.one_of(st.builds(TextContent, text=texts), st.just(IMAGE), st.just(IMAGE)), max_size=2),
    st.booleans(),
)
# A message given as pi's JSON (a mapping: never cached past it).
mappings = st.just({"role": "user", "content": "from a mapping", "timestamp": 4})


@st.composite
def turns(draw: st.DrawFn) -> list[Any]:
    """A reply and results for some of its calls (in any order, some twice), at times one more."""
    reply = draw(assistants)
    ids = [block.id for block in reply.content if isinstance(block, ToolCall)]
    answered = draw(st.lists(st.sampled_from(ids), max_size=3)) if ids else []
    turn: list[Any] = [reply]
    for id in answered + draw(st.lists(st.sampled_from(CALL_IDS), max_size=1)):
        turn.append(draw(results).model_copy(update={"tool_call_id": id}))
    return turn


messages = st.one_of(st.lists(st.one_of(users, users, assistants, results, mappings), max_size=2), turns())
options = st.fixed_dictionaries(
    {
        "cache_retention": st.sampled_from([None, "none", "long"]),
        "session_id": st.sampled_from([None, "session-1"]),
        "temperature": st.sampled_from([None, 0.7]),
    }
)


@dataclass
class Step:
    """One request of a growing conversation."""

    added: list[Any]
    model: int
    """Its index in MODELS: the model may change between requests."""
    options: dict[str, Any]
    system_prompt: str | None = None
    tools: bool = False
    back: int = 0
    """Messages dropped from the end first (a branch: the user went back)."""
    renew: str = ""
    """``"copy"``: user messages given as new objects written the same (as the session's summaries
    are); ``"edit"``: the last user message given as another one (an edit, as a branch makes)."""


steps = st.lists(
    st.builds(
        Step,
        st.lists(messages, max_size=4).map(lambda pieces: [message for piece in pieces for message in piece]),
        st.sampled_from(range(len(MODELS))),
        options,
        st.sampled_from([None, "You are helpful."]),
        st.booleans(),
        st.sampled_from([0, 0, 0, 1, 3]),
        st.sampled_from(["", "", "copy", "edit"]),
    ),
    min_size=1,
    max_size=6,
)


async def _body(model: Model, context: Context, **options: Any) -> bytes:
    _, _, transport = await run_stream(model, [Reply(chunks=[])], context=context, **options)  # type: ignore[arg-type]
    body = transport.requests[0].body
    assert isinstance(body, bytes)
    return body


def _no_hook(payload: Any, model: Model) -> None:
    return None


async def _conversation(script: list[Step]) -> None:
    payload_cache.clear()
    conversation: list[Any] = []
    for step in script:
        del conversation[len(conversation) - step.back :]
        conversation.extend(step.added)
        messages = [m.model_copy() if step.renew == "copy" and type(m) is UserMessage else m for m in conversation]
        users = [index for index, message in enumerate(messages) if type(message) is UserMessage]
        if step.renew == "edit" and users:
            messages[users[-1]] = UserMessage(content=f"edited {len(messages)}", timestamp=1)
        context = Context(system_prompt=step.system_prompt, messages=messages, tools=[TOOL] if step.tools else None)
        model = MODELS[step.model]
        cached = await _body(model, context, **step.options)
        uncached = await _body(model, context, on_payload=_no_hook, **step.options)
        assert cached.decode() == uncached.decode()
        # Once more, from the cut this request left (nothing new to convert before it).
        assert await _body(model, context, **step.options) == uncached


@BUDGET
@given(steps)
def test_cached_body_is_the_uncached_one(script: list[Step]) -> None:
    asyncio.run(_conversation(script))


def _edge(model: Model, reply: AssistantMessage) -> list[Step]:
    """A call, its result (with an image), ``reply``, then a second result for the same call: the
    two results are one run in the transformed conversation when ``reply`` is dropped or writes
    nothing, which a cut after ``reply`` would split."""
    call = ToolCall(id="call_1", name="read", arguments={"path": "a"})
    first = [
        UserMessage(content="Read a", timestamp=1),
        _assistant((model.api, model.provider, model.id), [call], "toolUse"),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="a"), IMAGE], timestamp=3),
        reply,
    ]
    again = ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[IMAGE], timestamp=3)
    index = MODELS.index(model)
    return [Step(first, index, {}), Step([again], index, {}), Step([again], index, {})]


@pytest.mark.parametrize("model", [MODELS[0], MODELS[3], MODELS[7], MODELS[10]], ids=lambda m: f"{m.api}-{m.provider}")
@pytest.mark.parametrize(
    "reply",
    [
        AssistantMessage(content=[TextContent(text="x")], api="a", provider="b", model="c", stop_reason="error"),
        AssistantMessage(content=[TextContent(text=" ")], api="a", provider="b", model="c"),
        AssistantMessage(content=[ThinkingContent(thinking="")], api="a", provider="b", model="c"),
        AssistantMessage(content=[], api="a", provider="b", model="c"),
    ],
    ids=["errored", "blank", "empty-thinking", "empty"],
)
def test_no_cut_after_a_reply_that_writes_nothing(model: Model, reply: AssistantMessage) -> None:
    asyncio.run(_conversation(_edge(model, reply)))


def _session(count: int, source: Model) -> list[Any]:
    """``count`` messages: questions, replies with a tool call and its result."""
    messages: list[Any] = []
    for i in range(count // 4):
        call = ToolCall(id=f"call_{i}", name="read", arguments={"path": f"f{i}.txt", "n": 1.5})
        messages += [
            UserMessage(content=f"Question {i}", timestamp=1),
            AssistantMessage(
                content=[TextContent(text="Let me look."), call],
                api=source.api,
                provider=source.provider,
                model=source.id,
                stop_reason="toolUse",
                timestamp=2,
            ),
            ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text="text")], timestamp=3),
            AssistantMessage(
                content=[TextContent(text=f"Answer {i}")],
                api=source.api,
                provider=source.provider,
                model=source.id,
                timestamp=4,
            ),
        ]
    return messages


MODULES = {
    "openai-completions": openai_completions,
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic,
    "google-generative-ai": google,
}


@pytest.mark.parametrize("model", [f_chat(), f_resp(), f_ant(), f_gem()], ids=lambda m: m.api)
async def test_earlier_messages_are_not_converted_or_written_again(
    model: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload_cache.clear()
    module = MODULES[model.api]
    converted: list[int] = []
    convert = module._convert_messages

    def counting(model: Model, messages: list[Any], *rest: Any) -> Any:
        converted.append(len(messages))
        return convert(model, messages, *rest)

    def counting_chat(model: Model, compat: Any, messages: list[Any], *rest: Any) -> Any:
        converted.append(len(messages))
        return convert(model, compat, messages, *rest)

    monkeypatch.setattr(module, "_convert_messages", counting_chat if module is openai_completions else counting)
    written: list[Any] = []
    stringify = payload_cache.json_stringify

    def counting_json(value: Any) -> str:
        written.append(value)
        return stringify(value)

    monkeypatch.setattr(payload_cache, "json_stringify", counting_json)

    conversation = _session(400, model)
    first = Context(system_prompt="Be brief.", messages=conversation, tools=[TOOL])
    body = await _body(model, first)
    assert sum(converted) == 400 and len(written) >= 400  # (the whole: nothing cached yet)
    assert body == await _body(model, first, on_payload=_no_hook)

    # The reply and the user's next message: only they are converted and written.
    conversation = [*conversation, *_session(4, model)[:2]]
    second = Context(system_prompt="Be brief.", messages=conversation, tools=[TOOL])
    converted.clear()
    written.clear()
    body = await _body(model, second)
    assert sum(converted) == 2
    assert len(written) <= 6  # the new items, the system prompt, the payload around the messages
    converted.clear()
    assert body == await _body(model, second, on_payload=_no_hook)
    assert sum(converted) == 402  # a hook's request is built whole

    # The tool's result (the call before it waited for one: the transform's state was kept).
    conversation = [*conversation, _session(4, model)[2]]
    third = Context(system_prompt="Be brief.", messages=conversation, tools=[TOOL])
    converted.clear()
    body = await _body(model, third)
    assert sum(converted) == 1
    assert body == await _body(model, third, on_payload=_no_hook)


def test_bounded_per_api() -> None:
    payload_cache.clear()
    model = f_chat()
    for i in range(3 * payload_cache.SLOTS):
        context = Context(messages=[UserMessage(content=f"conversation {i}"), UserMessage(content="next")])
        openai_completions.build_payload(model, context, openai_completions.SimpleStreamOptions())
    assert len(payload_cache._cuts[model.api]) == payload_cache.SLOTS


async def test_a_user_message_made_anew_for_each_request_is_matched(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compacted session's summary is a new message at every request: written the same, it is
    matched (and what follows it taken from the cache); edited, the conversation is converted anew."""
    payload_cache.clear()
    model = f_chat()
    converted: list[int] = []
    convert = openai_completions._convert_messages

    def counting(model: Model, compat: Any, messages: list[Any], *rest: Any) -> Any:
        converted.append(len(messages))
        return convert(model, compat, messages, *rest)

    monkeypatch.setattr(openai_completions, "_convert_messages", counting)
    conversation = _session(40, model)
    more = _session(4, model)
    for summary, added, count in (("The summary", [], 41), ("The summary", more[:2], 2), ("Edited", more[2:], 45)):
        conversation += added
        context = Context(messages=[UserMessage(content=summary, timestamp=1), *conversation])
        converted.clear()
        body = await _body(model, context)
        assert sum(converted) == count
        assert body == await _body(model, context, on_payload=_no_hook)


@pytest.mark.parametrize("api", list(MODULES))
async def test_an_agent_conversation_sends_the_uncached_bodies(api: str) -> None:
    """Over real HTTP, through the agent: replies streamed into messages, tool calls run, prompts
    one after another; every body sent is the one an uncached build writes for its context."""
    payload_cache.clear()
    sent: list[bytes] = []
    expected: list[str] = []

    class Recording(HttpxTransport):
        async def send(self, request: HttpRequest, signal: Any = None) -> Any:
            sent.append(request.body or b"")
            return await super().send(request, signal)

    def stream_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        uncached = replace(options, on_payload=_no_hook)
        expected.append(json_stringify(MODULES[model.api].build_payload(model, context, uncached)))
        return stream_simple(model, context, replace(options, http_transport=Recording()))

    call = {"type": "tool_call", "id": "call_1", "name": "echo", "arguments": {"text": "ping", "n": 0.5}}
    with MockProviderServer() as server:
        server.script(
            [{"content": [{"type": "text", "text": "Echoing."}, call]}, {"text": "Done."}, {"text": "Hi."}] * 3
        )
        model = e2e_model(server, api)
        agent = Agent(
            initial_state={"model": model, "system_prompt": "Be brief.", "tools": [echo_tool()]},
            get_api_key=lambda provider: "sk-test",
            stream_fn=stream_fn,
        )
        for prompt in ("Please echo ping", "Thanks", "Again", "And once more"):
            await asyncio.wait_for(agent.prompt(prompt), 20)
    assert len(sent) == len(expected) == 6
    assert [body.decode() for body in sent] == expected
