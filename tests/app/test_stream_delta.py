"""The streaming reply sent to the page as changes (py_agent/app/stream_delta.py): applying them as
web/ui/chat.js does (``apply`` below mirrors its ``applyOps``) gives the message's own JSON at
every pull, in every case where it is sent as changes, and the whole message where it must be."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

from app_helpers import call, idle

from py_agent.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend
from py_agent.app.stream_delta import StreamView
from py_agent.session import message_to_json


def apply(page: dict[str, Any] | None, snapshot: dict[str, Any]) -> dict[str, Any]:
    """The page's copy of the message after ``snapshot`` (web/ui/chat.js showStreaming/applyOps)."""
    if "message" in snapshot:
        return copy.deepcopy(snapshot["message"])
    assert page is not None
    content = page["content"]
    for op in snapshot["ops"]:
        i = op["i"]
        if "block" in op:
            if i < len(content):
                content[i] = op["block"]
            else:
                assert i == len(content)
                content.append(op["block"])
        elif "text" in op:
            content[i]["text"] += op["text"]
        elif "thinking" in op:
            content[i]["thinking"] += op["thinking"]
        else:
            args = dict(content[i].get("arguments") or {})
            for key, how, value in op["args"]:
                args[key] = str(args.get(key, "")) + value if how == "append" else value
            content[i] = {**content[i], "arguments": args}
    return page


class Page:
    """Pulls like the page: ``since`` is the revision it has."""

    def __init__(self, view: StreamView) -> None:
        self.view = view
        self.rev: int | None = None
        self.message: dict[str, Any] | None = None
        self.kinds: list[str] = []
        self.tools: list[Any] | None = None

    def pull(self, message: AssistantMessage, tools: list[dict[str, Any]] | None = None, version: int = 0) -> None:
        snapshot = self.view.snapshot(message, self.rev, tools or [], version, lambda: message_to_json(message))
        snapshot = json.loads(json.dumps(snapshot))  # what crosses to the page is JSON
        self.kinds.append("whole" if "message" in snapshot else "ops")
        if "tools" in snapshot:
            self.tools = snapshot["tools"]
        self.message = apply(self.message, snapshot)
        self.rev = snapshot["rev"]
        assert self.message["content"] == message_to_json(message)["content"]


