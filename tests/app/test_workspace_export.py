"""A session's workspace is exported and imported with it, through the app's commands
in CPython: the export carries it as one trailing `py-agent/workspace` custom entry (keys
scrubbed, file contents included), an import restores it into the new session and stores the
conversation without that entry; a malformed entry gives a clear warning and the conversation
is imported anyway."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.app.workspace_store import open_workspace
from py_agent.app.workspace_tools import workspace_plugin

KEY = "sk-ant-SECRET-key-for-export-tests-0042"


async def make_app(backend: MemoryBackend) -> WebApp:
    app = WebApp(
        backend,
        MemoryTabStore(),
        lambda _kind, _payload: None,
        demo_tokens_per_second=0,
        plugins=[workspace_plugin],
    )
    await app.start()
    return app


async def call(app: WebApp, command: str, **args: Any) -> dict[str, Any]:
    result = json.loads(await app.dispatch(command, json.dumps(args)))
    assert "error" not in result, result
    return result


async def chat_with_files(app: WebApp) -> str:
    await call(app, "new_session")
    await call(app, "send", text="make some files")
    assert app.chat is not None
    for _ in range(200):
        await app.chat.wait_idle()
        if not app.chat.streaming:
            break
        await asyncio.sleep(0.01)
    workspace = await open_workspace(app.chat.id)
    await workspace.write("src/main.py", f"print('hi')\nKEY = '{KEY}'\n", mtime=1_700_000_000_000)
    await workspace.write("données/日本.txt", "こんにちは", mtime=1_700_000_000_001)
    await workspace.write("bin/data.bin", b"\x00\xff" + KEY.encode() + b"\x01", mtime=1_700_000_000_002)
    return app.chat.id


async def test_export_carries_the_workspace_and_import_restores_it() -> None:
    backend = MemoryBackend()
    app = await make_app(backend)
    await call(app, "save_key", provider="anthropic", key=KEY, remember=True, test=False)
    sid = await chat_with_files(app)
    stored = list(all_lines(backend, sid))

    text = (await call(app, "export_session", id=sid))["text"]
    assert KEY not in text
    lines = text.splitlines()
    assert lines[1:-1] == stored  # pi's format, line for line, for the stored entries
    entry = json.loads(lines[-1])
    assert entry["type"] == "custom" and entry["customType"] == "py-agent/workspace"
    assert entry["parentId"] == json.loads(stored[-1])["id"]
    assert sorted(f["path"] for f in entry["data"]["files"]) == ["bin/data.bin", "données/日本.txt", "src/main.py"]
    current = (await call(app, "export_session"))["text"].splitlines()  # the open session: the same
    assert current[:-1] == lines[:-1] and json.loads(current[-1])["data"] == entry["data"]

    await call(app, "delete_session", id=sid)
    imported = await call(app, "import_session", text=text)
    assert imported["sessionId"] == sid and imported["warnings"] == []
    assert list(all_lines(backend, sid)) == stored  # the workspace entry is not stored
    restored = await open_workspace(sid)
    assert [(f.path, f.data, f.mtime) for f in restored.files()] == [
        ("bin/data.bin", b"\x00\xff[redacted]\x01", 1_700_000_000_002),
        ("données/日本.txt", "こんにちは", 1_700_000_000_001),
        ("src/main.py", "print('hi')\nKEY = '[redacted]'\n", 1_700_000_000_000),
    ]

    # Imported again: a copy under a new id, with its own copy of the workspace.
    copy = await call(app, "import_session", text=text)
    assert copy["sessionId"] != sid
    assert [f.path for f in (await open_workspace(copy["sessionId"])).files()] == [f.path for f in restored.files()]
    again = await app.store.load(copy["sessionId"])
    assert again is not None and [e.to_json() for e in again.session] == [json.loads(line) for line in stored]


async def test_a_malformed_workspace_entry_warns_and_the_conversation_is_imported() -> None:
    backend = MemoryBackend()
    app = await make_app(backend)
    sid = await chat_with_files(app)
    text = (await call(app, "export_session", id=sid))["text"]
    lines = text.splitlines()
    entry = json.loads(lines[-1])
    entry["data"]["files"][0]["data"] = "%%% not base64"
    entry["data"]["files"][1]["path"] = "../../etc/passwd"
    broken = "\n".join([*lines[:-1], json.dumps(entry)]) + "\n"
    await call(app, "delete_session", id=sid)

    imported = await call(app, "import_session", text=broken)
    warnings = imported["warnings"]
    assert len(warnings) == 2, warnings
    assert "file record #1: bin/data.bin: invalid base64 data; it was skipped" in warnings[0]
    assert "file record #2: Invalid path '../../etc/passwd'" in warnings[1]
    assert list(all_lines(backend, sid)) == lines[1:-1]
    assert [f.path for f in (await open_workspace(sid)).files()] == ["src/main.py"]

    # Not even an object: no files, one clear warning, the conversation is there.
    entry["data"] = "garbage"
    await call(app, "delete_session", id=sid)
    imported = await call(app, "import_session", text="\n".join([*lines[:-1], json.dumps(entry)]) + "\n")
    assert imported["warnings"] == [
        "The workspace saved in this file is malformed (expected an object with a 'files' list, found str); "
        "no files were restored"
    ]
    assert list(all_lines(backend, sid)) == lines[1:-1]
    assert (await open_workspace(sid)).files() == []
