"""The ``javascript`` and ``python`` tools: code the agent runs in sandboxes of the page.

Both run in an opaque-origin ``<iframe sandbox="allow-scripts">`` (``sandbox/frame.html``, which
build.py writes from ``web/sandbox/frame.template.html``) and, inside it, a worker: the code
cannot reach this page, its storage or its keys, an endless loop never blocks the page, and a
timeout or abort removes the frame. ``python`` is a separate Pyodide interpreter (never the
agent's own), kept warm between runs; the workspace's files are written into its ``/workspace``
before a run and what the run changed is written back after. The JavaScript half lives in
``web/sandbox/host.js``; this module is the tools' Python side.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from ..app.workspace_store import SettingsSource
from ..core.types import AgentTool, AgentToolResult, AgentToolUpdateCallback
from ..tools._text import format_size, keep_tail
from ..tools.files import ToolError
from ..tools.settings import ToolSettings
from ..tools.workspace import DeclinedError, Workspace, WorkspaceError, WorkspaceFile

__all__ = [
    "JAVASCRIPT_DESCRIPTION",
    "PYTHON_DESCRIPTION",
    "SettingsSource",
    "load_sandbox_api",
    "make_javascript_tool",
    "make_python_tool",
]

DEFAULT_SETTINGS = ToolSettings()
UPDATE_INTERVAL_S = 0.2
_api: Any = None
_api_lock: asyncio.Lock | None = None


def js_module() -> Any:
    """Pyodide's ``js`` module (the page's globals)."""
    import js  # type: ignore[import-not-found]

    return js


def ffi() -> Any:
    """``pyodide.ffi`` (``to_js``, ``create_proxy``, ...)."""
    import pyodide.ffi  # type: ignore[import-not-found]

    return pyodide.ffi


async def load_sandbox_api() -> Any:
    """``globalThis.pyAgentSandbox`` (web/sandbox/index.js), loading the module when the page has not."""
    global _api, _api_lock
    if _api is not None:
        return _api
    js = js_module()
    create_once_callable = ffi().create_once_callable
    if _api_lock is None:
        _api_lock = asyncio.Lock()
    async with _api_lock:
        api = getattr(js.globalThis, "pyAgentSandbox", None)
        if api is None:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[None] = loop.create_future()

            def settle(error: str | None) -> None:
                if not done.done():
                    if error:
                        done.set_exception(RuntimeError(error))
                    else:
                        done.set_result(None)

            script = js.document.createElement("script")
            script.type = "module"
            script.src = js.URL.new("sandbox/index.js", js.document.baseURI).href
            script.addEventListener("load", create_once_callable(lambda *_: settle(None)))
            script.addEventListener(
                "error", create_once_callable(lambda *_: settle("sandbox/index.js could not be loaded"))
            )
            js.document.head.append(script)
            await done
            api = getattr(js.globalThis, "pyAgentSandbox", None)
            if api is None:
                raise RuntimeError("sandbox/index.js did not set up globalThis.pyAgentSandbox")
        _api = api
    return _api


def plain(value: Any) -> Any:
    """A converted JS value with JavaScript's ``null`` (Pyodide's ``jsnull``) as ``None``, deeply."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if type(value).__name__ == "JsNull":
        return None
    return value


def _settings(source: SettingsSource) -> ToolSettings:
    return source() if callable(source) else source


class _Progress:
    """Live output through ``on_update``, at most every 200 ms."""

    def __init__(self, on_update: AgentToolUpdateCallback | None, details: dict[str, Any]) -> None:
        self.on_update = on_update
        self.details = details
        self.parts: list[str] = []
        self.last = 0.0

    def add(self, text: str) -> None:
        self.parts.append(text)
        now = time.monotonic()
        if self.on_update is not None and now - self.last >= UPDATE_INTERVAL_S:
            self.last = now
            self.on_update(
                AgentToolResult(
                    content=[TextContent(text=keep_tail("".join(self.parts)))],
                    details={**self.details, "status": "running"},
                )
            )


