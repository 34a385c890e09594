"""A scripted conversation (the faux provider) through a real Agent with the workspace tools:
the model writes a file, reads it, edits it, lists and searches the workspace, and a refused
path comes back as an error result the conversation goes on from."""

# pyodide-runner: no-fs
from __future__ import annotations

from typing import Any

from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.core import Agent
from py_agent.tools import MemoryWorkspaceStore, Workspace, make_tools


def _text(message: Any) -> str:
    return "".join(getattr(block, "text", "") for block in message.content)


async def test_scripted_conversation_uses_the_workspace() -> None:
    faux = register_faux_provider(token_size={"min": 8, "max": 8})
    try:
        store = MemoryWorkspaceStore()
        workspace = await Workspace.open(store)
        faux.set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("write", {"path": "notes/plan.md", "content": "# Plan\n- step one\n"}, id="t1")],
                    stop_reason="toolUse",
                ),
                faux_assistant_message(
                    [
                        # The single-replacement form is accepted too (pi's prepareArguments).
                        faux_tool_call(
                            "edit", {"path": "notes/plan.md", "oldText": "- step one", "newText": "- step 1"}, id="t2"
                        ),
                        faux_tool_call("read", {"path": "/workspace/notes/plan.md"}, id="t3"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message(
                    [
                        faux_tool_call("ls", {}, id="t4"),
                        faux_tool_call("grep", {"pattern": "step", "glob": "*.md"}, id="t5"),
                        faux_tool_call("read", {"path": "../../etc/passwd"}, id="t6"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message("Done: notes/plan.md has the plan."),
            ]
        )
        model = faux.get_model()
        agent = Agent(initial_state={"model": model, "tools": make_tools(workspace)})
        await agent.prompt("Make a plan file")

        results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
        assert _text(results["t1"]) == "Successfully wrote 18 bytes to notes/plan.md"
        assert _text(results["t2"]) == "Successfully replaced 1 block(s) in notes/plan.md."
        assert results["t2"].details["diff"] == " 1 # Plan\n-2 - step one\n+2 - step 1"
        assert _text(results["t3"]) == "# Plan\n- step 1\n"
        assert _text(results["t4"]) == "notes/"
        assert _text(results["t5"]) == "notes/plan.md:2: - step 1"
        assert results["t6"].is_error
        assert "'..' is not allowed in workspace paths" in _text(results["t6"])
        assert not any(results[i].is_error for i in ("t1", "t2", "t3", "t4", "t5"))
        assert _text(agent.state.messages[-1]) == "Done: notes/plan.md has the plan."

        # Saved as it went: a workspace opened again from the store has the final file.
        again = await Workspace.open(store)
        assert again.get("notes/plan.md").data == "# Plan\n- step 1\n"
    finally:
        faux.unregister()
