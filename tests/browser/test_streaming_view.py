"""A streaming reply rendered from changes (web/ui/chat.js ChatView.showStreaming with the
operations of py_agent/app/stream_delta.py) gives the same DOM as one rendered from the whole
message at every update, and once finished, the same DOM as the finished message rendered anew.

The page's modules are imported into a blank page of the site's origin (no Python: the updates
are made here by the real StreamView and passed in as JSON). Cases: a long Markdown reply (with
updates larger than a task renders at once, caught up with over the next tasks), thinking then
text then a tool call whose arguments stream, a block that changes kind, a reply stopped in the
middle of a block, and a failed one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import open_blank_page

from py_agent.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall
from py_agent.app.stream_delta import StreamView
from py_agent.session import message_to_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from streaming import reply_text

SCRIPT = """async ([fulls, deltas, final]) => {
  const { ChatView } = await import("/ui/chat.js");
  // The app loads the Markdown renderer once it is ready (web/ui/markdown-deferred.js).
  await (await import("/ui/markdown-deferred.js")).loadMarkdown();
  const views = [];
  const make = () => {
    const scroller = document.createElement("div");
    const transcript = document.createElement("div");
    scroller.append(transcript);
    document.body.append(scroller);
    const view = new ChatView({ scroller, transcript, onRetry() {}, onEdit() {}, onSwitch() {}, onJump() {} });
    view.setTranscript("s", []);
    views.push(scroller);
    return view;
  };
  const settled = async (view) => {
    for (let i = 0; i < 500 && view.root.querySelector(".msg.streaming"); i += 1) await new Promise((r) => setTimeout(r, 5));
  };
  const whole = make();
  const changes = make();
  whole.setStreaming(true);
  changes.setStreaming(true);
  const mismatches = [];
  const caughtUp = [];
  for (let k = 0; k < fulls.length; k += 1) {
    whole.showStreaming(fulls[k]);
    changes.showStreaming(deltas[k]);
    if (whole.root.innerHTML !== changes.root.innerHTML) mismatches.push(k);
    const now = changes.root.querySelector(".blocks")?.textContent.length ?? 0;
    // Between updates, the text left for the next tasks is rendered (RENDER_CHUNK).
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    if (whole.root.innerHTML !== changes.root.innerHTML) mismatches.push(k + 0.5);
    caughtUp.push([now, changes.root.querySelector(".blocks")?.textContent.length ?? 0]);
  }
  whole.append(final);
  changes.append(final);
  await settled(whole);
  await settled(changes);
  whole.setStreaming(false);
  changes.setStreaming(false);
  const fresh = make();
  fresh.setTranscript("s", [final]);
  const result = {
    mismatches, caughtUp,
    whole: whole.root.innerHTML, changes: changes.root.innerHTML, fresh: fresh.root.innerHTML,
    cursor: changes.root.querySelectorAll(".stream-end").length,
  };
  for (const node of views) node.remove();
  return result;
}"""


@pytest.fixture(scope="module")
def page(browser: Any, base_url: str) -> Iterator[Any]:
    page = open_blank_page(browser, base_url, "streaming-view-test.html")
    yield page
    page.context.close()


def reply(*blocks: Any, **fields: Any) -> AssistantMessage:
    return AssistantMessage(api="faux", provider="faux", model="m", content=list(blocks), **fields)


def run(page: Any, states: list[AssistantMessage], final: AssistantMessage) -> dict[str, Any]:
    view = StreamView()
    rev: int | None = None
    fulls, deltas = [], []
    for message in states:
        snapshot = view.snapshot(message, rev, [], 0, lambda m=message: message_to_json(m))
        rev = snapshot["rev"]
        deltas.append(snapshot)
        fulls.append({"rev": -1, "message": message_to_json(message), "tools": []})
    assert any("ops" in d for d in deltas)
    item = {"entryId": "e1", "message": message_to_json(final)}
    result: dict[str, Any] = page.evaluate(SCRIPT, [fulls, deltas, item])
    assert result["mismatches"] == []
    assert result["changes"] == result["whole"]
    assert result["changes"] == result["fresh"]
    assert result["cursor"] == 0
    return result


def grow(text: str, sizes: list[int]) -> list[str]:
    out, end, k = [], 0, 0
    while end < len(text):
        end = min(len(text), end + sizes[k % len(sizes)])
        out.append(text[:end])
        k += 1
    return out


def test_a_long_markdown_reply(page: Any) -> None:
    text = reply_text()[:70_000]
    prefixes = grow(text, [7, 130, 1, 2400, 30_000, 61])
    result = run(
        page, [reply(TextContent(text=t)) for t in prefixes], reply(TextContent(text=text), stop_reason="stop")
    )
    assert "code-block" in result["changes"] and "<li>" in result["changes"]
    # The update of 30,000 characters was rendered over a few tasks (what one shows at once grows after it).
    assert any(now < later for now, later in result["caughtUp"])


def test_thinking_then_text_then_a_tool_call(page: Any) -> None:
    states = []
    thought = "I should **look** at the file first.\n\n- one\n- two"
    for end in range(1, len(thought) + 1, 5):
        states.append(reply(ThinkingContent(thinking=thought[:end])))
    thinking = ThinkingContent(thinking=thought, thinking_signature="sig")
    answer = "Reading it now:\n\n```python\nprint('x')\n```\n"
    for end in range(1, len(answer) + 1, 4):
        states.append(reply(thinking, TextContent(text=answer[:end])))
    for arguments in [
        {},
        {"path": "a"},
        {"path": "a.py"},
        {"path": "a.py", "limit": 10},
        {"path": "a.py", "limit": 20},
    ]:
        states.append(reply(thinking, TextContent(text=answer), ToolCall(id="c1", name="read", arguments=arguments)))
    final = reply(
        thinking,
        TextContent(text=answer),
        ToolCall(id="c1", name="read", arguments={"path": "a.py", "limit": 20}),
        stop_reason="toolUse",
    )
    result = run(page, states, final)
    assert "a.py" in result["changes"] and "thinking" in result["changes"]


def test_a_block_that_changes_kind(page: Any) -> None:
    states = [
        reply(TextContent(text="first")),
        reply(TextContent(text="first words")),
        reply(ThinkingContent(thinking="now thinking")),
        reply(ThinkingContent(thinking="now thinking more"), TextContent(text="then")),
        reply(ThinkingContent(thinking="now thinking more"), TextContent(text="then text")),
    ]
    run(page, states, reply(ThinkingContent(thinking="now thinking more"), TextContent(text="then text")))


def test_a_reply_stopped_in_the_middle_of_a_block(page: Any) -> None:
    text = "A paragraph.\n\n```js\nconst partial = 1;\nconst"
    states = [reply(TextContent(text=t)) for t in grow(text, [3, 11])]
    final = reply(TextContent(text=text), stop_reason="aborted", error_message="Request was aborted")
    result = run(page, states, final)
    assert "msg-error aborted" in result["changes"]


def test_a_failed_reply(page: Any) -> None:
    text = "Partial answer with a [link](https://example.com) and"
    states = [reply(TextContent(text=t)) for t in grow(text, [5])]
    final = reply(TextContent(text=text), stop_reason="error", error_message="500 Internal Server Error: boom")
    result = run(page, states, final)
    assert "msg-error error" in result["changes"]