def reply(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(api="faux", provider="faux", model="m", content=list(blocks))


def test_text_grows_by_changes_only() -> None:
    page = Page(StreamView())
    text = ""
    for piece in ["Hel", "lo ", "**wor", "ld**\n\n", "- item\r", "\n", "", "end"]:
        text += piece
        page.pull(reply(TextContent(text=text)))
    assert page.kinds == ["whole"] + ["ops"] * 7
    # Nothing new: an empty change, not the message again.
    page.pull(reply(TextContent(text=text)))
    assert page.kinds[-1] == "ops"


def test_thinking_then_text_then_tool_call_arguments() -> None:
    page = Page(StreamView())
    thinking = ThinkingContent(thinking="Let me")
    page.pull(reply(thinking))
    page.pull(reply(ThinkingContent(thinking="Let me think.")))
    page.pull(reply(ThinkingContent(thinking="Let me think.", thinking_signature="sig"), TextContent(text="An")))
    page.pull(reply(ThinkingContent(thinking="Let me think.", thinking_signature="sig"), TextContent(text="Answer.")))
    done = ThinkingContent(thinking="Let me think.", thinking_signature="sig")
    call_ = ToolCall(id="c1", name="write", arguments={})
    page.pull(reply(done, TextContent(text="Answer."), call_))
    for arguments in [
        {"path": "a"},
        {"path": "a.py"},
        {"path": "a.py", "content": "print("},
        {"path": "a.py", "content": "print(1)\n", "mode": 7},
        {"path": "a.py", "content": "print(1)\n", "mode": [7, 8]},
        {"path": "b.py", "content": "print(1)\n", "mode": [7, 8]},
    ]:
        page.pull(reply(done, TextContent(text="Answer."), ToolCall(id="c1", name="write", arguments=arguments)))
    assert set(page.kinds[1:]) == {"ops"}


def test_a_changed_kind_or_fewer_blocks_is_sent_whole() -> None:
    page = Page(StreamView())
    page.pull(reply(TextContent(text="a"), TextContent(text="b")))
    page.pull(reply(TextContent(text="a"), ThinkingContent(thinking="b")))
    page.pull(reply(TextContent(text="a")))
    page.pull(reply(TextContent(text="a"), ToolCall(id="c1", name="t", arguments={"x": "1"})))
    # Another call at the same place, and a text that does not extend the one sent: that block anew.
    page.pull(reply(TextContent(text="a"), ToolCall(id="c2", name="t", arguments={"x": "1"})))
    page.pull(reply(TextContent(text="b"), ToolCall(id="c2", name="t", arguments={"x": "1"})))
    assert page.kinds == ["whole", "whole", "whole", "ops", "ops", "ops"]


def test_a_page_without_the_revision_gets_the_whole_message() -> None:
    view = StreamView()
    page = Page(view)
    page.pull(reply(TextContent(text="one")))
    page.pull(reply(TextContent(text="one two")))
    # A reload (no revision), or a change the page dropped (an older revision): whole again.
    reloaded = Page(view)
    reloaded.pull(reply(TextContent(text="one two three")))
    page.pull(reply(TextContent(text="one two three four")))
    assert reloaded.kinds == ["whole"] and page.kinds == ["whole", "ops", "whole"]
    # A revision of another session's view is never taken for this one's.
    other = StreamView()
    snapshot = other.snapshot(reply(TextContent(text="x")), page.rev, [], 0, lambda: {})
    assert "message" in snapshot
    # A new reply: whole.
    view.reset()
    page.pull(reply(TextContent(text="next")))
    assert page.kinds[-1] == "whole"


def test_tool_states_are_sent_when_they_change() -> None:
    page = Page(StreamView())
    message = reply(TextContent(text="a"))
    page.pull(message, [{"toolCallId": "c1", "status": "running"}], 1)
    assert page.tools == [{"toolCallId": "c1", "status": "running"}]
    page.tools = None
    page.pull(message, [{"toolCallId": "c1", "status": "running"}], 1)
    assert page.tools is None
    page.pull(message, [{"toolCallId": "c1", "status": "done"}], 2)
    assert page.tools == [{"toolCallId": "c1", "status": "done"}]


async def test_the_app_streams_changes_that_rebuild_the_reply() -> None:
    """Through the page command, during a real (paced demo) reply: every pull rebuilds the message."""
    from py_agent.app.demo import register_demo_model

    app = WebApp(MemoryBackend(), MemoryTabStore(), lambda kind, payload: None, demo_tokens_per_second=0, plugins=[])
    await app.start()
    await call(app, "new_session")
    register_demo_model(tokens_per_second=3000)
    kinds: list[str] = []
    try:
        await call(app, "send", text="tell me something long")
        page: dict[str, Any] | None = None
        rev = None
        assert app.chat is not None
        for _ in range(400):
            result = await call(app, "streaming_snapshot", since=rev)
            snapshot = result["snapshot"]
            message = app.chat.agent.state.streaming_message
            if snapshot is None:
                if not app.chat.streaming:
                    break
            else:
                kinds.append("whole" if "message" in snapshot else "ops")
                page = apply(page if "ops" in snapshot else None, snapshot)
                rev = snapshot["rev"]
                assert message is not None
                assert page["content"] == message_to_json(message)["content"]
            await asyncio.sleep(0.01)
        await idle(app)
    finally:
        register_demo_model(tokens_per_second=0)
    assert kinds.count("ops") >= 3
    # One whole message per reply (the demo may reply in several messages: tool calls).
    assert kinds.count("whole") <= len([i for i in app.chat.transcript() if i["message"]["role"] == "assistant"])
