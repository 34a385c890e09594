"""Where tools plug into the web app.

A feature that gives the agent a tool registers a *factory* once, at import::

    from py_agent.app.tools_registry import ToolHost, register_tool_factory

    def make_preview_tool(host: ToolHost) -> AgentTool | None:
        return AgentTool(name="preview", label="Preview", description=..., parameters=..., execute=...)

    register_tool_factory("preview", make_preview_tool)

Each chat session calls every factory with its :class:`ToolHost` when it is opened, and gives the
agent the tools they return (a factory may return ``None`` to stay out, or a list of tools). The
modules that register factories are listed in :mod:`py_agent.app.plugins`.

The host is the tool's view of the session: which session it is, the model in use, a way to keep
state in the session (a ``custom`` entry, never sent to the model) and to talk to the page's
side panel. It deliberately has no access to stored keys, except ``get_api_key`` for code that
calls the *same* provider (a subagent); never pass it, or a key, into a sandbox.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..ai.types import Model
from ..core.types import AgentTool

__all__ = [
    "ToolFactory",
    "ToolHost",
    "after_tool_call_hooks",
    "app_command",
    "build_tools",
    "extra_usage",
    "panel_handler",
    "register_after_tool_call",
    "register_app_command",
    "register_panel_handler",
    "register_tool_factory",
    "register_usage_source",
    "registered_tool_factories",
    "unregister_tool_factory",
]


@dataclass
class ToolHost:
    """What a tool factory (and the tool it makes) may use of its chat session."""

    session_id: str
    get_model: Callable[[], Model]
    get_thinking_level: Callable[[], str]
    get_api_key: Callable[[str], str | None]
    """The key of a provider, for code that calls that provider itself (a subagent). Never hand
    it to a sandbox, a page, a log or a tool result."""
    append_custom_entry: Callable[[str, Any], Awaitable[None]]
    """Persist tool state in the session: ``custom`` entry ``(custom_type, data)``."""
    custom_entries: Callable[[str], list[Any]]
    """The ``data`` of this session's ``custom`` entries of a type, on the current branch, oldest first."""
    post_to_panel: Callable[[str, Any], None]
    """Send a JSON message to a side panel of the page (``panel_id, data``); see docs/web-architecture.md."""
    open_panel: Callable[[str], None]
    """Show a side panel (``panel_id``)."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Shared per-session objects between plugins (e.g. a workspace), keyed by name."""

    @property
    def model(self) -> Model:
        return self.get_model()

    @property
    def thinking_level(self) -> str:
        return self.get_thinking_level()


ToolFactory: TypeAlias = Callable[[ToolHost], "AgentTool | list[AgentTool] | Awaitable[Any] | None"]

_factories: dict[str, ToolFactory] = {}
_panel_handlers: dict[str, Callable[[str, Any], Any]] = {}
_after_tool_call_hooks: dict[str, Callable[..., Any]] = {}


def register_tool_factory(name: str, factory: ToolFactory) -> None:
    """Register (or replace) the factory called ``name``; sessions opened afterwards use it."""
    _factories[name] = factory


def unregister_tool_factory(name: str) -> bool:
    return _factories.pop(name, None) is not None


def registered_tool_factories() -> dict[str, ToolFactory]:
    return dict(_factories)


async def build_tools(host: ToolHost) -> tuple[list[AgentTool], list[str]]:
    """The tools every factory makes for ``host``, and the errors of factories that failed
    (a broken plugin must not stop the chat)."""
    tools: list[AgentTool] = []
    errors: list[str] = []
    for name, factory in _factories.items():
        try:
            made = factory(host)
            if inspect.isawaitable(made):
                made = await made
        except Exception as error:
            errors.append(f"Tool {name!r} is unavailable: {error}")
            continue
        if made is None:
            continue
        tools.extend(made if isinstance(made, list) else [made])
    return tools, errors


def register_after_tool_call(name: str, hook: Callable[..., Any]) -> None:
    """Add an ``after_tool_call`` hook ``(context, signal)`` (sync or async) to every session's agent.

    Hooks run in registration order; the first that returns a result (not ``None``) decides, as
    the core's single hook would. Use it e.g. to mark a tool's failure as an error result.
    """
    _after_tool_call_hooks[name] = hook


def after_tool_call_hooks() -> list[Callable[..., Any]]:
    return list(_after_tool_call_hooks.values())


def register_panel_handler(panel_id: str, handler: Callable[[str, Any], Any]) -> None:
    """Handle messages the page's panel ``panel_id`` sends (``handler(session_id, data)``, may be async)."""
    _panel_handlers[panel_id] = handler


def panel_handler(panel_id: str) -> Callable[[str, Any], Any] | None:
    return _panel_handlers.get(panel_id)


_app_commands: dict[str, Callable[..., Any]] = {}
_usage_sources: dict[str, Callable[..., Any]] = {}


def register_app_command(name: str, handler: Callable[..., Any]) -> None:
    """A page command of a plugin: ``py(name, args)`` in the page calls ``handler(**args)`` (sync
    or async; its JSON result goes back). The app's own ``cmd_*`` commands take precedence."""
    _app_commands[name] = handler


def app_command(name: str) -> Callable[..., Any] | None:
    return _app_commands.get(name)


def register_usage_source(name: str, source: Callable[..., Any]) -> None:
    """Usage that a session's own assistant messages do not carry (e.g. a subagent's children),
    added to the totals the page shows: ``source(entries, partials)`` returns ``{"input", "output",
    "cacheRead", "cacheWrite", "cost"}`` (numbers; cost in USD) from the session's entries (all
    branches) and the latest partial results (JSON) of the tools running now."""
    _usage_sources[name] = source


def extra_usage(entries: Any, partials: list[Any]) -> dict[str, float]:
    """The sum of every usage source (a failing source counts as nothing)."""
    total = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "cost": 0.0}
    for source in _usage_sources.values():
        try:
            usage = source(entries, partials) or {}
        except Exception:
            continue
        for key in total:
            value = usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[key] += value
    return total
