"""Diffs and Undo in the tool cards (web/sandbox/renderers.js, py_agent/tools/history.py), in the
app through the mock provider: the agent writes a file and edits it; the edit's card shows the diff
with its + and - marks and an Undo that puts the previous bytes back (read from the session's
IndexedDB); the write's Undo, after the user changed the file, asks first and then removes the file
the agent had created. After a reload the edit's card says it was undone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

ORIGINAL = "first line\r\nsecond line\r\n"  # CRLF: the edit keeps it, the undo puts back these bytes

READ_FILE = """async ([session, path]) => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("py-agent-workspaces");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const record = await new Promise((resolve, reject) => {
    const request = db.transaction("files").objectStore("files").get([session, path]);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  db.close();
  return record ? record.data : null;
}"""

USER_EDIT = """async ([session, path, text]) => {
  const { pyodide } = await window.pyAgent.ready;
  const workspace = await pyodide.pyimport("py_agent.browser.workspace").open_page_workspace(session);
  await workspace.write.callKwargs(path, text, { source: "panel" });
}"""


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key="sk-undo-test-0001")
        yield app


def stored(app: App, session: str, path: str) -> Any:
    return app.page.evaluate(READ_FILE, [session, path])


def card(app: App, tool: str) -> Any:
    found = app.page.locator("#transcript details.tool").filter(has=app.page.locator(".tool-title", has_text=tool))
    found.first.wait_for()
    if found.first.get_attribute("open") is None:
        found.first.locator("summary").click()
    return found.first


def test_edit_card_shows_the_diff_and_undo_restores_the_bytes(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("mock claude", "Mock Claude")
    mock.reset()
    mock.script(
        [
            {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "notes.txt", "content": ORIGINAL}}]},
            {
                "tool_calls": [
                    {
                        "id": "e1",
                        "name": "edit",
                        "arguments": {"path": "notes.txt", "edits": [{"oldText": "second", "newText": "2nd"}]},
                    }
                ]
            },
            {"text": "Edited."},
        ]
    )
    app.type_and_enter("Write notes and edit them")
    page.locator("#transcript .msg.assistant", has_text="Edited.").wait_for(timeout=30_000)
    app.wait_idle()
    session = app.current_session_id()
    assert stored(app, session, "notes.txt") == "first line\r\n2nd line\r\n"

    edit = card(app, "edit")
    diff = edit.get_by_role("group", name="Changes (+ added lines, - removed lines)")
    assert diff.inner_text().splitlines() == [" 1 first line", "-2 second line", "+2 2nd line"]
    assert "New file." in card(app, "write").inner_text()

    edit.get_by_role("button", name="Undo").click()
    edit.get_by_role("status").filter(has_text="Undone: notes.txt restored.").wait_for()
    assert stored(app, session, "notes.txt") == ORIGINAL  # the previous bytes, CRLF and all
    assert edit.get_by_role("button", name="Undo").count() == 0

    # The user changes the file; undoing the write (which created it) asks first.
    page.evaluate(USER_EDIT, [session, "notes.txt", "the user's text\n"])
    write = card(app, "write")
    write.get_by_role("button", name="Undo").click()
    dialog = page.get_by_role("dialog", name="Undo the agent's change?")
    dialog.wait_for()
    assert "notes.txt changed after the agent's change" in dialog.inner_text()
    dialog.get_by_role("button", name="Cancel").click()
    write.get_by_role("status").filter(has_text="Not undone.").wait_for()
    assert stored(app, session, "notes.txt") == "the user's text\n"

    write.get_by_role("button", name="Undo").click()
    dialog.get_by_role("button", name="Undo anyway").click()
    write.get_by_role("status").filter(has_text="Undone: notes.txt restored.").wait_for()
    wait_until(lambda: stored(app, session, "notes.txt") is None)  # it did not exist before the write

    page.reload()
    page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
    edit = card(app, "edit")
    edit.get_by_role("status").filter(has_text="Undone.").wait_for(timeout=30_000)
    assert edit.get_by_role("button", name="Undo").count() == 0
