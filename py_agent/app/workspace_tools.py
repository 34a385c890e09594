"""The workspace plugin of the web app: each chat session's files and the tools over them.

:func:`workspace_plugin` declares it (listed in :func:`py_agent.app.plugins.default_plugins`): its
tool factory ``"workspace"``, for a
session it opens the session's workspace (IndexedDB, ``py-agent-workspaces``), puts it in
``host.extras["workspace"]`` for other plugins (subagents share it), and returns the tools
``read``, ``write``, ``edit``, ``ls``, ``grep``, ``find``, ``javascript`` and ``python``, minus
those the user disabled. Tool settings (network access, timeouts) come from
``host.extras["tool_settings"]`` (a :class:`~py_agent.tools.settings.ToolSettings`, its JSON, or a
function returning either), read at every run. In the page, ``grep`` runs its regex in a worker
with a time limit (:mod:`py_agent.browser.grep`), so a catastrophic pattern cannot freeze the page.

The page side is ``web/sandbox/panel.js`` (imported by ``web/plugins.js``): the side panel
``"workspace"`` and the tool cards. When a session opens, the factory posts ``{sessionId}`` to the
panel; when a tool writes a file worth looking at (HTML, SVG, Markdown, an image, CSV), the panel
opens on it; a file chip in a tool card sends ``{type: "open", path}`` back.
:func:`py_agent.browser.workspace.preview_source` gives the panel the session's files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..ai.abort import AbortSignal
from ..core.types import AgentTool, AgentToolResult, AgentToolUpdateCallback
from ..tools import FILE_TOOL_NAMES, make_workspace_tools
from ..tools.consent import Asker, ConsentAnswer, ConsentRequest
from ..tools.settings import ToolSettings
from ..tools.workspace import Workspace, WorkspaceChange
from .plugin_contract import Plugin, SessionExport, ToolHost
from .workspace_store import (
    SettingsSource,
    WorkspacePlatform,
    delete_workspace,
    open_workspace,
    restore_session_workspace,
    session_workspace_attachment,
    set_workspace_platform,
    workspace_platform,
)

__all__ = [
    "CONSENT_CHOICES",
    "PANEL_ID",
    "SANDBOX_TOOL_NAMES",
    "WORKSPACE_EXPORT_TYPE",
    "folder_asker",
    "make_tools",
    "settings_from",
    "workspace_plugin",
]

SANDBOX_TOOL_NAMES = ("javascript", "python")
PANEL_ID = "workspace"
WORKSPACE_EXPORT_TYPE = "py-agent/workspace"
SHOWN_EXTENSIONS = frozenset({"html", "htm", "svg", "md", "markdown", "png", "jpg", "jpeg", "gif", "webp", "csv"})
TOOL_SOURCES = frozenset({"write", "edit", "javascript", "python"})
_hosts: dict[str, ToolHost] = {}
_watching: dict[str, Callable[[], None]] = {}


def make_tools(workspace: Workspace, settings: SettingsSource | None = None) -> list[AgentTool]:
    """Every workspace tool and the platform's sandboxed code tools, minus those the user
    disabled. In the page, ``grep`` searches in a worker with a time limit
    (:mod:`py_agent.browser.grep`); the platform is :func:`workspace_platform`."""
    settings = settings if settings is not None else ToolSettings()
    current = settings() if callable(settings) else settings
    disabled = current.disabled_tools
    platform = workspace_platform()
    searcher = platform.grep_searcher()
    tools = make_workspace_tools(
        workspace, [name for name in FILE_TOOL_NAMES if name not in disabled], grep_searcher=searcher
    )
    tools.extend(tool for tool in platform.code_tools(workspace, settings) if tool.name not in disabled)
    return [_refreshing(tool, workspace) for tool in tools]


def _refreshing(tool: AgentTool, workspace: Workspace) -> AgentTool:
    """``tool`` taking in a folder's outside changes first (an editor saved a file since the last
    call), so every call sees the files as they are now."""
    execute = tool.execute
    if execute is None:
        return tool

    async def run(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult | Mapping[str, Any]:
        await workspace.refresh()
        return await execute(tool_call_id, params, signal, on_update)

    tool.execute = run  # the tools were just made for this workspace: no one else holds them
    return tool


def settings_from(value: Any) -> ToolSettings:
    """A :class:`ToolSettings` from what the app keeps: the object, its JSON, or a function."""
    if callable(value) and not isinstance(value, ToolSettings):
        value = value()
    if isinstance(value, ToolSettings):
        return value
    return ToolSettings.from_json(value if isinstance(value, Mapping) else None)


CONSENT_CHOICES: tuple[tuple[ConsentAnswer, str], ...] = (
    ("deny", "Don't allow"),
    ("allow_folder", "Allow for this folder in this session"),
    ("allow", "Allow"),
)
"""The buttons of the dialog asked before a tool deletes or overwrites the user's files."""


