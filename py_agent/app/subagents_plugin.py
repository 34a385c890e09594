"""The subagents plugin: the ``subagent`` tool, Settings → Agents and the session totals.

:func:`subagents_plugin` (listed in :func:`py_agent.app.plugins.default_plugins`) declares

- the page commands of Settings → Agents (``py("agents_list")`` ...), over the page's one
  :func:`~py_agent.app.subagent_tool.agent_registry` (stored in IndexedDB by
  :func:`~py_agent.app.subagent_tool.attach_storage`, which the app calls at start):
  ``agents_list``, ``agent_markdown {name}``, ``agent_save {markdown, previous_name}``,
  ``agent_delete {name}``, ``agent_import {text, filename}``, ``agent_confirm {name}``;
- the tool factory ``"subagent"`` (:func:`~py_agent.app.subagent_tool.make_subagent_tool`),
  its ``after_tool_call`` hook, and the loading of the stored definitions when storage opens;
- a usage source: the children's usage (``details.results[].usage`` of ``subagent`` tool results,
  as :func:`py_agent.tools.subagent.collect_subagent_usage` reads it) added to the session's
  totals, including the children of a ``subagent`` call still running (its latest progress).

The chat card is ``web/ui/subagents.js``; the settings page ``web/ui/agents-settings.js``.
Pure: no browser modules.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from ..session.tree import SessionTree
from ..tools.subagent import SUBAGENT_TOOL_NAME, subagent_after_tool_call
from ..tools.subagent_definitions import (
    AgentDefinition,
    DefinitionError,
    DefinitionStatus,
    definition_to_markdown,
)
from .commands import command
from .plugin_contract import Plugin
from .subagent_tool import agent_registry, attach_storage, make_subagent_tool

__all__ = ["agent_row", "subagent_usage", "subagents_plugin"]

MAX_IMPORT_CHARS = 200_000


def agent_row(definition: AgentDefinition) -> dict[str, Any]:
    registry = agent_registry()
    builtin = registry.builtin(definition.name) is not None
    return {
        "name": definition.name,
        "description": definition.description,
        "tools": definition.tools,
        "model": definition.model,
        "source": definition.source,
        "status": definition.status,
        "origin": definition.origin,
        "overridesBuiltin": builtin and definition.source == "user",
    }


def _listing() -> dict[str, Any]:
    return {"agents": [agent_row(d) for d in agent_registry().all()]}


def agents_list() -> dict[str, Any]:
    return _listing()


def agent_markdown(name: str) -> dict[str, Any]:
    definition = agent_registry().get(name)
    if definition is None:
        raise ValueError(f"There is no agent called {name!r}.")
    return {"markdown": definition_to_markdown(definition), "row": agent_row(definition)}


def agent_save(markdown: str, previous_name: str | None = None) -> dict[str, Any]:
    registry = agent_registry()
    previous = registry.get(previous_name) if previous_name else None
    # Editing an imported definition does not confirm it: that stays an explicit step.
    pending = previous is not None and previous.source == "user" and previous.status == "pending"
    status: DefinitionStatus | None = "pending" if pending else None
    try:
        saved = registry.save(markdown, previous_name=previous_name or None, status=status)
    except DefinitionError as error:
        raise ValueError(str(error)) from error
    return {"saved": agent_row(saved), **_listing()}


def agent_delete(name: str) -> dict[str, Any]:
    if not agent_registry().delete(name):
        raise ValueError(f"{name!r} is built in: it cannot be deleted.")
    return _listing()


def agent_import(text: str, filename: str = "") -> dict[str, Any]:
    if len(text) > MAX_IMPORT_CHARS:
        raise ValueError("This file is too large to be an agent definition.")
    try:
        imported = agent_registry().import_markdown(text, origin=filename or "imported file")
    except DefinitionError as error:
        raise ValueError(f"{filename or 'The file'}: {error}") from error
    return {"imported": agent_row(imported), **_listing()}


def agent_confirm(name: str) -> dict[str, Any]:
    try:
        agent_registry().confirm(name)
    except KeyError:
        raise ValueError(f"There is no imported agent called {name!r}.") from None
    return _listing()


# ---- usage -----------------------------------------------------------------------------------

_FIELDS = (("input", "input"), ("output", "output"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"))


def _add_results(total: dict[str, float], details: Any) -> None:
    if not isinstance(details, Mapping):
        return
    results = details.get("results")
    if not isinstance(results, list):
        return
    for result in results:
        usage = result.get("usage") if isinstance(result, Mapping) else None
        if not isinstance(usage, Mapping):
            continue
        for camel, snake in _FIELDS:
            value = usage.get(camel, usage.get(snake))
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[camel] += value
        cost = usage.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            total["cost"] += cost


def _entries_usage(entries: Iterable[Any], total: dict[str, float] | None = None) -> dict[str, float]:
    total = (
        dict(total) if total is not None else dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "cost"), 0.0)
    )
    for entry in entries:
        message = getattr(entry, "message", None)
        if type(message) is not dict and not isinstance(message, Mapping):
            continue
        if message.get("role") == "toolResult" and message.get("toolName") == SUBAGENT_TOOL_NAME:
            _add_results(total, message.get("details"))
    return total


# A session's entries are only ever appended: its sum so far and how many entries it covers, so
# that the state sent at every step of a run (py_agent/app/chat.py) reads only the new entries.
_SESSION_SUMS: weakref.WeakKeyDictionary[SessionTree, tuple[int, dict[str, float]]] = weakref.WeakKeyDictionary()


def subagent_usage(entries: Iterable[Any], partials: Iterable[Any] = ()) -> dict[str, float]:
    """The children's usage in a session: every ``subagent`` tool result among ``entries`` (all
    branches, as the session's own totals), plus ``partials`` (the latest progress of ``subagent``
    calls still running). Reads the JSON directly (no validation of the children's transcripts:
    this runs at every state update)."""
    if isinstance(entries, SessionTree):
        count, summed = _SESSION_SUMS.get(entries, (0, None))
        if summed is None or count > len(entries):
            count, summed = 0, None
        summed = _entries_usage(itertools.islice(entries, count, None), summed)
        _SESSION_SUMS[entries] = (len(entries), summed)
        total = dict(summed)
    else:
        total = _entries_usage(entries)
    for partial in partials:
        if isinstance(partial, Mapping):
            details = partial.get("details")
            if isinstance(details, Mapping) and details.get("mode") in ("single", "parallel", "chain"):
                _add_results(total, details)
    return total


async def _load_definitions(backend: Any) -> list[str]:
    return await attach_storage(backend)


def subagents_plugin() -> Plugin:
    """The subagents plugin: the tool, its hook, Settings → Agents, the children's usage."""
    return Plugin(
        name="subagents",
        tool_factories={"subagent": make_subagent_tool},
        commands=tuple(
            command(name, handler)
            for name, handler in (
                ("agents_list", agents_list),
                ("agent_markdown", agent_markdown),
                ("agent_save", agent_save),
                ("agent_delete", agent_delete),
                ("agent_import", agent_import),
                ("agent_confirm", agent_confirm),
            )
        ),
        after_tool_call=(subagent_after_tool_call,),
        on_storage_open=_load_definitions,
        usage_sources={"subagent": subagent_usage},
    )
