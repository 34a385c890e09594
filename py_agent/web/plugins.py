"""The modules that plug tools (and their panel handlers) into the web app.

Each module registers its factories with :func:`py_agent.web.tools_registry.register_tool_factory`
when imported. Add a module here to enable it; a module that is missing or fails to import is
reported in the page (as a notice) and the app runs without it.
"""

from __future__ import annotations

import importlib

__all__ = ["PLUGIN_MODULES", "load_plugins"]

PLUGIN_MODULES: list[str] = [
    # "py_agent.tools.workspace",   (issue 6: workspace files, javascript/python tools, preview)
    # "py_agent.tools.subagent",    (issue 7: the subagent tool)
]


def load_plugins(modules: list[str] | None = None) -> list[str]:
    """Import the plugin modules; returns the problems (one sentence each)."""
    problems: list[str] = []
    for name in PLUGIN_MODULES if modules is None else modules:
        try:
            importlib.import_module(name)
        except Exception as error:
            problems.append(f"Plugin {name} could not be loaded: {error}")
    return problems
