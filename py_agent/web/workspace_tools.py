"""The workspace plugin of the web app: each chat session's files and the tools over them.

Imported by :mod:`py_agent.web.plugins`, it registers the tool factory ``"workspace"``: for a
session it opens the session's workspace (IndexedDB, ``py-agent-workspaces``), puts it in
``host.extras["workspace"]`` for other plugins (subagents share it), and returns the tools
``read``, ``write``, ``edit``, ``ls``, ``grep``, ``find``, ``javascript`` and ``python``, minus
those the user disabled. Tool settings (network access, timeouts) come from
``host.extras["tool_settings"]`` (a :class:`~py_agent.tools.settings.ToolSettings`, its JSON, or a
function returning either), read at every run.

For the page: :func:`preview_source` gives the preview panel (``web/sandbox/preview.js``) its data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.types import AgentTool
from ..tools import FILE_TOOL_NAMES, make_workspace_tools
from ..tools.settings import ToolSettings
from ..tools.workspace import Workspace
from .sandbox import DEFAULT_SETTINGS, SettingsSource, make_javascript_tool, make_python_tool
from .tools_registry import ToolHost, register_tool_factory
from .workspace_store import PreviewSource, open_workspace

__all__ = ["SANDBOX_TOOL_NAMES", "make_tools", "preview_source", "settings_from"]

SANDBOX_TOOL_NAMES = ("javascript", "python")


def make_tools(workspace: Workspace, settings: SettingsSource = DEFAULT_SETTINGS) -> list[AgentTool]:
    """Every workspace tool and the two sandboxed code tools, minus those the user disabled."""
    current = settings() if callable(settings) else settings
    disabled = current.disabled_tools
    tools = make_workspace_tools(workspace, [name for name in FILE_TOOL_NAMES if name not in disabled])
    if "javascript" not in disabled:
        tools.append(make_javascript_tool(workspace, settings))
    if "python" not in disabled:
        tools.append(make_python_tool(workspace, settings))
    return tools


def settings_from(value: Any) -> ToolSettings:
    """A :class:`ToolSettings` from what the app keeps: the object, its JSON, or a function."""
    if callable(value) and not isinstance(value, ToolSettings):
        value = value()
    if isinstance(value, ToolSettings):
        return value
    return ToolSettings.from_json(value if isinstance(value, Mapping) else None)


async def _factory(host: ToolHost) -> list[AgentTool]:
    workspace = await open_workspace(host.session_id)
    host.extras["workspace"] = workspace
    getter: Callable[[], ToolSettings] = lambda: settings_from(host.extras.get("tool_settings"))  # noqa: E731
    return make_tools(workspace, getter)


async def preview_source(session_id: str) -> PreviewSource:
    """The preview panel's data for a session (its workspace, opened if needed)."""
    return PreviewSource(await open_workspace(session_id))


register_tool_factory("workspace", _factory)
