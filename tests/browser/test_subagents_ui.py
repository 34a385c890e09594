"""The subagent tool in the page: the chat card (call summary, live progress, children
expandable to their transcripts), the children's usage in the session total, the confirmation of
imported agents, and Settings → Agents (add, edit, delete, kept across a reload).

One booted page for the module; replies are scripted on the mock provider server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

CHILD_REPLY = (
    "**Found** the answer in `notes.md`, after looking around for a while. "
    '<img src=x onerror="window.__pwned=1"> and more words to stream slowly.'
)
TASKS = [
    {"agent": "scout", "task": "Look at the first part"},
    {"agent": "scout", "task": "Look at the second part"},
    {"agent": "reviewer", "task": "Review the third part"},
]
IMPORTED = """---
name: outsider
description: An agent from a file
tools: read
---

You are an outsider.
"""


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    claude = {"id": "mock-claude", "name": "Mock Claude", "cost": {"input": 3, "output": 15}}
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [claude], key="sk-ant-test-subagents")
        app.py("set_model", provider="Mock Claude", id="mock-claude")
        yield app


def open_agents_settings(app: App) -> Any:
    page = app.page
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Agents").click()
    panel = page.locator("#settings-panel-agents")
    panel.locator(".agent-row").first.wait_for()
    return panel


def close_dialog(app: App) -> None:
    app.page.keyboard.press("Escape")
    app.page.locator("dialog[open]").wait_for(state="detached")


def test_parallel_run_shows_progress_children_transcripts_and_usage(app: App, mock: MockProviderServer) -> None:
    page = app.page
    if "subagent" not in page.evaluate("() => window.pyAgentApp.state.tools"):
        app.new_chat()
    assert "subagent" in page.evaluate("() => window.pyAgentApp.state.tools")
    mock.reset()
    mock.script(
        [
            {
                "tool_calls": [{"id": "call_sub_1", "name": "subagent", "arguments": {"tasks": TASKS}}],
                "usage": {"input": 1000, "output": 10},
            },
            {"text": CHILD_REPLY, "delay_ms": 40, "chunk_size": 6, "usage": {"input": 100, "output": 20}, "repeat": 3},
            {"text": "All three subagents reported back.", "usage": {"input": 2000, "output": 30}},
        ]
    )
    app.type_and_enter("Split this work between subagents")
    card = page.locator("#transcript details.tool", has=page.locator(".tool-title", has_text="subagent")).first
    card.wait_for(timeout=20_000)
    card.locator(":scope > summary").click()  # open the card while it runs
    progress = card.locator(".subagent-progress")
    progress.filter(has_text=re.compile(r"parallel \d/3 done, [1-3] running")).wait_for(timeout=20_000)
    assert re.search(r"\d/3 done", card.locator(".tool-summary").inner_text())
    page.locator("#transcript .msg.assistant", has_text="All three subagents reported back.").wait_for(timeout=30_000)
    app.wait_idle()

    assert card.get_attribute("data-status") == "done"
    assert progress.inner_text().strip() == "✓ parallel 3/3 succeeded"
    children = card.locator(".subagent-child")
    assert children.count() == 3
    assert card.locator(".subagent-child[data-status='completed']").count() == 3
    assert [children.nth(i).locator(".subagent-agent").inner_text() for i in range(3)] == ["scout", "scout", "reviewer"]
    # Two tasks go to one agent: each child names its task's number, as the tool's result does.
    assert [children.nth(i).locator(".subagent-number").inner_text() for i in range(3)] == [
        "Task 1:",
        "Task 2:",
        "Task 3:",
    ]
    first = children.first
    assert first.locator(".subagent-output strong", has_text="Found").count() == 1  # Markdown, rendered
    assert "2 turns" not in first.locator(".subagent-usage").inner_text()
    assert first.locator(".subagent-usage").inner_text().startswith("1 turn ↑100 ↓20")
    assert card.locator(".subagent-total").inner_text().startswith("Total: 3 turns ↑300 ↓60")

    # A child expands to its own transcript: its task, its reply, its system prompt.
    first.locator("details.subagent-transcript > summary").click()
    body = first.locator(".subagent-transcript-body")
    body.wait_for()
    assert body.locator(".subagent-user-text").inner_text() == "Task: Look at the first part"
    assert body.locator(".subagent-msg.assistant .md strong", has_text="Found").count() == 1
    assert body.locator(".subagent-system").count() == 1
    assert "Split this work" not in body.inner_text()  # never the parent's transcript
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#transcript .subagent-card img").count() == 0

    # The session total includes the children's usage (3 x 100 in, 3 x 20 out).
    wait_until(lambda: page.evaluate("() => window.pyAgentApp.state.usage.input") == 3300)
    usage = page.evaluate("() => window.pyAgentApp.state.usage")
    assert usage["output"] == 100
    assert abs(usage["cost"] - (3300 * 3 + 100 * 15) / 1e6) < 1e-9
    assert page.locator("#session-usage").inner_text().startswith("↑3.3k ↓100")

    # The children's requests carried only their own context.
    child_bodies = [r["body"] for r in mock.requests[1:4]]
    assert all(len(b["messages"]) == 1 for b in child_bodies)
    assert sorted(
        b["messages"][0]["content"][0]["text"]
        if isinstance(b["messages"][0]["content"], list)
        else b["messages"][0]["content"]
        for b in child_bodies
    ) == sorted(f"Task: {t['task']}" for t in TASKS)


def test_imported_agent_asks_for_confirmation_before_first_run(app: App, mock: MockProviderServer) -> None:
    page = app.page
    panel = open_agents_settings(app)
    panel.locator("#agent-import-file").set_input_files(
        files=[{"name": "outsider.md", "mimeType": "text/markdown", "buffer": IMPORTED.encode()}]
    )
    row = panel.locator(".agent-row[data-name='outsider']")
    row.wait_for()
    assert row.locator(".agent-pending").inner_text() == "needs confirmation"
    assert "from outsider.md" in row.inner_text()
    close_dialog(app)

    app.new_chat()
    mock.reset()
    mock.script(
        [
            {
                "tool_calls": [
                    {"id": "call_sub_2", "name": "subagent", "arguments": {"agent": "outsider", "task": "Say hi"}}
                ]
            },
            {"text": "Hi from the outsider."},
            {"text": "The outsider said hi."},
        ]
    )
    app.type_and_enter("Ask the outsider")
    question = page.locator("dialog[open]", has_text="Run imported agents?")
    question.wait_for(timeout=20_000)
    assert "outsider: outsider.md" in question.inner_text()
    assert len(mock.requests) == 1  # nothing ran before the answer
    question.locator("button", has_text="Allow").click()
    page.locator("#transcript .msg.assistant", has_text="The outsider said hi.").wait_for(timeout=20_000)
    app.wait_idle()
    card = page.locator("#transcript details.tool[data-status='done']").first
    assert card.locator(".tool-summary").inner_text().startswith("outsider · Say hi")
    # Confirmed once: no longer pending.
    panel = open_agents_settings(app)
    assert panel.locator(".agent-row[data-name='outsider']").get_attribute("data-status") == "active"
    close_dialog(app)


def stored_agents(app: App) -> list[dict[str, Any]]:
    """The user definitions in IndexedDB (store "settings", key "subagent.agents": out-of-line keys,
    so found by shape among the store's values)."""
    for value in app.idb_dump().get("settings", []):
        if isinstance(value, str) and value.startswith("["):
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, list) and value and all(isinstance(r, dict) and "systemPrompt" in r for r in value):
            return value
    return []


