"""The plugin contract: everything a feature adds to the web app, declared in one :class:`Plugin`.

A feature (the workspace tools, subagents...) is one function that returns its descriptor::

    def preview_plugin() -> Plugin:
        return Plugin(
            name="preview",
            tool_factories={"preview": make_preview_tool},  # (host: ToolHost) -> AgentTool | list | None
            panel_handlers={"preview": on_panel_message},  # (session_id, data), messages of the page's panel
            commands=(command("preview_list", preview_list),),  # py("preview_list", {...}) in the page
        )

and is listed in :func:`py_agent.app.plugins.default_plugins`. The app (:class:`~py_agent.app.controller.WebApp`)
gets its plugins as a list; building them imports nothing at the app's import, and a plugin that
fails to build is reported in the page (a notice) while the app runs without it.

Each chat session calls every tool factory with its :class:`ToolHost` when it is opened, and gives
the agent the tools they return (a factory may return ``None`` to stay out, or a list of tools).

The host is the tool's view of the session: which session it is, the model in use, a way to keep
state in the session (a ``custom`` entry, never sent to the model) and to talk to the page's
side panel. It deliberately has no access to stored keys, except ``get_api_key`` for code that
calls the *same* provider (a subagent); never pass it, or a key, into a sandbox.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..ai.types import Model
from ..core.types import AgentTool
from .commands import Command

__all__ = [
    "AfterToolCall",
    "LoadedPlugins",
    "PanelHandler",
    "Plugin",
    "PluginSource",
    "SessionExport",
    "ToolFactory",
    "ToolHost",
    "UsageSource",
    "load_plugins",
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
    """Show a side panel (``panel_id``): for what the user asked for."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Shared per-session objects between plugins (e.g. a workspace), keyed by name."""
    suggest_panel: Callable[[str, str], None] = lambda _panel, _what: None
    """Offer a side panel the user did not ask for (``panel_id``, what it would show, e.g. a file
    name): shown at once where the screen has room for it beside the chat, offered in a notice on a
    phone (where the panel would cover the conversation)."""

    @property
    def model(self) -> Model:
        return self.get_model()

    @property
    def thinking_level(self) -> str:
        return self.get_thinking_level()


ToolFactory: TypeAlias = Callable[[ToolHost], "AgentTool | list[AgentTool] | Awaitable[Any] | None"]
PanelHandler: TypeAlias = Callable[[str, Any], Any]
"""Messages of the page's side panel: ``handler(session_id, data)`` (sync or async); its JSON result goes back."""
AfterToolCall: TypeAlias = Callable[..., Any]
"""An ``after_tool_call`` hook ``(context, signal)`` (sync or async) added to every session's agent."""
UsageSource: TypeAlias = Callable[[Any, list[Any]], Mapping[str, float] | None]
"""Usage a session's own assistant messages do not carry (a subagent's children): ``source(entries,
partials)`` returns ``{"input", "output", "cacheRead", "cacheWrite", "cost"}`` (cost in USD) from the
session's entries (all branches) and the latest partial results (JSON) of the tools running now."""


@dataclass(frozen=True)
class SessionExport:
    """Plugin data that a session's ``.jsonl`` export carries as one ``custom`` entry of ``custom_type``
    (:mod:`py_agent.session.export_attachments`)."""

    custom_type: str
    export: Callable[[str, list[str]], Awaitable[Any]]
    """``(session_id, secrets) -> JSON data | None`` (None: nothing to carry)."""
    restore: Callable[[str, Any], Awaitable[list[str]]]
    """``(session_id, data) -> problems``, for the imported session."""


@dataclass(frozen=True)
class Plugin:
    """What one feature adds to the app. Every field but ``name`` is optional."""

    name: str
    tool_factories: Mapping[str, ToolFactory] = field(default_factory=dict)
    panel_handlers: Mapping[str, PanelHandler] = field(default_factory=dict)
    commands: tuple[Command, ...] = ()
    """Page commands (:func:`py_agent.app.commands.command`); a name the app has already is an error."""
    settings: tuple[str, ...] = ()
    """The app settings (keys of ``py("set_setting", {key, value})``) this plugin owns and reads."""
    after_tool_call: tuple[AfterToolCall, ...] = ()
    """Run in order after each tool call; the first that returns a result (not ``None``) decides."""
    on_storage_open: Callable[[Any], Awaitable[list[str]]] | None = None
    """``(backend) -> problems``: read the plugin's stored state once the app's storage is open."""
    on_session_deleted: Callable[[str], Awaitable[None]] | None = None
    """``(session_id)``: drop the plugin's data of a deleted session."""
    session_export: SessionExport | None = None
    usage_sources: Mapping[str, UsageSource] = field(default_factory=dict)


PluginSource: TypeAlias = "Plugin | Callable[[], Plugin]"
"""A plugin, or the function that builds it (imports its modules): a failure there is a notice."""