def _file_data(data: Any) -> str | bytes:
    """A JS string or Uint8Array (as converted by Pyodide) as ``str`` or ``bytes``."""
    if isinstance(data, str):
        return data
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    to_bytes = getattr(data, "to_bytes", None)
    if callable(to_bytes):
        return bytes(to_bytes())
    raise WorkspaceError("file data must be a string or bytes")


def _as_workspace_data(raw: bytes, previous: WorkspaceFile | None) -> str | bytes:
    """Bytes from a sandbox kept as text when they are UTF-8 (and the file was not binary)."""
    if previous is not None and isinstance(previous.data, bytes):
        return raw
    if b"\x00" in raw:
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _files_note(written: list[WorkspaceFile], deleted: list[str], problems: list[str]) -> str:
    parts = []
    if written:
        parts.append("wrote " + ", ".join(f"{f.path} ({format_size(f.size)})" for f in written))
    if deleted:
        parts.append("deleted " + ", ".join(deleted))
    note = f"[Workspace: {'; '.join(parts)}]" if parts else ""
    for problem in problems:
        note += f"\n[Workspace: {problem}]"
    return note.strip()


def _run_result(pieces: list[str], value: Any, note: str, details: dict[str, Any]) -> AgentToolResult:
    """A run that succeeded, as both tools report it: its output, then ``=> value``, then the
    workspace note."""
    if value is not None:
        pieces.append(f"=> {value}")
    if note:
        pieces.append(note)
    text = "\n".join(pieces) if pieces else "Code executed successfully (no output)"
    return AgentToolResult(content=[TextContent(text=keep_tail(text))], details=details)


# ---------------------------------------------------------------------------------------------
# javascript

JAVASCRIPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "description": "Brief title describing what the code does, in active form, e.g. 'Calculating sum'",
        },
        "code": {"type": "string", "description": "JavaScript code to execute"},
    },
    "required": ["code"],
}

JAVASCRIPT_DESCRIPTION = "\n".join(
    [
        "Execute JavaScript (ES2023) in a sandboxed Web Worker and get its console output and result.",
        "",
        "Use it for calculations, data processing and transformations, generating files (CSV, JSON, SVG, "
        "HTML), and quick checks of JavaScript code.",
        "",
        "Environment:",
        "- A fresh worker for every call: no DOM (no document/window), nothing kept between calls. "
        "OffscreenCanvas, TextEncoder, crypto, Intl, etc. are available.",
        "- Top-level await works. The value of the last expression is returned (like a REPL); code that uses "
        "top-level await must `return` the value instead.",
        "- console.log/info/warn/error output is captured.",
        "- Workspace files (the same files as the read/write/edit tools):",
        '  - `await workspace.read(path)` -> string; `await workspace.read(path, {encoding: "binary"})` -> Uint8Array',
        "  - `await workspace.write(path, data)` (string, Uint8Array, ArrayBuffer or Blob)",
        "  - `await workspace.list(folder?)` -> [{path, size, mtime}]",
        "- {network}",
        "- Execution ends after {timeout} seconds.",
        "",
        "Files written here appear in the workspace panel; HTML and SVG files are previewed there.",
    ]
)


def _javascript_description(settings: ToolSettings) -> str:
    network = (
        "Network access is ON (the user allowed it): fetch, XMLHttpRequest, WebSocket and `await import(url)` work "
        "with servers that allow cross-origin requests."
        if settings.javascript_network
        else "There is NO network access (fetch, XMLHttpRequest, WebSocket and import() of URLs fail); "
        "the user can allow it in the settings."
    )
    return JAVASCRIPT_DESCRIPTION.replace("{network}", network).replace(
        "{timeout}", str(round(settings.javascript_timeout_ms / 1000))
    )


