"""The workspace plugin of the web app (py_agent.app.workspace_tools), in CPython: its factory
gives a session its tools over its workspace (the file tools and the platform's code tools, here
stand-ins), shares the workspace with other plugins, and talks to the page's "workspace" panel.
(The sandboxed tools themselves run in tests/browser/.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.ai.types import Model
from py_agent.app import workspace_tools
from py_agent.app.plugin_contract import Plugin, ToolHost
from py_agent.app.workspace_store import (
    SettingsSource,
    WorkspacePlatform,
    open_workspace,
    set_workspace_platform,
    workspace_platform,
)
from py_agent.core.types import AgentTool
from py_agent.tools import ToolSettings, Workspace


def stand_in_code_tools(workspace: Workspace, settings: SettingsSource) -> list[AgentTool]:
    """The page's code tools in miniature: their descriptions say what the settings allow."""
    current = settings() if callable(settings) else settings
    network = "Network access is ON" if current.javascript_network else "There is NO network access"
    return [AgentTool(name="javascript", description=network), AgentTool(name="python", description=network)]


@pytest.fixture(autouse=True)
def plugin() -> Iterator[Plugin]:
    before = workspace_platform()
    try:
        yield workspace_tools.workspace_plugin(WorkspacePlatform(code_tools=stand_in_code_tools))
    finally:
        set_workspace_platform(before)


def make_host(session_id: str, posted: list[tuple[str, str, Any]], extras: dict[str, Any] | None = None) -> ToolHost:
    async def append_custom_entry(_type: str, _data: Any) -> None:
        return None

    return ToolHost(
        session_id=session_id,
        get_model=lambda: Model(id="m", api="faux", provider="faux"),
        get_thinking_level=lambda: "off",
        get_api_key=lambda _provider: None,
        append_custom_entry=append_custom_entry,
        custom_entries=lambda _type: [],
        post_to_panel=lambda panel, data: posted.append(("message", panel, data)),
        open_panel=lambda panel: posted.append(("open", panel, None)),
        suggest_panel=lambda panel, what: posted.append(("suggest", panel, what)),
        extras=dict(extras or {}),
    )


async def test_factory_gives_the_tools_and_shares_the_workspace(plugin: Plugin) -> None:
    posted: list[tuple[str, str, Any]] = []
    host = make_host("plugin-session-1", posted)
    factory = plugin.tool_factories["workspace"]
    tools = await factory(host)
    assert [t.name for t in tools] == ["read", "write", "edit", "ls", "grep", "find", "javascript", "python"]
    workspace = host.extras["workspace"]
    assert isinstance(workspace, Workspace)
    assert posted == [("message", "workspace", {"sessionId": "plugin-session-1"})]
    again = await factory(make_host("plugin-session-1", []))
    assert again[0] is not tools[0] and await open_workspace("plugin-session-1") is workspace


async def test_settings_come_from_the_host_and_can_disable_tools(plugin: Plugin) -> None:
    host = make_host(
        "plugin-session-2",
        [],
        {
            "tool_settings": ToolSettings(
                javascript_network=True, disabled_tools=frozenset({"python", "grep"})
            ).to_json()
        },
    )
    tools = {t.name: t for t in await plugin.tool_factories["workspace"](host)}
    assert "python" not in tools and "grep" not in tools
    assert "Network access is ON" in tools["javascript"].description
    off = {t.name: t for t in workspace_tools.make_tools(Workspace())}
    assert "There is NO network access" in off["javascript"].description
    assert "There is NO network access" in off["python"].description


async def test_files_written_by_tools_are_offered_in_the_panel(plugin: Plugin) -> None:
    posted: list[tuple[str, str, Any]] = []
    host = make_host("plugin-session-3", posted)
    tools = {t.name: t for t in await plugin.tool_factories["workspace"](host)}
    posted.clear()
    write = tools["write"].execute
    assert write is not None
    await write("1", {"path": "report.html", "content": "<h1>x</h1>"}, None, None)
    await write("2", {"path": "notes.txt", "content": "plain"}, None, None)
    await host.extras["workspace"].write("chart.svg", "<svg/>", source="import")
    # Offered, not opened: the page opens it where there is room, and asks on a phone.
    assert posted == [
        ("message", "workspace", {"sessionId": "plugin-session-3", "select": "report.html"}),
        ("suggest", "workspace", "report.html"),
    ]
    posted.clear()
    handler = plugin.panel_handlers["workspace"]
    handler("plugin-session-3", {"type": "open", "path": "notes.txt"})
    handler("plugin-session-3", {"type": "unknown"})
    handler("no-such-session", {"type": "open", "path": "x"})
    assert posted == [
        ("open", "workspace", None),
        ("message", "workspace", {"sessionId": "plugin-session-3", "select": "notes.txt"}),
    ]


async def test_the_changes_kept_for_undo_are_deleted_with_the_session() -> None:
    from py_agent.app.workspace_store import delete_workspace
    from py_agent.tools.history import MemoryChangeStore

    kept: dict[str, MemoryChangeStore] = {}
    set_workspace_platform(
        WorkspacePlatform(open_changes=lambda session_id: kept.setdefault(session_id, MemoryChangeStore()))
    )
    workspace = await open_workspace("plugin-session-undo")
    await workspace.write("a.txt", "new", source="write", change="call-1")
    assert workspace.history.state("call-1") == "available" and kept["plugin-session-undo"].records
    await delete_workspace("plugin-session-undo")
    assert kept["plugin-session-undo"].records == {}
    assert (await open_workspace("plugin-session-undo")).history.state("call-1") == "none"