async def _awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class LoadedPlugins:
    """The plugins an app runs with, and what the app asks of them all."""

    def __init__(self, plugins: Sequence[Plugin] = ()) -> None:
        self.plugins = list(plugins)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def commands(self) -> list[Command]:
        return [c for p in self.plugins for c in p.commands]

    def settings(self) -> set[str]:
        return {key for p in self.plugins for key in p.settings}

    async def build_tools(self, host: ToolHost) -> tuple[list[AgentTool], list[str]]:
        """The tools every factory makes for ``host``, and the errors of factories that failed
        (a broken plugin must not stop the chat)."""
        tools: list[AgentTool] = []
        errors: list[str] = []
        for plugin in self.plugins:
            for name, factory in plugin.tool_factories.items():
                try:
                    made = await _awaited(factory(host))
                except Exception as error:
                    errors.append(f"Tool {name!r} is unavailable: {error}")
                    continue
                if made is None:
                    continue
                tools.extend(made if isinstance(made, list) else [made])
        return tools, errors

    def after_tool_call_hooks(self) -> list[AfterToolCall]:
        return [hook for p in self.plugins for hook in p.after_tool_call]

    def panel_handler(self, panel_id: str) -> PanelHandler | None:
        for plugin in self.plugins:
            handler = plugin.panel_handlers.get(panel_id)
            if handler is not None:
                return handler
        return None

    def extra_usage(self, entries: Any, partials: list[Any]) -> dict[str, float]:
        """The sum of every usage source (a failing source counts as nothing)."""
        total = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "cost": 0.0}
        for plugin in self.plugins:
            for source in plugin.usage_sources.values():
                try:
                    usage = source(entries, partials) or {}
                except Exception:
                    continue
                for key in total:
                    value = usage.get(key)
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        total[key] += value
        return total

    async def storage_opened(self, backend: Any) -> list[str]:
        """Let the plugins read their stored state, all at once; returns the problems (in the
        plugins' order)."""

        async def opened(plugin: Plugin) -> list[str]:
            if plugin.on_storage_open is None:
                return []
            try:
                return [str(p) for p in await plugin.on_storage_open(backend) or []]
            except Exception as error:
                return [f"Plugin {plugin.name} could not read its stored state: {error}"]

        found = await asyncio.gather(*(opened(plugin) for plugin in self.plugins))
        return [problem for problems in found for problem in problems]

    async def session_deleted(self, session_id: str) -> list[str]:
        """Tell the plugins that a session was deleted; returns the problems."""
        problems: list[str] = []
        for plugin in self.plugins:
            if plugin.on_session_deleted is None:
                continue
            try:
                await plugin.on_session_deleted(session_id)
            except Exception as error:
                problems.append(f"Plugin {plugin.name} could not delete the session's data: {error}")
        return problems

    def attachment_types(self) -> list[str]:
        """The custom types the plugins export with a session."""
        return [p.session_export.custom_type for p in self.plugins if p.session_export is not None]

    async def export_attachments(
        self, session_id: str, secrets: Iterable[str] = ()
    ) -> tuple[list[tuple[str, Any]], list[str]]:
        """``(custom_type, data)`` for each plugin with data to export with the session, and the
        problems (a plugin that failed is left out of the export)."""
        wanted = list(secrets)
        attachments: list[tuple[str, Any]] = []
        problems: list[str] = []
        for plugin in self.plugins:
            hook = plugin.session_export
            if hook is None:
                continue
            try:
                data = await hook.export(session_id, wanted)
            except Exception as error:
                problems.append(
                    f"Plugin {plugin.name} could not export its data with the session ({error}); it was left out"
                )
                continue
            if data is not None:
                attachments.append((hook.custom_type, data))
        return attachments, problems

    async def restore_attachments(self, session_id: str, found: Mapping[str, Any]) -> list[str]:
        """Give each plugin the data an imported file carried for it (``custom_type -> data``, the
        newest entry of each type); returns the problems."""
        problems: list[str] = []
        for plugin in self.plugins:
            hook = plugin.session_export
            if hook is None or hook.custom_type not in found:
                continue
            try:
                problems.extend(str(p) for p in await hook.restore(session_id, found[hook.custom_type]) or [])
            except Exception as error:
                problems.append(f"Plugin {plugin.name} could not restore its data from the file: {error}")
        return problems


def load_plugins(sources: Iterable[Plugin | Callable[[], Plugin]]) -> tuple[LoadedPlugins, list[str]]:
    """Build the plugins; returns those that built and the problems of the others (one sentence each)."""
    plugins: list[Plugin] = []
    problems: list[str] = []
    for source in sources:
        try:
            plugin = source if isinstance(source, Plugin) else source()
            if not isinstance(plugin, Plugin):
                raise TypeError(f"{plugin!r} is not a Plugin")
        except Exception as error:
            name = getattr(source, "__qualname__", None) or repr(source)
            problems.append(f"Plugin {name} could not be loaded: {error}")
            continue
        plugins.append(plugin)
    return LoadedPlugins(plugins), problems
