"""The plugin contract in CPython: what a Plugin declares reaches the app (its tool, panel,
command, settings, hooks and usage), and a plugin that fails to build, or whose hook fails, is
reported as a notice while the app runs without it."""

from __future__ import annotations

import json
from typing import Any

from py_agent.app.commands import command
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.plugin_contract import Plugin, SessionExport, ToolHost
from py_agent.app.plugins import default_plugins
from py_agent.app.storage import MemoryBackend
from py_agent.core.types import AgentTool


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))


async def call(app: WebApp, name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await app.dispatch(name, json.dumps(args)))
    return result


def broken() -> Plugin:
    raise ImportError("no module named 'missing_feature'")


async def test_a_plugin_that_fails_to_build_is_a_notice_and_the_app_runs_without_it() -> None:
    recorder = Recorder()
    app = WebApp(MemoryBackend(), MemoryTabStore(), recorder, demo_tokens_per_second=0, plugins=[broken])
    await app.start()
    init = await call(app, "init")
    assert init["notices"] == ["Plugin broken could not be loaded: no module named 'missing_feature'"]
    assert app.plugins.names == []
    assert (await call(app, "new_session"))["persisted"] is False
    assert (await call(app, "send", text="hello"))["status"] == "sent"


async def test_default_plugins_build_and_declare_their_parts() -> None:
    app = WebApp(MemoryBackend(), MemoryTabStore(), Recorder(), demo_tokens_per_second=0, plugins=default_plugins())
    await app.start()
    assert app.startup_notices == []
    assert app.plugins.names == ["workspace", "subagents", "attachments", "mcp"]
    assert "agents_list" in app.commands and app.plugins.panel_handler("workspace") is not None
    assert app.plugins.attachment_types() == ["py-agent/workspace"]
    await call(app, "new_session")
    assert app.chat is not None
    assert {"read", "write", "subagent"} <= {t.name for t in app.chat.agent.state.tools}


async def test_what_a_plugin_declares_reaches_the_app() -> None:
    seen: list[Any] = []

    def factory(host: ToolHost) -> AgentTool:
        seen.append(("tool", host.session_id))
        return AgentTool(name="probe", description="A probe.")

    async def on_storage_open(backend: Any) -> list[str]:
        seen.append("storage")
        return ["one stored record was skipped"]

    async def on_session_deleted(session_id: str) -> None:
        seen.append(("deleted", session_id))

    async def export(session_id: str, secrets: list[str]) -> Any:
        raise RuntimeError("disk on fire")

    async def restore(session_id: str, data: Any) -> list[str]:
        return []

    def probe_plugin() -> Plugin:
        return Plugin(
            name="probe",
            tool_factories={"probe": factory},
            panel_handlers={"probe-panel": lambda session_id, data: {"echo": data}},
            commands=(command("probe_echo", lambda text, times=1: {"text": text * times}),),
            settings=("probeLevel",),
            on_storage_open=on_storage_open,
            on_session_deleted=on_session_deleted,
            session_export=SessionExport("probe/data", export, restore),
            usage_sources={"probe": lambda entries, partials: {"input": 7, "cost": 0.5}},
        )

    def clashing() -> Plugin:
        return Plugin(name="clash", commands=(command("init", lambda: {}),))

    recorder = Recorder()
    app = WebApp(
        MemoryBackend(), MemoryTabStore(), recorder, demo_tokens_per_second=0, plugins=[probe_plugin, clashing]
    )
    await app.start()
    assert app.startup_notices == [
        "Plugin clash could not be loaded: The command 'init' is declared twice",
        "one stored record was skipped",
    ]
    assert app.plugins.names == ["probe"]
    assert await call(app, "probe_echo", text="ab", times=2) == {"text": "abab"}
    assert "error" in await call(app, "probe_echo", text="ab", count=2)
    assert (await call(app, "set_setting", key="probeLevel", value=3))["settings"]["probeLevel"] == 3
    sid = (await call(app, "new_session"))["sessionId"]
    assert ("tool", sid) in seen
    assert await call(app, "panel_message", panel="probe-panel", data=1) == {"handled": True, "result": {"echo": 1}}
    assert await call(app, "panel_message", panel="nobody", data=1) == {"handled": False}
    assert (await call(app, "send", text="hi"))["status"] == "sent"
    assert app.chat is not None
    await app.chat.wait_idle()
    usage = app.chat.state()["usage"]
    assert usage["input"] >= 7 and usage["cost"] >= 0.5
    exported = await call(app, "export_session", id=sid)
    assert "probe/data" not in exported["text"]
    assert any(k == "notice" and "Plugin probe could not export" in p["text"] for k, p in recorder.events)
    await call(app, "delete_session", id=sid)
    assert ("deleted", sid) in seen
