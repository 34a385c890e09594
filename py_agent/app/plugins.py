"""The modules that plug tools (and their panel handlers) into the web app.

Each module registers its tool factories with
:func:`py_agent.app.tools_registry.register_tool_factory` when imported. Add a module here to
enable it; a module that is missing or fails to import is reported in the page (as a notice) and
the app runs without it. The two tables below wire what a plugin needs beyond its tools.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from .tools_registry import register_after_tool_call

__all__ = [
    "AFTER_TOOL_CALL_HOOKS",
    "PLUGIN_MODULES",
    "SESSION_DELETED_HOOKS",
    "SESSION_EXPORT_HOOKS",
    "STORAGE_HOOKS",
    "attach_storage",
    "attachment_types",
    "export_attachments",
    "load_plugins",
    "restore_attachments",
    "session_deleted",
]

PLUGIN_MODULES: list[str] = [
    "py_agent.app.workspace_tools",  # issue 6: workspace files, read/write/edit/..., javascript and python tools
    "py_agent.app.subagent_plugin",  # issue 7: the subagent tool
    "py_agent.app.subagent_ui",  # issue 7: Settings → Agents commands, children's usage in the totals
]

STORAGE_HOOKS: dict[str, str] = {
    # module -> its `async def f(backend) -> list[str]` (problems), called once storage is open
    "py_agent.app.subagent_plugin": "attach_storage",
}

AFTER_TOOL_CALL_HOOKS: dict[str, tuple[str, str]] = {
    # plugin module -> (module, function): an after_tool_call hook added when the plugin loads
    "py_agent.app.subagent_plugin": ("py_agent.tools.subagent", "subagent_after_tool_call"),
}

SESSION_DELETED_HOOKS: dict[str, tuple[str, str]] = {
    # plugin module -> (module, `async def f(session_id)`): drop the plugin's data of a deleted session
    "py_agent.app.workspace_tools": ("py_agent.app.workspace_store", "delete_workspace"),
}

SESSION_EXPORT_HOOKS: dict[str, tuple[str, str, str, str]] = {
    # plugin module -> (custom type, module, export, restore): plugin data that a session's .jsonl
    # export carries as one `custom` entry of that type (py_agent.session.attachments).
    # `async def export(session_id, secrets) -> JSON data | None` (None: nothing to carry);
    # `async def restore(session_id, data) -> list[str]` (problems), for the imported session.
    "py_agent.app.workspace_tools": (
        "py-agent/workspace",
        "py_agent.app.workspace_store",
        "session_workspace_attachment",
        "restore_session_workspace",
    ),
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


async def _call_hook(module: str, function: str, *args: Any) -> Any:
    """A loaded plugin's hook ``module.function(*args)``, awaited if it is async."""
    result = getattr(importlib.import_module(module), function)(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def attach_storage(backend: Any) -> list[str]:
    """Let the loaded plugins read their stored state (see ``STORAGE_HOOKS``)."""
    problems: list[str] = []
    for name in _loaded:
        attribute = STORAGE_HOOKS.get(name)
        if attribute is None:
            continue
        try:
            result = await _call_hook(name, attribute, backend)
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
            await _call_hook(hook[0], hook[1], session_id)
        except Exception as error:
            problems.append(f"Plugin {name} could not delete the session's data: {error}")
    return problems


def attachment_types() -> list[str]:
    """The custom types the loaded plugins export with a session (see ``SESSION_EXPORT_HOOKS``)."""
    return [SESSION_EXPORT_HOOKS[name][0] for name in _loaded if name in SESSION_EXPORT_HOOKS]


async def export_attachments(session_id: str, secrets: Iterable[str] = ()) -> tuple[list[tuple[str, Any]], list[str]]:
    """``(custom_type, data)`` for each loaded plugin with data to export with the session, and
    the problems (a plugin that failed is left out of the export)."""
    wanted = list(secrets)
    attachments: list[tuple[str, Any]] = []
    problems: list[str] = []
    for name in _loaded:
        hook = SESSION_EXPORT_HOOKS.get(name)
        if hook is None:
            continue
        custom_type, module, export, _restore = hook
        try:
            data = await _call_hook(module, export, session_id, wanted)
        except Exception as error:
            problems.append(f"Plugin {name} could not export its data with the session ({error}); it was left out")
            continue
        if data is not None:
            attachments.append((custom_type, data))
    return attachments, problems


async def restore_attachments(session_id: str, found: Mapping[str, Any]) -> list[str]:
    """Give each loaded plugin the data an imported file carried for it (``custom_type -> data``,
    the newest entry of each type); returns the problems."""
    problems: list[str] = []
    for name in _loaded:
        hook = SESSION_EXPORT_HOOKS.get(name)
        if hook is None or hook[0] not in found:
            continue
        _type, module, _export, restore = hook
        try:
            result = await _call_hook(module, restore, session_id, found[hook[0]])
            problems.extend(str(p) for p in result or [])
        except Exception as error:
            problems.append(f"Plugin {name} could not restore its data from the file: {error}")
    return problems