def folder_asker(choose: Any) -> Asker | None:
    """The page's dialog (``choose(title, message, choices)``, :meth:`WebApp.choose`) as the
    workspace's :class:`~py_agent.tools.consent.FolderConsent` asker; a closed dialog says no."""
    if not callable(choose):
        return None

    async def ask(request: ConsentRequest) -> ConsentAnswer:
        answer = await choose(request.title, request.message, CONSENT_CHOICES)
        return next((value for value, _label in CONSENT_CHOICES if value == answer), "deny")

    return ask


def _show_written_files(host: ToolHost) -> Callable[[WorkspaceChange], None]:
    def on_change(change: WorkspaceChange) -> None:
        path = change.path or ""
        if change.kind != "write" or change.source not in TOOL_SOURCES:
            return
        if path.rsplit(".", 1)[-1].lower() in SHOWN_EXTENSIONS:
            # Selected first, so that the panel shows it whenever it opens (at once, or from the notice).
            host.post_to_panel(PANEL_ID, {"sessionId": host.session_id, "select": path})
            host.suggest_panel(PANEL_ID, path)

    return on_change


async def _factory(host: ToolHost) -> list[AgentTool]:
    workspace = await open_workspace(host.session_id)
    host.extras["workspace"] = workspace
    asker = folder_asker(host.extras.get("choose"))
    if asker is not None:
        workspace.consent.asker = asker
    # Tools are built for the chat the page shows: the hosts of chats shown before are let go
    # (kept, they would keep those chats, agents and transcripts in memory for good).
    for session_id in [s for s in _hosts if s != host.session_id]:
        del _hosts[session_id]
    for session_id in [s for s in _watching if s != host.session_id]:
        _watching.pop(session_id)()
    _hosts[host.session_id] = host
    stop = _watching.pop(host.session_id, None)
    if stop is not None:
        stop()
    _watching[host.session_id] = workspace.subscribe(_show_written_files(host))
    host.post_to_panel(PANEL_ID, {"sessionId": host.session_id})

    def getter() -> ToolSettings:
        return settings_from(host.extras.get("tool_settings"))

    return make_tools(workspace, getter)


def _on_panel_message(session_id: str, data: Any) -> bool:
    """A file chip of a tool card (or the session menu's "Files…") was clicked: open the panel,
    on that file if one is named. False when this chat has no workspace tools."""
    host = _hosts.get(session_id)
    if host is None or not isinstance(data, Mapping) or data.get("type") != "open":
        return False
    path = data.get("path")
    host.open_panel(PANEL_ID)
    host.post_to_panel(PANEL_ID, {"sessionId": session_id, "select": path if isinstance(path, str) else None})
    return True


def workspace_plugin(platform: WorkspacePlatform | None = None) -> Plugin:
    """The workspace plugin; ``platform`` (the page's, from :mod:`py_agent.browser.workspace`) becomes
    the workspace store's, where sessions' files are kept and what gives the code tools."""
    if platform is not None:
        set_workspace_platform(platform)
    return Plugin(
        name="workspace",
        tool_factories={"workspace": _factory},
        panel_handlers={PANEL_ID: _on_panel_message},
        on_session_deleted=delete_workspace,
        session_export=SessionExport(WORKSPACE_EXPORT_TYPE, session_workspace_attachment, restore_session_workspace),
    )
