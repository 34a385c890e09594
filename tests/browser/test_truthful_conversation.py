"""The conversation and the model picker say what is true, in Chromium.

Regenerate on a good reply (a new branch), long messages collapsed behind "Show more", a warning
before sending more than the model's context window, Stop saying what was kept only when something
was, the write tool's card showing its result, two quick changes in Settings → Tools both kept,
and the model picker's ranking (exact and prefix matches first, newest first, "local").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    mock.stall_seconds = 10  # a "stall" fault without its own seconds
    claude = {"id": "mock-claude", "name": "Mock Claude"}
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [claude], key="sk-conversation-0001")
        yield app


def demo_chat(app: App) -> None:
    app.new_chat()
    app.py("set_model", provider="demo", id="demo-scripted")


def test_regenerate_a_good_reply_makes_a_new_branch(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script([{"text": "First answer."}, {"text": "Second answer."}])
    app.type_and_enter("A question")
    page.locator("#transcript .msg.assistant", has_text="First answer.").wait_for()
    app.wait_idle()
    assert page.locator("#transcript .msg-error").count() == 0
    page.locator("#transcript .msg.assistant .regenerate").click()
    page.locator("#transcript .msg.assistant", has_text="Second answer.").wait_for()
    app.wait_idle()
    assert app.user_texts() == ["A question"]
    assert page.locator("#transcript .msg.assistant .branch-count").inner_text() == "2 / 2"
    page.locator("#transcript .msg.assistant .branch button[aria-label='Previous version']").click()
    page.locator("#transcript .msg.assistant", has_text="First answer.").wait_for()
    # The same messages went to the provider again (the first reply is not part of them).
    first, second = (r["body"]["messages"] for r in mock.requests)
    assert first == second and len(first) == 1


def test_long_messages_collapse_behind_show_more(app: App) -> None:
    page = app.page
    demo_chat(app)
    long = "\n".join(f"Line {i}: " + "lorem ipsum " * 8 for i in range(60))
    app.type_and_enter(long)
    app.wait_idle()
    message = page.locator("#transcript .msg.user").last
    body = message.locator(".user-text")
    button = message.locator("button.show-more")
    assert button.get_attribute("aria-expanded") == "false"
    assert "Show more" in button.inner_text()
    clipped = body.evaluate("el => [el.clientHeight, el.scrollHeight]")
    assert clipped[0] < clipped[1] / 3, clipped
    button.click()
    assert button.get_attribute("aria-expanded") == "true" and button.inner_text() == "Show less"
    full = body.evaluate("el => [el.clientHeight, el.scrollHeight]")
    assert full[0] >= full[1] - 1, full
    # A short message has no such button.
    app.type_and_enter("short")
    page.locator("#transcript .msg.user .user-text", has_text="short").wait_for()
    app.wait_idle()
    assert page.locator("#transcript .msg.user").last.locator("button.show-more").count() == 0


def test_a_message_larger_than_the_context_window_is_warned_about(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")  # a provider's model (the offline demo sends nothing anywhere)
    mock.reset()
    mock.script([{"text": "Read it all."}])
    before = len(app.user_texts())
    huge = "word " * 110_000  # 550,000 characters: about 137K tokens for a 128K model
    page.locator("#input").evaluate("(el, text) => { el.value = text; el.dispatchEvent(new Event('input')); }", huge)
    page.locator("#input").press("Enter")
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    assert "context window" in dialog.inner_text() and "128k" in dialog.inner_text().lower()
    dialog.locator("button", has_text="Cancel").click()
    dialog.wait_for(state="detached")
    assert len(app.user_texts()) == before
    assert page.locator("#input").evaluate("el => el.value.length") == len(huge)
    page.locator("#input").press("Enter")
    dialog.wait_for()
    dialog.locator("button", has_text="Send anyway").click()
    page.locator("#transcript .msg.user button.show-more").last.wait_for()
    app.wait_idle()
    assert len(app.user_texts()) == before + 1
    assert len(mock.requests) == 1  # sent once, after the confirmation


def test_stop_says_what_was_kept_only_when_something_was(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script([{"fault": {"type": "stall_headers"}}])
    app.type_and_enter("Nothing will come")
    page.locator("#stop-button").wait_for()
    page.wait_for_timeout(300)
    page.locator("#stop-button").click()
    stopped = page.locator("#transcript .msg-error.aborted").last
    stopped.wait_for()
    app.wait_idle()
    assert stopped.inner_text().startswith("Stopped before anything arrived.")
    assert "kept" not in stopped.inner_text()

    mock.script([{"text": " ".join(f"part{i}" for i in range(300)), "delay_ms": 40, "chunk_size": 8}])
    app.type_and_enter("Something will come")
    page.locator("#transcript .msg.assistant.streaming", has_text="part3").wait_for(timeout=15_000)
    page.locator("#stop-button").click()
    kept = page.locator("#transcript .msg-error.aborted").last
    page.locator("#transcript .msg-error.aborted", has_text="partial reply is kept").wait_for()
    app.wait_idle()
    assert kept.inner_text().startswith("Stopped. The partial reply is kept.")


def test_the_write_card_shows_its_result(app: App, mock: MockProviderServer) -> None:
    page = app.page
    if "write" not in page.evaluate("() => window.pyAgentApp.state.tools"):
        pytest.fail("the workspace tools are not enabled")
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script(
        [
            {"tool_calls": [{"id": "call_w_1", "name": "write", "arguments": {"path": "notes.txt", "content": "hi"}}]},
            {"text": "Written."},
        ]
    )
    app.type_and_enter("Write a note")
    page.locator("#transcript .msg.assistant", has_text="Written.").wait_for(timeout=20_000)
    app.wait_idle()
    card = page.locator("#transcript details.tool").first
    assert card.get_attribute("data-status") == "done"
    if card.get_attribute("open") is None:
        card.locator("summary").click()
    assert "Successfully wrote 2 bytes to notes.txt" in card.inner_text()


def test_two_quick_tool_changes_are_both_kept(app: App) -> None:
    page = app.page
    tools = page.evaluate("() => window.pyAgentApp.state.tools")
    assert "ls" in tools and "grep" in tools, tools
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Tools").click()
    page.locator("#tool-ls").wait_for()
    # Both clicks before the first save returns.
    page.evaluate("() => { document.getElementById('tool-ls').click(); document.getElementById('tool-grep').click(); }")
    wait_until(lambda: sorted(app.py("tool_settings")["settings"]["disabled_tools"]) == ["grep", "ls"])
    wait_until(lambda: not {"ls", "grep"} & set(page.evaluate("() => window.pyAgentApp.state.tools")))
    page.locator("#tool-ls:not(:checked)").wait_for()
    assert not page.locator("#tool-grep").is_checked()
    page.evaluate("() => { document.getElementById('tool-ls').click(); document.getElementById('tool-grep').click(); }")
    wait_until(lambda: app.py("tool_settings")["settings"]["disabled_tools"] == [])
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")


def picker_ids(app: App, query: str) -> list[tuple[str, str]]:
    page = app.page
    search = page.locator("#model-search")
    search.fill(query)
    page.locator("#model-list").and_(page.locator(f"[data-query={json.dumps(query)}]")).wait_for()
    rows = page.locator(".model-row").evaluate_all("els => els.map(e => [e.dataset.provider, e.dataset.id])")
    return [(str(p), str(i)) for p, i in rows]


def test_model_picker_ranks_by_what_was_typed(app: App) -> None:
    page = app.page
    app.py(
        "save_custom_provider",
        provider={"name": "Home Ollama", "kind": "ollama", "baseUrl": "http://localhost:11434", "models": ["qwen3:8b"]},
        discover=False,
    )
    try:
        app.new_chat()
        page.locator("#model-button").click()
        page.locator("#model-search").wait_for()
        opus = picker_ids(app, "opus")
        opus_count = sum(1 for _, i in opus if "opus" in i)
        assert opus_count >= 3 and all("opus" in i for _, i in opus[:opus_count]), opus[:12]
        assert picker_ids(app, "gpt-5-mini")[0] == ("openai", "gpt-5-mini")
        # No query: the current model, then each provider's newest first.
        anthropic = [i for p, i in picker_ids(app, "") if p == "anthropic"]
        assert not any(i.startswith("claude-3") for i in anthropic[:5]), anthropic[:5]
        local = picker_ids(app, "local")
        assert ("Home Ollama", "qwen3:8b") in local
        assert all(p in ("Home Ollama", "Mock Claude") for p, _ in local), local  # the mock listens on 127.0.0.1
        assert picker_ids(app, "home ollama")[0] == ("Home Ollama", "qwen3:8b")
        page.keyboard.press("Escape")
        page.locator("dialog[open]").wait_for(state="detached")
    finally:
        app.py("delete_custom_provider", name="Home Ollama")