def make_javascript_tool(workspace: Workspace, settings: SettingsSource = DEFAULT_SETTINGS) -> AgentTool:
    """The ``javascript`` tool over ``workspace`` (needs the page: Pyodide and web/sandbox/)."""

    async def serve_file(
        op: str, path: str, data: Any, encoding: str, written: list[WorkspaceFile], change: str
    ) -> Any:
        to_js = ffi().to_js
        if op == "read":
            file = workspace.get(path)
            if file is None:
                raise WorkspaceError(f"File not found: {path}")
            if encoding == "binary":
                return to_js(file.to_bytes())
            text = file.text()
            if text is None:
                raise WorkspaceError(f"{path} is a binary file: read it with {{encoding: 'binary'}}")
            return text
        if op == "write":
            file = await workspace.write(path, _file_data(data), source="javascript", change=change)
            written.append(file)
            return None
        if op == "list":
            listing = [{"path": f.path, "size": f.size, "mtime": f.mtime} for f in workspace.files(path)]
            return to_js(listing, dict_converter=js_module().Object.fromEntries)
        raise WorkspaceError(f"Unknown workspace operation {op!r}")

    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Execution aborted")
        js, create_proxy, to_js = js_module(), ffi().create_proxy, ffi().to_js
        current = _settings(settings)
        api = await load_sandbox_api()
        code = params["code"]
        title = params.get("title") or ""
        written: list[WorkspaceFile] = []
        progress = _Progress(on_update, {"title": title, "language": "javascript"})

        def on_console(lines: Any) -> None:
            for line in lines.to_py():
                progress.add(str(line.get("text", "")) + "\n")

        async def on_fs(op: str, path: str, data: Any, encoding: str) -> Any:
            return await serve_file(str(op), str(path), data, str(encoding), written, tool_call_id)

        controller = js.AbortController.new()
        remove = signal.add_listener(lambda: controller.abort()) if signal is not None else None
        proxies = [create_proxy(on_console), create_proxy(on_fs)]
        try:
            options = to_js(
                {
                    "code": code,
                    "timeoutMs": current.javascript_timeout_ms,
                    "network": current.javascript_network,
                    "onConsole": proxies[0],
                    "onFs": proxies[1],
                    "signal": controller.signal,
                },
                dict_converter=js.Object.fromEntries,
            )
            result = plain((await api.runJavaScript(options)).to_py())
        finally:
            if remove is not None:
                remove()
            for proxy in proxies:
                proxy.destroy()

        if result.get("aborted"):
            raise ToolError("Execution aborted")
        lines = [str(line.get("text", "")) for line in result.get("console") or []]
        error = result.get("error")
        unique = list({f.path: f for f in written}.values())
        details: dict[str, Any] = {
            "title": title,
            "language": "javascript",
            "console": result.get("console") or [],
            "value": result.get("value"),
            "error": error,
            "timedOut": bool(result.get("timedOut")),
            "durationMs": result.get("durationMs"),
            "files": [{"path": f.path, "size": f.size} for f in unique],
        }
        note = _files_note(unique, [], [])
        if not result.get("ok"):
            error = error or {"name": "Error", "message": "Execution failed"}
            message = f"{error.get('name', 'Error')}: {error.get('message', '')}"
            if error.get("name") == "TimeoutError":
                message = f"Error: {error.get('message')}"
            # A stack starts with "Name: message" again: keep only its frames.
            frames = [line for line in str(error.get("stack") or "").split("\n")[1:] if line.strip()]
            body = "\n".join([message, *frames])
            text = "\n".join(lines + ([""] if lines else []) + [body.rstrip()] + ([note] if note else []))
            raise ToolError(keep_tail(text))
        return _run_result(list(lines), result.get("value"), note, details)

    current = _settings(settings)
    return AgentTool(
        name="javascript",
        label="JavaScript",
        description=_javascript_description(current),
        parameters=JAVASCRIPT_SCHEMA,
        execute=execute,
        execution_mode="sequential",
    )


# ---------------------------------------------------------------------------------------------
# python

PYTHON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "description": "Brief title describing what the code does, in active form, e.g. 'Plotting sales'",
        },
        "code": {"type": "string", "description": "Python code to execute"},
    },
    "required": ["code"],
}

