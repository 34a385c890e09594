"""Agent messages <-> message-entry JSON, and pi's convertToLlm."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from pydantic import BaseModel
from session_helpers import assistant, new_session, tool_result, user

from py_agent.ai.types import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, UserMessage
from py_agent.session import (
    agent_messages,
    convert_to_llm,
    export_jsonl,
    import_jsonl,
    message_from_json,
    message_text,
    message_to_json,
)


class Artifact(BaseModel):
    role: str = "artifact"
    filename: str
    content: str | None = None


@dataclasses.dataclass
class Notice:
    role: str
    message: str
    variant: str = "info"


def test_llm_messages_round_trip_through_json() -> None:
    messages = [
        user("plain"),
        UserMessage(
            content=[TextContent(text="look"), ImageContent(data="iVBORw0KGgo=", mime_type="image/png")], timestamp=3
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", thinking_signature="sig"),
                TextContent(text="ok"),
                ToolCall(id="c", name="f", arguments={"a": [1, 2.5, None]}),
            ],
            api="openai-responses",
            provider="openai",
            model="gpt-5",
            response_id="resp_1",
            stop_reason="toolUse",
            timestamp=4,
        ),
        assistant("error", timestamp=5).model_copy(update={"stop_reason": "error", "error_message": "boom"}),
        tool_result("c", "result"),
    ]
    session = new_session()
    for message in messages:
        session.append_message(message)
    again = import_jsonl(export_jsonl(session))
    assert again.build_context().agent_messages() == messages
    for message in messages:
        data = message_to_json(message)
        assert data == message.model_dump()
        assert json.loads(json.dumps(data)) == data
        assert message_from_json(data) == message
    assert message_to_json(messages[1])["content"][1] == {
        "type": "image",
        "data": "iVBORw0KGgo=",
        "mimeType": "image/png",
    }


def test_custom_roles_are_kept_as_dicts() -> None:
    custom = [
        {"role": "system-notification", "message": "hi", "variant": "warn", "timestamp": 1},
        Artifact(filename="a.md", content="# A"),
        Notice(role="notice", message="m"),
    ]
    as_json = [message_to_json(m) for m in custom]
    assert as_json == [
        {"role": "system-notification", "message": "hi", "variant": "warn", "timestamp": 1},
        {"role": "artifact", "filename": "a.md", "content": "# A"},
        {"role": "notice", "message": "m", "variant": "info"},
    ]
    back = agent_messages(as_json)
    assert back == as_json
    back[0]["message"] = "changed"
    assert as_json[0]["message"] == "hi"  # copies, not the stored objects


def test_invalid_llm_message_json_is_kept_as_a_dict() -> None:
    broken = {"role": "assistant", "content": "not blocks", "weird": True}
    assert message_from_json(broken) == broken
    assert convert_to_llm([broken]) == []


def test_message_to_json_refuses_non_messages() -> None:
    for bad in [42, "text", ["list"], {"no": "role"}, {"role": 1}, object()]:
        with pytest.raises(TypeError):
            message_to_json(bad)
    assert message_to_json({"role": "x", "v": math.nan, "t": (1, 2)}) == {"role": "x", "v": None, "t": [1, 2]}


def test_message_text() -> None:
    assert message_text({"content": "plain"}) == "plain"
    assert (
        message_text({"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]})
        == "a b"
    )
    assert message_text({"content": None}) == "" and message_text({}) == ""


def test_convert_to_llm() -> None:
    history = [
        user("q"),
        {"role": "custom", "customType": "n", "content": "note", "display": True, "timestamp": 7},
        {"role": "custom", "customType": "n", "content": [{"type": "text", "text": "blocks"}], "timestamp": None},
        {"role": "bashExecution", "command": "x", "output": "", "exitCode": 2, "timestamp": 8},
        {"role": "bashExecution", "command": "y", "excludeFromContext": True, "timestamp": 9},
        {
            "role": "bashExecution",
            "command": "z",
            "output": "o",
            "cancelled": True,
            "truncated": True,
            "fullOutputPath": "/t",
        },
        {"role": "artifact", "filename": "f"},
        assistant("a").model_dump(),
    ]
    llm = convert_to_llm(history)
    assert [m.role for m in llm] == ["user", "user", "user", "user", "user", "assistant"]
    assert llm[1].content == [TextContent(text="note")] and llm[1].timestamp == 7
    assert llm[2].content == [TextContent(text="blocks")]
    assert llm[3].content[0].text == "Ran `x`\n(no output)\n\nCommand exited with code 2"  # type: ignore[union-attr]
    assert llm[4].content[0].text == (  # type: ignore[union-attr]
        "Ran `z`\n```\no\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /t]"
    )
    assert isinstance(llm[5], AssistantMessage)
    assert llm[0] is history[0]


def test_models_with_non_json_fields_use_their_json_form() -> None:
    import datetime

    class Stamped(BaseModel):
        role: str = "stamped"
        at: datetime.date

    assert message_to_json(Stamped(at=datetime.date(2026, 1, 2))) == {"role": "stamped", "at": "2026-01-02"}


def test_lone_surrogates_survive_in_keys_and_text() -> None:
    odd = AssistantMessage(
        content=[TextContent(text="half \ud83d"), ToolCall(id="c", name="t", arguments={"\ud800": "\udc00"})],
        api="a",
        provider="p",
        model="m",
        timestamp=1,
    )
    session = new_session()
    session.append_message(odd)
    text = export_jsonl(session)
    assert "\\ud83d" in text and "\\ud800" in text
    assert import_jsonl(text).build_context().agent_messages() == [odd]


def test_absurdly_deep_messages_are_refused_cleanly() -> None:
    deep: object = "x"
    for _ in range(600):  # more than MAX_DEPTH; Pyodide cannot even free a few thousand levels
        deep = {"d": deep}
    with pytest.raises(TypeError, match="nested deeper than"):
        message_to_json({"role": "tool-output", "value": deep})
