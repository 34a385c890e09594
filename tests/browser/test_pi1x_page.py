"""Sessions from pi 1.x and the context meter, in the page (headless Chromium) against the mock provider.

- A session pi 1.6.0's own SessionManager wrote (tests/session/pi1x_sessions.mjs: a system
  message, a usage entry, a context_edit removing the first user message) is imported: the
  transcript keeps the removed message (noted) and shows the prompt change collapsed; the next
  request leaves the removed message out; the session's cost includes the usage entry; the
  re-export holds the same entries, then the new ones.
- The composer's context meter, against a mock that reports the input tokens it counts in each
  request (``"input": "count"``): its figure is within 10% of them after each reply and before each
  send (typed text and an attachment included), and it turns to the warning colours near and
  past the compaction threshold (the window less pi's reserve of 16,384 tokens).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

SCRIPT = Path(__file__).resolve().parent.parent / "session" / "pi1x_sessions.mjs"
WINDOW = 40_000
THRESHOLD = WINDOW - 16_384


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    # The provider and model pi's file names (mock/mock-1), so the import opens on it.
    model = {"id": "mock-1", "name": "Mock One", "contextWindow": WINDOW, "cost": {"input": 3, "output": 15}}
    with open_app(browser, base_url) as app:
        app.add_provider("mock", mock, [model], key="sk-mock-key-0001")
        yield app


def texts_of(messages: list[dict[str, Any]]) -> list[str]:
    """The text blocks of pi-shaped messages (content a string or blocks), in order."""
    texts = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [block.get("text", "") for block in blocks if block.get("type") == "text"]
    return texts


def last_request_texts(mock: MockProviderServer) -> list[str]:
    return texts_of(mock.requests[-1]["body"]["messages"])


def test_a_pi_1x_session_imports_sends_counts_and_exports(
    app: App, mock: MockProviderServer, reference_1x_install: Path, tmp_path: Path
) -> None:
    page = app.page
    done = subprocess.run(
        ["node", str(SCRIPT), "write", str(tmp_path), "0"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    written = json.loads(done.stdout)["edits"]
    original = Path(written["path"]).read_text(encoding="utf-8")
    original_entries = [json.loads(line) for line in original.splitlines()]

    page.locator("#import-file").set_input_files(written["path"])
    wait_until(lambda: app.current_session_id() == original_entries[0]["id"], timeout=30)
    page.locator("#transcript .msg.assistant").first.wait_for()
    assert app.user_texts() == ["Please forget this first question.", "The second question stays."]
    removed = page.locator("#transcript .msg.user", has_text="Please forget this first question.")
    assert "Not sent to the model" in removed.locator(".context-edit-note").inner_text()
    marker = page.locator("#transcript .msg.prompt-change")
    assert marker.count() == 1 and marker.get_attribute("aria-label") == "Prompt changed"
    assert marker.locator("details").get_attribute("open") is None  # collapsed
    marker.locator("summary").click()
    assert "Tools added: read" in marker.locator(".prompt-change-text").inner_text()
    # Two replies at $0.001 and the usage entry's $0.015.
    page.locator("#session-usage", has_text="$0.0170").wait_for()

    mock.reset()
    mock.script([{"text": "Third answer.", "usage": {"input": 200, "output": 10}}])
    app.type_and_enter("Third question")
    page.locator("#transcript .msg.assistant", has_text="Third answer.").wait_for()
    app.wait_idle()
    texts = last_request_texts(mock)
    # pi 1.6.0's context: the removed question is left out, its answer stays.
    assert texts == ["First answer.", "The second question stays.", "Second answer.", "Third question"]
    system = json.dumps(mock.requests[-1]["body"].get("system"))
    assert "You are an expert coding assistant." not in system  # the page's own prompt, not pi's
    # The new reply (200 x $3 + 10 x $15 per million) is added to the same totals.
    page.locator("#session-usage", has_text="$0.0178").wait_for()

    exported = app.py("export_session")["text"]
    lines = [json.loads(line) for line in exported.splitlines()]
    assert lines[: len(original_entries)] == original_entries
    added = [(entry["type"], entry.get("message", {}).get("role")) for entry in lines[len(original_entries) :]]
    assert ("message", "user") in added and ("message", "assistant") in added


def meter_tokens(app: App) -> int:
    return int(app.page.locator("#context-meter").get_attribute("data-tokens") or "-1")


def close_to(figure: int, reported: int) -> bool:
    return abs(figure - reported) <= 0.10 * reported


def reported_input(mock: MockProviderServer) -> int:
    from py_agent.testing.mock_server import count_input_tokens

    return count_input_tokens(mock.requests[-1]["body"])


def test_the_context_meter_follows_the_reported_input_tokens(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock one", "Mock One")
    meter = page.locator("#context-meter")
    meter.wait_for()
    mock.reset()
    counted = {"input": "count", "output": 12}
    mock.script([{"text": "First reply.", "usage": counted}, {"text": "Second reply.", "usage": counted}])
    mock.append({"text": "Third reply.", "usage": counted})

    messages = ["A short first question.", "A long second message. " * 260]
    for index, message in enumerate(messages):
        page.locator("#input").fill(message)
        before = meter_tokens(app)  # the next request: the conversation, the prompt, what is typed
        page.locator("#input").press("Enter")
        wait_until(lambda n=index + 1: len(mock.requests) == n and mock.requests[-1]["completed"], timeout=30)
        app.wait_idle()
        reported = reported_input(mock)
        if index:
            assert close_to(before, reported), (before, reported)
        else:
            # No reply to count from yet: the prompt and the tools' definitions are estimated from
            # their JSON (characters / 4), which a provider's tokenizer counts its own way.
            assert reported <= before <= 1.5 * reported, (before, reported)
        wait_until(lambda r=reported: meter_tokens(app) == r + 12)  # the reply's usage: input and output
        assert close_to(meter_tokens(app), reported)
        assert meter.get_attribute("data-level") == "ok"

    # An attachment: its chip shows its tokens, the meter adds them.
    document = "Quarterly notes, line by line. " * 600
    after_reply = meter_tokens(app)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files([{"name": "notes.txt", "mimeType": "text/plain", "buffer": document.encode()}])
    chip = page.locator(".att-chip[data-status=ready]").first
    chip.wait_for()
    assert "about 4.7k tokens" in chip.inner_text()  # 18,600 characters and the <file> wrapper, / 4
    assert meter_tokens(app) >= after_reply + 4650
    page.locator("#input").fill("What do the notes say?")
    before = meter_tokens(app)
    page.locator("#input").press("Enter")
    wait_until(lambda: len(mock.requests) == 3 and mock.requests[-1]["completed"], timeout=30)
    app.wait_idle()
    assert close_to(before, reported_input(mock)), (before, reported_input(mock))

    # Near the threshold, then past it: the warning colours and words.
    ok_colour = meter.evaluate("el => getComputedStyle(el).color")
    base = meter_tokens(app)
    near = int(THRESHOLD * 0.9) - base
    page.locator("#input").fill("n" * (near * 4))
    assert meter.get_attribute("data-level") == "near"
    assert meter.evaluate("el => getComputedStyle(el).color") != ok_colour
    assert "close to the point where pi compacts" in (meter.get_attribute("aria-valuetext") or "")
    page.locator("#input").fill("n" * ((THRESHOLD - base + 10) * 4))
    assert meter.get_attribute("data-level") == "over"
    label = meter.get_attribute("aria-label") or ""
    assert meter.locator(".meter-text").inner_text() in label
    page.locator("#input").fill("")


def test_a_session_compacted_in_the_page_opens_in_pi_s_cli(
    app: App, mock: MockProviderServer, reference_install: Path, reference_1x_install: Path, tmp_path: Path
) -> None:
    """Exported after ``/compact``, pi 0.79.10's and 1.6.0's SessionManager see what the page sends
    next: the summary, then the kept messages."""
    page = app.page
    app.new_chat()
    app.choose_model("mock one", "Mock One")
    mock.reset()
    # Usage below the threshold: no automatic compaction, the /compact below makes the cut.
    replies = [{"text": f"reply-{n}", "usage": {"input": 1000 * n, "output": 5}} for n in (1, 2, 3)]
    mock.script([*replies, {"text": "## Goal\nThree long messages."}, {"text": "reply-4"}])
    for n, word in enumerate(("FIRST", "SECOND", "THIRD"), start=1):
        app.type_and_enter(f"{word} " + "x" * 48_000)
        page.locator("#transcript .msg.assistant", has_text=f"reply-{n}").wait_for(timeout=60_000)
        app.wait_idle()
    app.type_and_enter("/compact")
    page.locator("#transcript .msg.compaction").wait_for(timeout=60_000)
    app.wait_idle()
    app.type_and_enter("FOURTH question")
    page.locator("#transcript .msg.assistant", has_text="reply-4").wait_for(timeout=60_000)
    app.wait_idle()
    sent = last_request_texts(mock)
    assert sent[0].startswith("The conversation history before this point was compacted")
    assert not any(text.startswith("FIRST") for text in sent)

    path = tmp_path / "compacted.jsonl"
    path.write_text(app.py("export_session")["text"], encoding="utf-8")
    for modules in (reference_install, reference_1x_install):
        done = subprocess.run(
            ["node", str(SCRIPT), "read", str(modules / "node_modules"), str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        context = seen["contexts"][seen["leafId"]]["messages"]
        assert context[0]["role"] == "compactionSummary"
        assert context[0]["summary"].startswith("## Goal\nThree long messages.")
        # What pi's CLI would send before the last reply is what the page sent.
        assert texts_of(seen["llm"][:-1]) == sent, modules  # all but the last reply
