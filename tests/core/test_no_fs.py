# pyodide-runner: no-fs
"""The core runs a full tool-using conversation with no file access at all.

Inside Pyodide the runner refuses every file-system operation while this module runs (see
tests/pyodide/run.mjs, "no-fs" mode) and fails it if anything tried; in CPython it still checks
the conversation itself. The tool keeps its "files" in memory, as the web app's workspace does.
"""

from __future__ import annotations

from py_agent import Agent, AgentTool, AgentToolResult, TextContent
from py_agent.ai.faux import faux_assistant_message, faux_text, faux_thinking, faux_tool_call, register_faux_provider

MEMORY_FS: dict[str, str] = {}

WRITE_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def _write(tool_call_id: str, params: dict[str, str], signal: object, on_update: object) -> AgentToolResult:
    MEMORY_FS[params["path"]] = params["content"]
    return AgentToolResult(content=[TextContent(text=f"wrote {len(params['content'])} bytes")], details={})


async def _read(tool_call_id: str, params: dict[str, str], signal: object, on_update: object) -> AgentToolResult:
    if params["path"] not in MEMORY_FS:
        raise FileNotFoundError(f"no such file: {params['path']}")
    return AgentToolResult(content=[TextContent(text=MEMORY_FS[params["path"]])], details={"path": params["path"]})


async def test_tool_using_conversation_without_file_access() -> None:
    MEMORY_FS.clear()
    faux = register_faux_provider(token_size={"min": 1, "max": 2})
    try:
        faux.set_responses(
            [
                faux_assistant_message(
                    [
                        faux_thinking("I should save a note."),
                        faux_tool_call("write", {"path": "a.txt", "content": "hi"}, id="w1"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message(
                    [
                        faux_tool_call("read", {"path": "a.txt"}, id="r1"),
                        faux_tool_call("read", {"path": "missing"}, id="r2"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message([faux_text("The note says hi.")]),
            ]
        )
        tools = [
            AgentTool(name="write", label="Write", description="Write a file", parameters=WRITE_SCHEMA, execute=_write),
            AgentTool(name="read", label="Read", description="Read a file", parameters=READ_SCHEMA, execute=_read),
        ]
        agent = Agent(initial_state={"model": faux.get_model(), "tools": tools, "system_prompt": "Be brief."})
        events: list[str] = []
        agent.subscribe(lambda event: events.append(event.type))

        await agent.prompt("Save a note, then read it back.")

        assert [m.role for m in agent.state.messages] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "toolResult",
            "assistant",
        ]
        results = [m for m in agent.state.messages if m.role == "toolResult"]
        assert [r.tool_call_id for r in results] == ["w1", "r1", "r2"]
        assert [r.is_error for r in results] == [False, False, True]
        assert results[1].content[0].text == "hi"
        assert results[2].content[0].text == "no such file: missing"
        assert agent.state.messages[-1].content[0].text == "The note says hi."
        assert MEMORY_FS == {"a.txt": "hi"}
        assert events.count("turn_start") == 3 and events.count("turn_end") == 3
        assert events[0] == "agent_start" and events[-1] == "agent_end"
        assert faux.state.call_count == 3
        assert agent.state.error_message is None and not agent.state.is_streaming
    finally:
        faux.unregister()
