"""The subagents plugin: its declared factory builds a working subagent tool from a session's ToolHost.

Plain test functions (no fixtures).
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from subagent_helpers import Seen, dummy_tool, make_faux, router, task_of

from py_agent.app import subagent_tool
from py_agent.app.plugin_contract import LoadedPlugins, ToolHost
from py_agent.app.subagents_plugin import subagents_plugin
from py_agent.app.workspace_store import WorkspacePlatform, set_workspace_platform, workspace_platform
from py_agent.tools.subagent import SubagentTool
from py_agent.tools.subagent_definitions import AgentDefinition, AgentRegistry


def tool_host(model: Any, extras: dict[str, Any]) -> ToolHost:
    async def append_custom_entry(custom_type: str, data: Any) -> None:
        return None

    return ToolHost(
        session_id="s1",
        get_model=lambda: model,
        get_thinking_level=lambda: "off",
        get_api_key=lambda provider: None,
        append_custom_entry=append_custom_entry,
        custom_entries=lambda custom_type: [],
        post_to_panel=lambda panel, data: None,
        open_panel=lambda panel: None,
        extras=extras,
    )


async def test_the_factory_is_declared_and_children_use_the_session_tools() -> None:
    plugin = subagents_plugin()
    assert list(plugin.tool_factories) == ["subagent"] and plugin.after_tool_call and plugin.on_storage_open
    faux, model = make_faux()
    try:
        seen = Seen()
        faux.set_responses(router(lambda ctx: f"did {task_of(ctx)}", seen))
        session_tools: list[Any] = [dummy_tool("read"), dummy_tool("write")]
        ended: list[Any] = []
        host = tool_host(model, {"get_tools": lambda: session_tools, "on_subagent_end": ended.append})
        tools, errors = await LoadedPlugins([plugin]).build_tools(host)
        assert errors == []
        tool = next(t for t in tools if t.name == "subagent")
        assert isinstance(tool, SubagentTool)
        session_tools.append(tool)
        result = await tool.execute("c1", {"agent": "worker", "task": "x"}, None, None)  # type: ignore[misc]
        assert result.content[0].text == "did x"
        assert seen.calls[0]["tools"] == ["read", "write"]
        assert len(ended) == 1 and ended[0].status == "completed"
    finally:
        faux.unregister()


async def test_imported_agents_are_confirmed_through_the_page_dialog() -> None:
    faux, model = make_faux()
    registry = subagent_tool.agent_registry()
    try:
        faux.set_responses(router(lambda ctx: "ran"))
        registry.import_markdown("---\nname: plugin-imported\ndescription: d\n---\nx", origin="agents/x.md")
        questions: list[tuple[str, str]] = []

        async def confirm(title: str, message: str) -> bool:
            questions.append((title, message))
            return True

        tool = subagent_tool.make_subagent_tool(tool_host(model, {"confirm": confirm}))
        result = await tool.execute("c1", {"agent": "plugin-imported", "task": "t"}, None, None)  # type: ignore[misc]
        assert result.content[0].text == "ran"
        assert questions == [
            (
                "Run imported agents?",
                "Sources:\n- plugin-imported: agents/x.md\n\nImported agents carry prompts written outside this app. "
                "Only continue if you trust them.",
            )
        ]
        assert registry.get("plugin-imported").status == "active"  # type: ignore[union-attr]
    finally:
        registry.delete("plugin-imported")
        faux.unregister()


class FakeKV:
    def __init__(self, data: dict[tuple[str, str], Any] | None = None) -> None:
        self.data = data or {}

    async def kv_get(self, store: str, key: str) -> Any:
        return self.data.get((store, key))

    async def kv_put(self, store: str, key: str, value: Any) -> None:
        self.data[(store, key)] = value


async def test_storage_is_loaded_and_saved_on_change() -> None:
    saved = AgentRegistry(builtins=False)
    saved.save(AgentDefinition(name="stored-one", description="from IndexedDB"))
    backend = FakeKV({("settings", "subagent.agents"): saved.to_records()})
    registry = subagent_tool.agent_registry()
    before = registry.to_records()
    try:
        assert await subagent_tool.attach_storage(backend) == []
        assert registry.get("stored-one") is not None
        registry.save(AgentDefinition(name="new-one", description="typed in settings"))
        await asyncio.sleep(0.01)
        names = [r["name"] for r in backend.data[("settings", "subagent.agents")]]
        assert names == ["stored-one", "new-one"]
    finally:
        registry._listeners.clear()
        registry.load_records(before)


async def test_dropped_tools_do_not_stay_subscribed_to_the_shared_registry() -> None:
    faux, model = make_faux()
    try:
        registry = subagent_tool.agent_registry()

        def listeners_after_a_change() -> int:
            # A dropped tool's listener leaves at the next change; tools that earlier tests in this
            # process dropped leave too, so each count is taken after one.
            gc.collect()
            registry.save(AgentDefinition(name="trigger", description="d"))
            registry.delete("trigger")
            return len(registry._listeners)

        before = listeners_after_a_change()
        tool = subagent_tool.make_subagent_tool(tool_host(model, {}))
        assert len(registry._listeners) == before + 1
        del tool
        assert listeners_after_a_change() == before
    finally:
        faux.unregister()


async def test_without_get_tools_children_use_the_workspace_plugins_tools() -> None:
    from py_agent.ai.faux import faux_assistant_message, faux_tool_call
    from py_agent.tools import MemoryWorkspaceStore, Workspace

    def code_tools(_workspace: Any, _settings: Any) -> list[Any]:
        return [dummy_tool("javascript"), dummy_tool("python")]  # the page's sandboxed tools, in miniature

    before = workspace_platform()
    set_workspace_platform(WorkspacePlatform(code_tools=code_tools))
    faux, model = make_faux()
    try:
        workspace = await Workspace.open(MemoryWorkspaceStore())
        seen = Seen()

        def respond(ctx: Any) -> Any:
            if not any(getattr(m, "role", None) == "toolResult" for m in ctx.messages):
                return faux_assistant_message(
                    [faux_tool_call("write", {"path": "out.txt", "content": "from a child"}, id="w")],
                    stop_reason="toolUse",
                )
            return "written"

        faux.set_responses(router(respond, seen))
        tool = subagent_tool.make_subagent_tool(tool_host(model, {"workspace": workspace}))
        result = await tool.execute("c1", {"agent": "worker", "task": "write it"}, None, None)  # type: ignore[misc]
        assert result.content[0].text == "written"
        file = workspace.get("out.txt")
        assert file is not None and file.text() == "from a child"
        assert seen.calls[0]["tools"] == ["read", "write", "edit", "ls", "grep", "find", "javascript", "python"]
    finally:
        faux.unregister()
        set_workspace_platform(before)
