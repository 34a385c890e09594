"""The ``subagent`` tool of the web app: its tool factory and the page's agent definitions.

:func:`py_agent.app.subagents_plugin.subagents_plugin` declares the plugin (this tool factory, the
Settings → Agents commands, the children's usage). Every chat session then gets a ``subagent`` tool whose children
use the session's current model and thinking level, its API keys (``ToolHost.get_api_key``) and
its other tools, so they share the session's workspace.

What the factory reads from ``ToolHost.extras`` (all optional):

- ``"get_tools"``: ``() -> list[AgentTool]``, the session's tools (the children's tools are a
  subset; ``subagent`` itself is always left out). Without it, and with a ``"workspace"`` (put
  there by the workspace plugin), children get the workspace plugin's tools over that same
  workspace (honouring ``"tool_settings"``); with neither, no tools.
- ``"stream_fn"``: the session's stream function (idle timeout etc.); default ``stream_simple``.
- ``"confirm"``: ``(title, message) -> bool | Awaitable[bool]``, a dialog asked before running an
  imported definition that was not confirmed yet. Without it such definitions fail.
- ``"on_subagent_end"``: ``(SubagentResult) -> None``, called as each child finishes (usage).

One :class:`AgentRegistry` serves the whole page (:func:`agent_registry`); the app loads the
user's definitions into it at start and saves them on change (:func:`attach_storage`).

Pure: no browser modules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from ..ai._util import maybe_await
from ..core.types import ThinkingLevel
from ..tools.subagent import SubagentHost, SubagentTool, confirmation_text, create_subagent_tool
from ..tools.subagent_definitions import (
    DEFAULT_KEY,
    DEFAULT_STORE,
    AgentDefinition,
    AgentRegistry,
    KeyValueBackend,
    load_user_definitions,
    save_user_definitions,
)
from .plugin_contract import ToolHost

__all__ = ["agent_registry", "attach_storage", "make_subagent_tool"]

_registry: AgentRegistry | None = None


def agent_registry() -> AgentRegistry:
    """The page's agent definitions (built-ins plus the user's), shared by every session."""
    global _registry
    if _registry is None:
        _registry = AgentRegistry()
    return _registry


async def attach_storage(
    backend: KeyValueBackend,
    *,
    store: str = DEFAULT_STORE,
    key: str = DEFAULT_KEY,
    on_error: Callable[[BaseException], Any] | None = None,
) -> list[str]:
    """Load the stored user definitions into :func:`agent_registry` and save them after every
    change from now on. Returns the problems of stored records that were skipped."""
    registry = agent_registry()
    problems = await load_user_definitions(backend, registry, store=store, key=key)
    pending: set[asyncio.Task[None]] = set()

    def save(changed: AgentRegistry) -> None:
        task = asyncio.ensure_future(save_user_definitions(backend, changed, store=store, key=key))
        pending.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            pending.discard(finished)
            error = finished.exception() if not finished.cancelled() else None
            if error is not None and on_error is not None:
                on_error(error)

        task.add_done_callback(done)

    registry.subscribe(save)
    return problems


def make_subagent_tool(host: ToolHost) -> SubagentTool:
    """The tool factory registered as ``"subagent"``."""
    extras = host.extras
    ask = extras.get("confirm")

    def session_tools() -> list[Any]:
        # Read at each run: the other plugins fill `extras` when their factories run.
        get_tools = extras.get("get_tools")
        if callable(get_tools):
            return list(get_tools())
        workspace = extras.get("workspace")
        if workspace is not None:
            # The workspace plugin's tools over the same workspace (the session's own are not
            # reachable from a ToolHost): what one child writes, the session and the next child read.
            from .workspace_tools import make_tools, settings_from

            return list(make_tools(workspace, lambda: settings_from(extras.get("tool_settings"))))
        return []

    async def confirm(definitions: list[AgentDefinition]) -> bool:
        title, message = confirmation_text(definitions)
        return bool(await maybe_await(ask(title, message))) if ask is not None else False

    subagent_host = SubagentHost(
        model=host.get_model,
        thinking_level=cast(Callable[[], ThinkingLevel], host.get_thinking_level),
        tools=session_tools,
        get_api_key=host.get_api_key,
        stream_fn=extras.get("stream_fn"),
    )
    on_end = extras.get("on_subagent_end")
    return create_subagent_tool(
        subagent_host,
        agent_registry(),
        confirm=confirm if ask is not None else None,
        on_child_end=on_end if callable(on_end) else None,
    )