def test_user_agent_is_added_edited_kept_across_reload_and_deleted(app: App) -> None:
    page = app.page
    panel = open_agents_settings(app)
    # Built-ins are read-only: they offer "Customize", not "Delete".
    scout = panel.locator(".agent-row[data-name='scout']")
    assert scout.locator("button", has_text="Customize").count() == 1
    assert scout.locator("button", has_text="Delete").count() == 0

    panel.locator("#agent-new").click()
    editor = panel.locator("#agent-editor")
    editor.fill("---\nname: tester\ndescription: Tests things\ntools: read, ls\n---\n\nYou test.\n")
    panel.locator("#agent-save").click()
    row = panel.locator(".agent-row[data-name='tester']")
    row.wait_for()
    assert "Tests things" in row.inner_text() and "tools: read, ls" in row.inner_text()

    row.locator("button", has_text="Edit").click()
    editor.wait_for()
    assert "name: tester" in editor.input_value()
    editor.fill(editor.input_value().replace("Tests things", "Tests everything"))
    panel.locator("#agent-save").click()
    panel.locator(".agent-row[data-name='tester']", has_text="Tests everything").wait_for()

    # A broken definition is refused with a message.
    panel.locator("#agent-new").click()
    editor.fill("no frontmatter here")
    panel.locator("#agent-save").click()
    panel.locator("#agent-editor-error", has_text="name").wait_for()
    panel.locator("button", has_text="Cancel").click()
    close_dialog(app)

    wait_until(
        lambda: any(
            r.get("name") == "tester" and r.get("description") == "Tests everything" for r in stored_agents(app)
        )
    )
    page.reload()
    page.locator("html[data-app='ready'], html[data-app='error']").wait_for(state="attached", timeout=120_000)
    assert page.get_attribute("html", "data-app") == "ready"

    panel = open_agents_settings(app)
    row = panel.locator(".agent-row[data-name='tester']")
    assert "Tests everything" in row.inner_text()
    assert panel.locator(".agent-row[data-name='outsider']").get_attribute("data-status") == "active"
    row.locator("button", has_text="Delete").click()
    page.locator("dialog.small-dialog[open]", has_text="Delete agent").get_by_role(
        "button", name="Delete", exact=True
    ).click()
    row.wait_for(state="detached")
    close_dialog(app)
    wait_until(lambda: not any(r.get("name") == "tester" for r in stored_agents(app)))
    assert app.page_errors == []