PYTHON_DESCRIPTION = "\n".join(
    [
        "Execute Python 3 code in a sandboxed interpreter (Pyodide) and get its output.",
        "",
        "Use it for calculations, data analysis, text and file processing, and generating files.",
        "",
        "Environment:",
        "- The working folder is /workspace, which holds the workspace's files (the same files as the "
        'read/write/edit tools): open("data.csv") reads a workspace file; files the code creates, changes or '
        "deletes there are saved back to the workspace after the run.",
        "- stdout and stderr are captured; the value of the last expression is shown (like a REPL); "
        "exceptions come back with their traceback.",
        "- Variables do not persist between calls (imported modules stay loaded): keep state in files.",
        "- The standard library is available; packages the site bundles are loaded when imported.",
        "- {network}",
        "- Execution ends after {timeout} seconds; an endless loop is stopped then (the interpreter restarts).",
        "- input() is not available.",
    ]
)


def _python_description(settings: ToolSettings) -> str:
    network = (
        "Network access is ON (the user allowed it): urllib and pyodide.http.pyfetch work with servers that allow "
        "cross-origin requests."
        if settings.python_network
        else "There is NO network access; the user can allow it in the settings."
    )
    return PYTHON_DESCRIPTION.replace("{network}", network).replace(
        "{timeout}", str(round(settings.python_timeout_ms / 1000))
    )


class PythonRunner:
    """The page's python sandbox, as seen from Python: keeps track of which files the warm
    interpreter already has, so a run sends only what changed since the previous one."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._workspace: Workspace | None = None
        self._synced: dict[str, WorkspaceFile] = {}
        self._lock = asyncio.Lock()

    def _sync_for(self, workspace: Workspace, generation: int) -> tuple[dict[str, Any], list[WorkspaceFile]]:
        files = workspace.files()
        if generation != self._generation or workspace is not self._workspace:
            return {"reset": True, "files": files, "deletes": []}, files
        changed = [f for f in files if self._synced.get(f.path) is not f]
        present = {f.path for f in files}
        deletes = [path for path in self._synced if path not in present]
        return {"reset": False, "files": changed, "deletes": deletes}, files

    async def run(
        self,
        workspace: Workspace,
        code: str,
        settings: ToolSettings,
        signal: AbortSignal | None,
        on_output: Callable[[str], None],
        change: str | None = None,
    ) -> tuple[dict[str, Any], list[WorkspaceFile], list[str], list[str]]:
        """Run ``code``; returns (result, files written back, paths deleted, problems). ``change``:
        the tool call's id, under which what it changed is kept for undo."""
        js, create_proxy, to_js = js_module(), ffi().create_proxy, ffi().to_js

        api = await load_sandbox_api()
        async with self._lock:
            result: dict[str, Any] = {}
            for _attempt in range(2):
                try:
                    generation = int(await api.python.prepare(settings.python_network))
                except Exception as error:
                    message = str(error).removeprefix("Error: ")
                    return {"ok": False, "error": {"type": "SandboxError", "message": message}}, [], [], []
                sync, files = self._sync_for(workspace, generation)
                payload = {
                    "reset": sync["reset"],
                    "files": [
                        {"path": f.path, "data": f.data if isinstance(f.data, str) else to_js(f.data)}
                        for f in sync["files"]
                    ],
                    "deletes": sync["deletes"],
                }
                controller = js.AbortController.new()
                remove = signal.add_listener(controller.abort) if signal is not None else None

                def on_stream(chunks: Any) -> None:
                    for chunk in chunks.to_py():
                        on_output(str(chunk.get("text", "")))

                proxy = create_proxy(on_stream)
                try:
                    options = to_js(
                        {
                            "code": code,
                            "generation": generation,
                            "sync": payload,
                            "timeoutMs": settings.python_timeout_ms,
                            "network": settings.python_network,
                            "onOutput": proxy,
                            "signal": controller.signal,
                        },
                        dict_converter=js.Object.fromEntries,
                    )
                    result = plain((await api.python.run(options)).to_py())
                finally:
                    if remove is not None:
                        remove()
                    proxy.destroy()
                if result.get("stale"):
                    self._generation = None
                    continue
                self._generation = generation
                self._workspace = workspace
                self._synced = {f.path: f for f in files}
                break
            if result.get("timedOut") or result.get("aborted") or result.get("stale"):
                self._generation = None  # that interpreter is gone
                return result, [], [], []
            return (result, *await self._write_back(workspace, result.get("changes") or {}, change))

    async def _write_back(
        self, workspace: Workspace, changes: dict[str, Any], change: str | None
    ) -> tuple[list[WorkspaceFile], list[str], list[str]]:
        written: list[WorkspaceFile] = []
        deleted: list[str] = []
        problems: list[str] = []
        items = changes.get("files") or []
        deletes = [str(path) for path in changes.get("deletes") or []]
        declined: set[str] = set()
        try:  # one question for every user's file the run replaced or deleted (in a folder)
            await workspace.confirm_changes([str(item.get("path", "")) for item in items], deletes, source="python")
        except DeclinedError as error:
            declined = set(error.paths)
            problems.append(str(error))
        for item in items:
            path = str(item.get("path", ""))
            if path in declined:
                self._synced.pop(path, None)  # the interpreter gets the folder's version back next run
                continue
            try:
                raw = bytes(item["data"])
                data = _as_workspace_data(raw, workspace.get(path))
                file = await workspace.write(path, data, source="python", change=change)
            except WorkspaceError as error:
                problems.append(f"not saved: {error}")
                self._synced.pop(path, None)  # resend the workspace's version next time
                continue
            written.append(file)
            self._synced[file.path] = file
        for path in deletes:
            try:
                if path not in declined and await workspace.delete(path, source="python", change=change):
                    deleted.append(path)
            except WorkspaceError as error:
                problems.append(f"not deleted: {error}")
            self._synced.pop(path, None)
        return written, deleted, problems

    def forget(self) -> None:
        """Resend every file at the next run."""
        self._generation = None


