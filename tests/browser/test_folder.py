"""A folder on disk as a session's workspace, in Chromium through the chat app and the mock provider
(web/files/folder-bar.js, web/sandbox/folder.js, py_agent/browser/folder.py). The native picker is
replaced by a folder of the origin private file system (navigator.storage.getDirectory()) holding a
small project, which the test reads and changes through its own handle:

- "Open a folder…" on the welcome screen makes it the workspace; its name shows above the composer
  and in the Files panel; `.git/` and `node_modules/` are not read;
- the model's `ls`, `read`, `edit`, `write` and `grep` act on the folder's real entries; a file the
  workspace did not read (node_modules/) is not overwritten, nothing is written in `.git/`;
- attachments and the Files panel's uploads land in the folder;
- the `python` tool reads a CSV from the folder and writes a result into it; a file it did not
  touch keeps its lastModified;
- a file changed through the handle between two tool calls is what the second `read` returns;
- the model's `write` over the user's README.md asks first: "Don't allow" leaves it as it was and
  the tool result says the user declined; "Allow" writes it;
- after a reload (permission back to "prompt", as Chromium does) "Allow access to my-project again"
  is offered, and once allowed the tools work on the folder again;
- "Close folder" goes back to the stored workspace, which holds what the agent wrote;
- a folder gone after a reload is said so, and the chat reads its stored copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from test_a11y import axe_source as axe_source
from test_a11y import axe_violations
from test_workspace_panel import open_files
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

# The picker answers with an OPFS folder; after a reload (sessionStorage flag) its permission is
# "prompt" until requestPermission is called, as a real folder's is in Chromium.
PICKER = """(() => {
  window.showDirectoryPicker = async () =>
    (await navigator.storage.getDirectory()).getDirectoryHandle(window.__folderName ?? "my-project", { create: true });
  let granted = sessionStorage.getItem("folder-permission") !== "prompt";
  const proto = FileSystemHandle.prototype;
  proto.queryPermission = async function () { return granted ? "granted" : "prompt"; };
  proto.requestPermission = async function () {
    window.__permissionAsked = (window.__permissionAsked ?? 0) + 1;
    granted = true;
    return "granted";
  };
})();"""

# In the page: the project's folder, its files as {path: [text, lastModified]} (or one written).
FOLDER = """async () => (await navigator.storage.getDirectory()).getDirectoryHandle("my-project", { create: true })"""
WRITE = f"""async ([path, text]) => {{
  let folder = await ({FOLDER})();
  const parts = path.split("/");
  const name = parts.pop();
  for (const part of parts) folder = await folder.getDirectoryHandle(part, {{ create: true }});
  const writable = await (await folder.getFileHandle(name, {{ create: true }})).createWritable();
  await writable.write(text);
  await writable.close();
}}"""
READ_ALL = f"""async () => {{
  const out = {{}};
  const walk = async (folder, prefix) => {{
    for await (const [name, entry] of folder.entries()) {{
      if (entry.kind === "directory") await walk(entry, prefix + name + "/");
      else if (!name.endsWith(".crswap")) {{  // Chromium's file beside one being written
        const file = await entry.getFile();
        out[prefix + name] = [await file.text(), file.lastModified];
      }}
    }}
  }};
  await walk(await ({FOLDER})(), "");
  return out;
}}"""

PROJECT = {
    "README.md": "# My project\nTODO: write the docs\n",
    "data.csv": "region,total\nNorth,120\nSouth,80\n",
    "src/app.py": "print('hello')\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "node_modules/left-pad/index.js": "module.exports = 1; // TODO\n",
    # Ignored by the folder's .gitignore: read, but grep and find pass them by (as rg and fd do).
    ".gitignore": "build/\n*.log\n",
    "build/out.py": "print('built')\n",
    "debug.log": "print('logged')\n",
}


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    with open_app(browser, base_url) as app:
        app.page.context.add_init_script(PICKER)
        reload(app)
        app.add_provider("Folder", mock, [{"id": "mock-folder", "name": "Mock Folder"}], key="sk-mock-folder-key-0001")
        for path, text in PROJECT.items():
            app.page.evaluate(WRITE, [path, text])
        yield app


def reload(app: App) -> None:
    app.page.reload()
    app.page.locator("html[data-app='ready']").wait_for(state="attached", timeout=180_000)


def disk(app: App) -> dict[str, tuple[str, int]]:
    return {path: (text, mtime) for path, (text, mtime) in app.page.evaluate(READ_ALL).items()}


def run_tools(app: App, mock: MockProviderServer, calls: list[dict[str, Any]], prompt: str) -> None:
    mock.script([{"tool_calls": calls}, {"text": f"Done: {prompt}"}])
    app.type_and_enter(prompt)
    app.page.locator("#transcript .msg.assistant", has_text=f"Done: {prompt}").wait_for(timeout=180_000)
    app.wait_idle(timeout=60_000)


def sent_results(mock: MockProviderServer) -> dict[str, str]:
    """tool_use_id -> the text of the tool results the model received (anthropic-messages)."""
    out: dict[str, str] = {}
    for request in mock.requests:
        for message in request["body"].get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
                    out[block["tool_use_id"]] = text
    return out


def test_the_tools_work_on_the_folder(app: App, mock: MockProviderServer) -> None:
    page = app.page
    app.new_chat()
    app.choose_model("Mock Folder", "Mock Folder")
    mock.reset()
    page.locator("#welcome-folder").get_by_role("button", name="Open a folder…").click()
    bar = page.locator("#folder-bar")
    bar.locator(".pa-open-folder", has_text="Folder: my-project").wait_for(timeout=60_000)
    assert "not read: .git/, node_modules/" in bar.inner_text()

    # An attachment is saved in the folder (uploads/), as in the stored workspace.
    page.locator("#attach-input").set_input_files(
        files=[{"name": "brief.txt", "mimeType": "text/plain", "buffer": b"the brief\n"}]
    )
    page.locator('#attachments .att-chip[data-status="ready"]').wait_for(timeout=60_000)

    run_tools(
        app,
        mock,
        [
            {"id": "ls1", "name": "ls", "arguments": {"path": ""}},
            {"id": "rd1", "name": "read", "arguments": {"path": "README.md"}},
            {
                "id": "ed1",
                "name": "edit",
                "arguments": {
                    "path": "README.md",
                    "edits": [{"oldText": "TODO: write the docs", "newText": "Docs: see notes/"}],
                },
            },
            {"id": "wr1", "name": "write", "arguments": {"path": "notes/plan.md", "content": "step 1\n"}},
            {"id": "gr1", "name": "grep", "arguments": {"pattern": "print|module|refs"}},
            {"id": "fd1", "name": "find", "arguments": {"pattern": "*.py"}},
            # Files the workspace did not read are not overwritten, and .git/ is not written at all.
            {"id": "nm1", "name": "write", "arguments": {"path": "node_modules/left-pad/index.js", "content": "x"}},
            {"id": "gt1", "name": "write", "arguments": {"path": ".git/hooks/pre-commit", "content": "rm -rf ~"}},
        ],
        "work on the files",
    )
    results = sent_results(mock)
    listed = sorted(results["ls1"].split())
    assert listed == [".gitignore", "README.md", "build/", "data.csv", "debug.log", "src/", "uploads/"], listed
    assert "TODO: write the docs" in results["rd1"]
    files = disk(app)
    assert files["uploads/brief.txt"][0] == "the brief\n"
    assert files["README.md"][0] == "# My project\nDocs: see notes/\n"
    assert files["notes/plan.md"][0] == "step 1\n"
    assert "was not read" in results["nm1"] and "not overwritten" in results["nm1"]
    assert "inside a .git folder" in results["gt1"]
    assert files["node_modules/left-pad/index.js"][0] == PROJECT["node_modules/left-pad/index.js"]
    assert ".git/hooks/pre-commit" not in files
    # Not .git/HEAD nor node_modules/ (never read), nor build/ and *.log (.gitignore).
    assert results["gr1"].strip() == "src/app.py:1: print('hello')", results["gr1"]
    assert results["fd1"].split() == ["src/app.py"], results["fd1"]

    # The Files panel names the folder and lists its files.
    panel = open_files(app)
    assert panel.locator(".pa-open-folder").inner_text() == "Folder: my-project"
    wait_until(lambda: panel.locator(".pa-file-name", has_text="plan.md").count() == 1, timeout=30)
    # A file uploaded in the panel lands in the folder.
    panel.locator(".pa-preview > input[type=file]:not([webkitdirectory])").set_input_files(
        files=[{"name": "uploaded.txt", "mimeType": "text/plain", "buffer": b"uploaded\n"}]
    )
    wait_until(lambda: disk(app).get("uploaded.txt", ("", 0))[0] == "uploaded\n", timeout=30)


def test_python_reads_and_writes_the_folder_and_leaves_the_rest(app: App, mock: MockProviderServer) -> None:
    before = disk(app)
    code = (
        "import csv\n"
        "rows = list(csv.DictReader(open('data.csv')))\n"
        "import os\nos.makedirs('out', exist_ok=True)\n"
        "open('out/total.txt', 'w').write(str(sum(int(r['total']) for r in rows)))\n"
        "print('rows', len(rows))\n"
    )
    run_tools(app, mock, [{"id": "py1", "name": "python", "arguments": {"code": code}}], "sum the csv")
    assert "rows 2" in sent_results(mock)["py1"]
    after = disk(app)
    assert after["out/total.txt"][0] == "200"
    for path in ("data.csv", "src/app.py", "README.md", "notes/plan.md"):
        assert after[path] == before[path], path  # same bytes, same lastModified


def test_a_change_made_outside_is_what_the_next_read_returns(app: App, mock: MockProviderServer) -> None:
    run_tools(app, mock, [{"id": "rd2", "name": "read", "arguments": {"path": "src/app.py"}}], "read it")
    assert "print('hello')" in sent_results(mock)["rd2"]
    app.page.evaluate(WRITE, ["src/app.py", "print('changed in an editor')\n"])
    app.page.evaluate(WRITE, ["src/new_module.py", "x = 1\n"])
    run_tools(
        app,
        mock,
        [
            {"id": "rd3", "name": "read", "arguments": {"path": "src/app.py"}},
            {"id": "fd3", "name": "find", "arguments": {"pattern": "*.py"}},
        ],
        "read it again",
    )
    results = sent_results(mock)
    assert "changed in an editor" in results["rd3"]
    assert "new_module.py" in results["fd3"]


def test_a_stale_edit_is_refused_and_an_edit_undone_from_its_card_restores_the_folders_bytes(
    app: App, mock: MockProviderServer
) -> None:
    edit = {"path": "src/app.py", "edits": [{"oldText": "editor", "newText": "agent"}]}
    run_tools(app, mock, [{"id": "rd4", "name": "read", "arguments": {"path": "src/app.py"}}], "read before editing")
    app.page.evaluate(WRITE, ["src/app.py", "print('changed in an editor again')\n"])
    run_tools(app, mock, [{"id": "ed4", "name": "edit", "arguments": edit}], "edit it now")
    assert "was modified since you last read it" in sent_results(mock)["ed4"]
    assert disk(app)["src/app.py"][0] == "print('changed in an editor again')\n"  # not overwritten

    run_tools(app, mock, [{"id": "rd5", "name": "read", "arguments": {"path": "src/app.py"}}], "read it once more")
    run_tools(app, mock, [{"id": "ed5", "name": "edit", "arguments": edit}], "edit it after reading")
    assert disk(app)["src/app.py"][0] == "print('changed in an agent again')\n"

    page = app.page
    cards = page.locator("#transcript details.tool").filter(has=page.locator(".tool-title", has_text="edit"))
    card = cards.last
    if card.get_attribute("open") is None:
        card.locator("summary").click()
    card.get_by_role("button", name="Undo").click()
    card.get_by_role("status").filter(has_text="Undone: src/app.py restored.").wait_for(timeout=30_000)
    assert disk(app)["src/app.py"][0] == "print('changed in an editor again')\n"  # the previous bytes, on disk


def test_overwriting_a_users_file_asks_first(app: App, mock: MockProviderServer, axe_source: str) -> None:
    page = app.page
    before = disk(app)["README.md"]
    for answer, call in (("Don't allow", "ow1"), ("Allow", "ow2")):
        mock.script(
            [
                {"tool_calls": [{"id": call, "name": "write", "arguments": {"path": "README.md", "content": "new\n"}}]},
                {"text": f"Done: {call}"},
            ]
        )
        app.type_and_enter(f"overwrite the readme ({call})")
        dialog = page.get_by_role("dialog", name="Allow this change to your files?")
        dialog.wait_for(timeout=120_000)
        assert "The agent wants to overwrite README.md in my-project" in dialog.inner_text()
        assert dialog.get_by_role("button", name="Allow for this folder in this session").is_visible()
        if answer == "Don't allow":
            assert axe_violations(page, axe_source) == []
        dialog.get_by_role("button", name=answer, exact=True).click()
        page.locator("#transcript .msg.assistant", has_text=f"Done: {call}").wait_for(timeout=120_000)
        app.wait_idle(timeout=60_000)
        if answer == "Don't allow":
            assert "The user declined" in sent_results(mock)[call]
            assert disk(app)["README.md"] == before  # same bytes, same lastModified
    assert "Successfully wrote" in sent_results(mock)["ow2"]
    assert disk(app)["README.md"][0] == "new\n"


def test_after_a_reload_access_is_asked_again_then_the_tools_work(
    app: App, mock: MockProviderServer, axe_source: str
) -> None:
    page = app.page
    page.evaluate("() => sessionStorage.setItem('folder-permission', 'prompt')")
    reload(app)
    allow = page.get_by_role("button", name="Allow access to my-project again")
    allow.wait_for(timeout=60_000)
    assert page.evaluate("() => window.__permissionAsked ?? 0") == 0  # asked only on the click
    assert axe_violations(page, axe_source) == []
    allow.click()
    page.locator("#folder-bar .pa-open-folder", has_text="Folder: my-project").wait_for(timeout=60_000)
    assert page.evaluate("() => window.__permissionAsked") == 1
    run_tools(
        app,
        mock,
        [
            {"id": "ls4", "name": "ls", "arguments": {"path": "src"}},
            {"id": "wr4", "name": "write", "arguments": {"path": "after-reload.txt", "content": "back\n"}},
        ],
        "after the reload",
    )
    assert "new_module.py" in sent_results(mock)["ls4"]
    assert disk(app)["after-reload.txt"][0] == "back\n"

    # The export carries the files the agent (and the user) wrote here, not the whole project.
    exported = app.py("export_session")["text"].splitlines()
    entry = json.loads(exported[-1])
    assert entry["customType"] == "py-agent/workspace"
    assert sorted(f["path"] for f in entry["data"]["files"]) == [
        "README.md",
        "after-reload.txt",
        "notes/plan.md",
        "out/total.txt",
        "src/app.py",  # edited (and its edit undone) by the agent
        "uploaded.txt",
        "uploads/brief.txt",
    ]

    # Closed: the stored workspace (what the agent wrote), the folder untouched.
    page.locator("#folder-bar").get_by_role("button", name="Close folder my-project").click()
    page.locator("#folder-bar").wait_for(state="hidden")
    session = app.current_session_id()
    stored = json.loads(
        page.evaluate(
            """async (sid) => (await window.pyAgent.ready).pyodide.runPythonAsync(`
from py_agent.browser.workspace import open_page_workspace
import json
json.dumps((await open_page_workspace(${JSON.stringify(sid)})).paths())`)""",
            session,
        )
    )
    assert "after-reload.txt" in stored and "out/total.txt" in stored and "data.csv" not in stored
    assert "data.csv" in disk(app)


def test_a_folder_gone_after_a_reload_is_said_and_the_chat_goes_on_with_its_copy(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    page.evaluate("() => { window.__folderName = 'old-project'; }")
    app.new_chat()
    page.locator("#welcome-folder").get_by_role("button", name="Open a folder…").click()
    page.locator("#folder-bar .pa-open-folder", has_text="Folder: old-project").wait_for(timeout=60_000)
    run_tools(app, mock, [{"id": "wr5", "name": "write", "arguments": {"path": "kept.txt", "content": "k\n"}}], "keep")
    page.evaluate(
        "async () => (await navigator.storage.getDirectory()).removeEntry('old-project', { recursive: true })"
    )
    reload(app)
    # Still "prompt" after the reload (the flag of the test above): whether it is there is known once allowed.
    page.get_by_role("button", name="Allow access to old-project again").click(timeout=60_000)
    page.locator("#folder-bar", has_text="The folder old-project is gone or was renamed").wait_for(timeout=60_000)
    run_tools(app, mock, [{"id": "rd5", "name": "read", "arguments": {"path": "kept.txt"}}], "read the copy")
    assert sent_results(mock)["rd5"].strip() == "k"
