"""The hot path's model builders (py_agent/ai/types.py) write pydantic's slots directly: they must
give what pydantic's own ``model_construct`` / ``model_copy`` give, field by field."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydantic import BaseModel

from py_agent.ai.types import (
    AssistantMessage,
    Context,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    fast_construct,
    shallow_copier,
    shallow_copy,
)
from py_agent.core.types import AgentToolResult

CASES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (TextContent, {"text": "hello"}),
    (TextContent, {"text": "signed", "text_signature": "sig"}),
    (TextContent, {"text": "with an unknown key", "note": 1}),
    (ToolCall, {"id": "c1", "name": "read", "arguments": {"path": "a"}}),
    (Usage, {}),
    (Usage, {"input": 3, "output": 4}),
    (UserMessage, {"content": "hi", "timestamp": 5}),
    (
        AssistantMessage,
        {
            "content": [TextContent(text="x")],
            "api": "faux",
            "provider": "p",
            "model": "m",
            "usage": Usage(input=1),
            "stop_reason": "toolUse",
            "timestamp": 7,
        },
    ),
    (
        ToolResultMessage,
        {
            "role": "toolResult",
            "tool_call_id": "c1",
            "tool_name": "read",
            "content": [TextContent(text="r")],
            "details": {"n": 1},
            "is_error": False,
            "timestamp": 9,
        },
    ),
    (AgentToolResult, {"content": [TextContent(text="t")], "details": {}}),
    (AgentToolResult, {"content": [], "details": None, "terminate": True}),
    (Context, {"system_prompt": "s", "messages": [], "tools": None}),
]


def slots(model: BaseModel) -> tuple[dict[str, Any], set[str], Any, Any]:
    return (
        dict(model.__dict__),
        set(model.__pydantic_fields_set__),
        model.__pydantic_extra__,
        model.__pydantic_private__,
    )


@pytest.mark.parametrize(("cls", "values"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_fast_construct_is_model_construct(cls: type[BaseModel], values: dict[str, Any]) -> None:
    fast = fast_construct(cls, **values)
    reference = cls.model_construct(**values)
    assert type(fast) is cls
    fast_dict, fast_set, fast_extra, fast_private = slots(fast)
    ref_dict, ref_set, ref_extra, ref_private = slots(reference)
    assert fast_dict.keys() == ref_dict.keys()
    for name, value in ref_dict.items():
        assert fast_dict[name] == value, name
    assert fast_set == ref_set
    assert fast_extra == ref_extra
    assert fast_private == ref_private
    assert fast.model_dump() == reference.model_dump()
    assert list(fast.model_dump()) == list(reference.model_dump())
    assert fast == reference


@pytest.mark.parametrize(("cls", "values"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_shallow_copy_is_model_copy(cls: type[BaseModel], values: dict[str, Any]) -> None:
    original = cls.model_construct(**values)
    copied = shallow_copy(original)
    reference = original.model_copy()
    assert type(copied) is cls
    assert slots(copied) == slots(reference)
    # A new object whose slots are not shared with the original's (values are: it is shallow).
    assert copied.__dict__ is not original.__dict__
    assert copied.__pydantic_fields_set__ is not original.__pydantic_fields_set__
    for name, value in original.__dict__.items():
        assert copied.__dict__[name] is value
    copied.__dict__["extra_marker"] = 1
    assert "extra_marker" not in original.__dict__


def test_shallow_copy_keeps_extra_fields_apart() -> None:
    original = AssistantMessage.model_validate(
        {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m", "timestamp": 0, "note": "x"}
    )
    copied = shallow_copy(original)
    assert slots(copied) == slots(original.model_copy())
    assert copied.__pydantic_extra__ is not original.__pydantic_extra__


def _assert_apart(copied: BaseModel, original: BaseModel) -> None:
    """No slot container of ``copied`` is shared with ``original``'s (values are: it is shallow)."""
    assert copied.__dict__ is not original.__dict__
    assert copied.__pydantic_fields_set__ is not original.__pydantic_fields_set__
    if copied.__pydantic_extra__ is not None:
        assert copied.__pydantic_extra__ is not original.__pydantic_extra__
    if copied.__pydantic_private__ is not None:
        assert copied.__pydantic_private__ is not original.__pydantic_private__
    for name, value in original.__dict__.items():
        assert copied.__dict__[name] is value


