"""The plugins the web app runs with by default.

Each entry is a function that builds one :class:`~py_agent.app.plugin_contract.Plugin` (it imports its
feature's modules then, not when this module is imported). Add a feature here to enable it; a
plugin that fails to build is reported in the page (as a notice) and the app runs without it.
The page (:mod:`py_agent.browser.main`) passes its workspace platform; CPython uses the default
one (files in memory, no code tools).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .plugin_contract import Plugin

if TYPE_CHECKING:
    from .workspace_store import WorkspacePlatform

__all__ = ["default_plugins"]


def default_plugins(workspace_platform: WorkspacePlatform | None = None) -> list[Callable[[], Plugin]]:
    """The app's plugins: the workspace (files and the tools over them, the code tools), subagents,
    attachments (their settings) and MCP servers (their tools)."""

    def workspace() -> Plugin:
        from .workspace_tools import workspace_plugin

        return workspace_plugin(workspace_platform)

    def subagents() -> Plugin:
        from .subagents_plugin import subagents_plugin

        return subagents_plugin()

    def attachments() -> Plugin:
        from .attachments import attachments_plugin

        return attachments_plugin()

    def mcp() -> Plugin:
        from .mcp_servers import mcp_plugin

        return mcp_plugin()

    workspace.__qualname__, subagents.__qualname__ = "workspace", "subagents"
    attachments.__qualname__, mcp.__qualname__ = "attachments", "mcp"
    return [workspace, subagents, attachments, mcp]
