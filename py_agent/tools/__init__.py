"""The agent's in-page tools over a session's workspace (pure Python part).

``make_tools(workspace, settings)`` returns the workspace tools (``read``, ``write``, ``edit``,
``ls``, ``grep``, ``find``) minus those the user disabled. The browser layer
(``py_agent.app.tools.make_tools``) adds the sandboxed ``javascript`` and ``python`` tools.
"""

from __future__ import annotations

from ..core.types import AgentTool
from .files import FILE_TOOL_NAMES, glob_to_regex, make_workspace_tools
from .settings import ToolSettings
from .workspace import (
    WORKSPACE_ROOT,
    MemoryWorkspaceStore,
    Workspace,
    WorkspaceChange,
    WorkspaceError,
    WorkspaceFile,
    WorkspaceLimits,
    WorkspaceStore,
    normalize_path,
)

__all__ = [
    "FILE_TOOL_NAMES",
    "WORKSPACE_ROOT",
    "MemoryWorkspaceStore",
    "ToolSettings",
    "Workspace",
    "WorkspaceChange",
    "WorkspaceError",
    "WorkspaceFile",
    "WorkspaceLimits",
    "WorkspaceStore",
    "glob_to_regex",
    "make_tools",
    "make_workspace_tools",
    "normalize_path",
]


def make_tools(workspace: Workspace, settings: ToolSettings | None = None) -> list[AgentTool]:
    """The workspace tools the user has not disabled."""
    disabled = (settings or ToolSettings()).disabled_tools
    return make_workspace_tools(workspace, [name for name in FILE_TOOL_NAMES if name not in disabled])