@pytest.mark.parametrize(("cls", "values"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_shallow_copier_is_model_copy(cls: type[BaseModel], values: dict[str, Any]) -> None:
    original = cls.model_construct(**values)
    copy = shallow_copier(original)
    first, second = copy(), copy()
    reference = original.model_copy()
    for copied in (first, second):
        assert type(copied) is cls
        assert slots(copied) == slots(reference)
        _assert_apart(copied, original)
    _assert_apart(second, first)


def test_shallow_copier_copies_the_model_as_it_is_at_each_call() -> None:
    original = AssistantMessage.model_validate(
        {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m", "timestamp": 0, "note": "x"}
    )
    copy = shallow_copier(original)
    before = copy()
    # pydantic's assignments write into the slots' containers, which the copier reads at each call.
    original.content = [TextContent(text="t")]
    original.response_model = "r"  # a field not set before: it joins the fields set
    original.note = "y"  # an extra field
    after = copy()
    assert slots(after) == slots(original.model_copy())
    _assert_apart(after, original)
    assert before.content == [] and before.response_model is None and before.note == "x"
    assert "response_model" not in before.model_fields_set


def test_copies_of_an_application_model_make_no_subclass_of_it() -> None:
    # The message classes of py_agent.ai.types are copied through a staging subclass; another
    # model (here a subclass with a class hook) is copied without one.
    made: list[type] = []

    class Mine(AssistantMessage):
        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            made.append(cls)

    original = Mine.model_validate(
        {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m", "timestamp": 0, "note": "x"}
    )
    for copied in (shallow_copy(original), shallow_copier(original)()):
        assert type(copied) is Mine
        assert slots(copied) == slots(original.model_copy())
        _assert_apart(copied, original)
    assert made == [] and Mine.__subclasses__() == []


async def test_faux_partials_and_message_updates_are_model_copies() -> None:
    # The faux provider's per-delta copy and the agent loop's (both inlined on their per-delta
    # paths) against model_copy, slot by slot, with an extra field to copy apart.
    from py_agent import Agent
    from py_agent.ai.faux import register_faux_provider
    from py_agent.core.types import MessageUpdateEvent

    faux = register_faux_provider(token_size={"min": 1, "max": 1})
    try:
        faux.set_responses([{"content": [{"type": "text", "text": "abcdefghijkl"}], "note": "x"}])
        agent = Agent(initial_state={"model": faux.get_model()})
        seen: list[tuple[AssistantMessage, AssistantMessage, str]] = []

        def listener(event: object) -> None:
            if isinstance(event, MessageUpdateEvent) and event.assistant_message_event.type == "text_delta":
                message, partial = event.message, event.assistant_message_event.partial
                for copied in (message, partial):
                    assert type(copied) is AssistantMessage
                    assert copied.note == "x"
                assert slots(message) == slots(partial.model_copy())
                _assert_apart(message, partial)
                seen.append((message, partial, message.content[0].text))

        agent.subscribe(listener)
        await agent.prompt("go")
    finally:
        faux.unregister()
    assert [text for _, _, text in seen] == ["abcd", "abcdefgh", "abcdefghijkl"]
    # Each delta's copies are their own objects, apart from the previous delta's.
    for (message, partial, _), (next_message, next_partial, _) in itertools.pairwise(seen):
        _assert_apart(next_partial, partial)
        _assert_apart(next_message, message)
    final = agent.state.messages[-1]
    assert type(final) is AssistantMessage and final.note == "x"
