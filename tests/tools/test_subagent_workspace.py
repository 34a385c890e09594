"""Children share the session's workspace: what one child writes, the next one reads.

Uses the real workspace tools (``py_agent.tools.make_tools``) over an in-memory store.
Plain test functions (no fixtures), so the module also runs inside Pyodide.
"""

from __future__ import annotations

from typing import Any

from subagent_helpers import Seen, make_faux, router, task_of, text_of

from py_agent.ai.faux import faux_assistant_message, faux_tool_call
from py_agent.ai.types import Context
from py_agent.core import Agent
from py_agent.tools import MemoryWorkspaceStore, Workspace, make_tools
from py_agent.tools.subagent import create_subagent_tool, parse_subagent_details


def _last_tool_result(ctx: Context) -> Any:
    results = [m for m in ctx.messages if getattr(m, "role", None) == "toolResult"]
    return results[-1] if results else None


async def test_a_chain_hands_files_over_through_the_shared_workspace() -> None:
    faux, model = make_faux()
    workspace = await Workspace.open(MemoryWorkspaceStore())
    try:
        seen = Seen()

        def respond(ctx: Context) -> Any:
            system = ctx.system_prompt or ""
            done = _last_tool_result(ctx)
            if system == "parent":
                if done is not None:
                    return "All done."
                return faux_assistant_message(
                    [
                        faux_tool_call(
                            "subagent",
                            {
                                "chain": [
                                    {"agent": "worker", "task": "Write the notes"},
                                    {"agent": "scout", "task": "Read notes.md, then report. Worker said: {previous}"},
                                ]
                            },
                            id="sub-1",
                        )
                    ],
                    stop_reason="toolUse",
                )
            task = task_of(ctx)
            if task == "Write the notes":
                if done is None:
                    return faux_assistant_message(
                        [faux_tool_call("write", {"path": "notes.md", "content": "the secret is 42"}, id="w1")],
                        stop_reason="toolUse",
                    )
                return "Wrote notes.md"
            if done is None:
                return faux_assistant_message(
                    [faux_tool_call("read", {"path": "notes.md"}, id="r1")], stop_reason="toolUse"
                )
            return f"notes.md says: {text_of(done)}"

        faux.set_responses(router(respond, seen))
        parent = Agent(initial_state={"system_prompt": "parent", "model": model})
        parent.state.tools = [*make_tools(workspace), create_subagent_tool(parent)]
        await parent.prompt("Delegate it.")

        assert workspace.get("notes.md") is not None
        tool_result = next(m for m in parent.state.messages if getattr(m, "role", None) == "toolResult")
        assert tool_result.content[0].text == "notes.md says: the secret is 42"
        details = parse_subagent_details(tool_result.details)
        assert details is not None and not details.is_error
        worker, scout = details.results
        assert worker.task == "Write the notes" and worker.usage.turns == 2
        assert [m.role for m in worker.messages] == ["user", "assistant", "toolResult", "assistant"]
        assert scout.task == "Read notes.md, then report. Worker said: Wrote notes.md"
        assert scout.tools == ["read", "grep", "find", "ls"]
        assert "write" not in [t for c in seen.calls if "scout" in (c["system_prompt"] or "") for t in c["tools"]]
        assert parent.state.messages[-1].content[0].text == "All done."
    finally:
        faux.unregister()