_runner: PythonRunner | None = None


def python_runner() -> PythonRunner:
    global _runner
    if _runner is None:
        _runner = PythonRunner()
    return _runner


def make_python_tool(workspace: Workspace, settings: SettingsSource = DEFAULT_SETTINGS) -> AgentTool:
    """The ``python`` tool over ``workspace`` (needs the page: Pyodide and web/sandbox/)."""

    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Execution aborted")
        current = _settings(settings)
        code = params["code"]
        title = params.get("title") or ""
        progress = _Progress(on_update, {"title": title, "language": "python"})
        result, written, deleted, problems = await python_runner().run(
            workspace, code, current, signal, progress.add, tool_call_id
        )
        if result.get("aborted"):
            raise ToolError("Execution aborted")
        output = "".join(str(part.get("text", "")) for part in result.get("output") or [])
        error = result.get("error")
        note = _files_note(written, deleted, problems)
        details: dict[str, Any] = {
            "title": title,
            "language": "python",
            "output": result.get("output") or [],
            "value": result.get("value"),
            "error": error,
            "timedOut": bool(result.get("timedOut")),
            "durationMs": result.get("durationMs"),
            "files": [{"path": f.path, "size": f.size} for f in written],
            "deleted": deleted,
        }
        pieces = [output.rstrip("\n")] if output.strip() else []
        if not result.get("ok"):
            error = error or {"type": "Error", "message": "Execution failed"}
            if error.get("type") in ("TimeoutError", "SandboxError"):
                pieces.append(f"Error: {error.get('message')}")
            else:
                pieces.append(str(error.get("traceback") or f"{error.get('type')}: {error.get('message')}").rstrip())
            if note:
                pieces.append(note)
            raise ToolError(keep_tail("\n".join(pieces)))
        return _run_result(pieces, result.get("value"), note, details)

    current = _settings(settings)
    return AgentTool(
        name="python",
        label="Python",
        description=_python_description(current),
        parameters=PYTHON_SCHEMA,
        execute=execute,
        execution_mode="sequential",
    )
