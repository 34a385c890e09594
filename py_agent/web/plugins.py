"""The modules that plug tools (and their panel handlers) into the web app.

Each module registers its tool factories with
:func:`py_agent.web.tools_registry.register_tool_factory` when imported. Add a module here to
enable it; a module that is missing or fails to import is reported in the page (as a notice) and
the app runs without it. The two tables below wire what a plugin needs beyond its tools.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from .tools_registry import register_after_tool_call

__all__ = [
    "AFTER_TOOL_CALL_HOOKS",
    "PLUGIN_MODULES",
    "SESSION_DELETED_HOOKS",
    "STORAGE_HOOKS",
    "attach_storage",
    "load_plugins",
    "session_deleted",
]

PLUGIN_MODULES: list[str] = [
    "py_agent.web.workspace_tools",  # issue 6: workspace files, read/write/edit/..., javascript and python tools
    "py_agent.tools.subagent_plugin",  # issue 7: the subagent tool
    "py_agent.web.subagent_ui",  # issue 7: Settings → Agents commands, children's usage in the totals
]

STORAGE_HOOKS: dict[str, str] = {
    # module -> its `async def f(backend) -> list[str]` (problems), called once storage is open
    "py_agent.tools.subagent_plugin": "attach_storage",
}

AFTER_TOOL_CALL_HOOKS: dict[str, tuple[str, str]] = {
    # plugin module -> (module, function): an after_tool_call hook added when the plugin loads
    "py_agent.tools.subagent_plugin": ("py_agent.tools.subagent", "subagent_after_tool_call"),
}

SESSION_DELETED_HOOKS: dict[str, tuple[str, str]] = {
    # plugin module -> (module, `async def f(session_id)`): drop the plugin's data of a deleted session
    "py_agent.web.workspace_tools": ("py_agent.web.workspace_store", "delete_workspace"),
}

_loaded: list[str] = []


def load_plugins(modules: list[str] | None = None) -> list[str]:
    """Import the plugin modules; returns the problems (one sentence each)."""
    problems: list[str] = []
    for name in PLUGIN_MODULES if modules is None else modules:
        try:
            importlib.import_module(name)
            hook = AFTER_TOOL_CALL_HOOKS.get(name)
            if hook is not None:
                register_after_tool_call(name, getattr(importlib.import_module(hook[0]), hook[1]))
        except Exception as error:
            problems.append(f"Plugin {name} could not be loaded: {error}")
            continue
        if name not in _loaded:
            _loaded.append(name)
    return problems


async def attach_storage(backend: Any) -> list[str]:
    """Let the loaded plugins read their stored state (see ``STORAGE_HOOKS``)."""
    problems: list[str] = []
    for name in _loaded:
        attribute = STORAGE_HOOKS.get(name)
        if attribute is None:
            continue
        try:
            result = getattr(importlib.import_module(name), attribute)(backend)
            if inspect.isawaitable(result):
                result = await result
            problems.extend(str(p) for p in result or [])
        except Exception as error:
            problems.append(f"Plugin {name} could not read its stored state: {error}")
    return problems


async def session_deleted(session_id: str) -> list[str]:
    """Tell the loaded plugins that a session was deleted (see ``SESSION_DELETED_HOOKS``)."""
    problems: list[str] = []
    for name in _loaded:
        hook = SESSION_DELETED_HOOKS.get(name)
        if hook is None:
            continue
        try:
            result = getattr(importlib.import_module(hook[0]), hook[1])(session_id)
            if inspect.isawaitable(result):
                await result
        except Exception as error:
            problems.append(f"Plugin {name} could not delete the session's data: {error}")
    return problems
