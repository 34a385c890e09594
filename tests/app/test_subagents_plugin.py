"""The page's side of the subagent tool in CPython: Settings → Agents commands (stored and reloaded
through the storage backend) and the children's usage in the session totals."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from py_agent.app import subagent_tool
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend
from py_agent.app.subagent_tool import agent_registry
from py_agent.app.subagents_plugin import subagent_usage, subagents_plugin
from py_agent.session import Session, SessionHeader
from py_agent.testing.mock_server import MockProviderServer

PLUGINS = [subagents_plugin]

DEFINITION = """---
name: helper
description: Helps with things
tools: read
---

You help.
"""


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.events.append((kind, json.loads(payload)))


async def make_app(backend: MemoryBackend) -> tuple[WebApp, Recorder]:
    recorder = Recorder()
    app = WebApp(backend, MemoryTabStore(), recorder, demo_tokens_per_second=0, plugins=PLUGINS)
    await app.start()
    return app, recorder


async def call(app: WebApp, command: str, **args: Any) -> dict[str, Any]:
    result = json.loads(await app.dispatch(command, json.dumps(args)))
    assert "error" not in result, result
    return result


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_agents_settings_commands_store_and_reload() -> None:
    agent_registry().load_records([])
    backend = MemoryBackend()
    app, _ = await make_app(backend)
    names = [a["name"] for a in (await call(app, "agents_list"))["agents"]]
    assert names[:4] == ["scout", "planner", "reviewer", "worker"]

    saved = await call(app, "agent_save", markdown=DEFINITION)
    assert saved["saved"] == {**saved["saved"], "name": "helper", "source": "user", "status": "active"}
    edited = DEFINITION.replace("Helps with things", "Helps better")
    await call(app, "agent_save", markdown=edited, previous_name="helper")
    bad = json.loads(await app.dispatch("agent_save", json.dumps({"markdown": "no frontmatter"})))
    assert "name" in bad["error"]

    imported = await call(app, "agent_import", text=DEFINITION.replace("helper", "outsider"), filename="outsider.md")
    assert imported["imported"]["status"] == "pending" and imported["imported"]["origin"] == "outsider.md"
    # Editing an imported definition does not confirm it.
    await call(app, "agent_save", markdown=DEFINITION.replace("helper", "outsider"), previous_name="outsider")
    assert agent_registry().get("outsider").status == "pending"  # type: ignore[union-attr]
    await call(app, "agent_confirm", name="outsider")
    assert agent_registry().get("outsider").status == "active"  # type: ignore[union-attr]

    customized = await call(app, "agent_save", markdown=(await call(app, "agent_markdown", name="scout"))["markdown"])
    assert customized["saved"]["overridesBuiltin"] is True
    assert "built in" in json.loads(await app.dispatch("agent_delete", json.dumps({"name": "planner"})))["error"]
    await call(app, "agent_delete", name="outsider")
    await settle()

    # A new page over the same storage sees the same definitions. A page has a registry of its own:
    # emptying this one would also have the first app save it, empty, over what it stored.
    subagent_tool._registry = None
    app2, _ = await make_app(backend)
    rows = {a["name"]: a for a in (await call(app2, "agents_list"))["agents"]}
    assert rows["helper"]["description"] == "Helps better"
    assert "outsider" not in rows and rows["scout"]["source"] == "user"
    agent_registry().load_records([])
    await settle()


def test_usage_reads_results_and_running_partials() -> None:
    class Entry:
        def __init__(self, message: dict[str, Any]) -> None:
            self.message = message

    usage = {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 0, "cost": 0.5, "turns": 1}
    done = Entry(
        {
            "role": "toolResult",
            "toolName": "subagent",
            "details": {"mode": "parallel", "results": [{"usage": usage}] * 2},
        }
    )
    other = Entry({"role": "toolResult", "toolName": "read", "details": {"results": [{"usage": usage}]}})
    partial = {"content": [], "details": {"mode": "single", "results": [{"usage": usage}]}}
    total = subagent_usage([done, other], [partial, {"details": {"results": [{"usage": usage}]}}])
    assert total == {"input": 300, "output": 60, "cacheRead": 15, "cacheWrite": 0, "cost": 1.5}


def test_usage_of_a_session_counts_the_entries_appended_since_it_was_last_read() -> None:
    # The sum over a session is kept and grown with its new entries (read at every state update).
    usage = {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 0, "cost": 0.1}

    def result(n: int) -> dict[str, Any]:
        details = {"mode": "single", "results": [{"usage": usage}] * n}
        return {
            "role": "toolResult",
            "toolCallId": f"c{n}",
            "toolName": "subagent",
            "content": [],
            "details": details,
            "isError": False,
            "timestamp": 1,
        }

    session = Session(SessionHeader(id="s"))
    assert subagent_usage(session)["input"] == 0
    session.append_message(result(1))
    assert subagent_usage(session) == subagent_usage(list(session))
    assert subagent_usage(session)["input"] == 100
    session.append_message({"role": "user", "content": "hi", "timestamp": 2})
    session.append_message(result(2))
    session.append_message(result(3))
    total = subagent_usage(session)
    assert total == subagent_usage(list(session))
    assert total["input"] == 600 and total["output"] == 120
    assert subagent_usage(session) == total  # read again: nothing new, the same


async def test_children_usage_adds_to_the_session_totals() -> None:
    agent_registry().load_records([])
    with MockProviderServer() as server:
        app, recorder = await make_app(MemoryBackend())
        provider = {
            "name": "Mock",
            "kind": "openai-compatible",
            "api": "anthropic-messages",
            "baseUrl": server.url,
            "models": ["m"],
        }
        await call(app, "save_custom_provider", provider=provider, discover=False)
        await call(app, "save_key", provider="Mock", key="k-1", remember=True)
        await call(app, "new_session")
        await call(app, "set_model", provider="Mock", id="m")
        tasks = [{"agent": "scout", "task": "one"}, {"agent": "scout", "task": "two"}]
        server.script(
            [
                {
                    "tool_calls": [{"id": "c1", "name": "subagent", "arguments": {"tasks": tasks}}],
                    "usage": {"input": 1000, "output": 10},
                },
                {"text": "child", "usage": {"input": 100, "output": 20}, "repeat": 2},
                {"text": "parent done", "usage": {"input": 2000, "output": 30}},
            ]
        )
        assert (await call(app, "send", text="go"))["status"] == "sent"
        assert app.chat is not None
        for _ in range(500):
            await app.chat.wait_idle()
            if not app.chat.streaming:
                break
            await asyncio.sleep(0.01)
        state = app.chat.state()
        assert state["usage"]["input"] == 3200 and state["usage"]["output"] == 80
        # The page heard of the children's usage while the tool ran (on_subagent_end).
        inputs = [p["usage"]["input"] for kind, p in recorder.events if kind == "session_state"]
        assert 1100 in inputs or 1200 in inputs
