"""An agent with the tools of an MCP server: connect, list the tools, let the model call one.

    python examples/mcp_tools.py http://127.0.0.1:8000/mcp                      # lists the tools
    python examples/mcp_tools.py http://127.0.0.1:8000/mcp add '{"a": 2, "b": 3}'

The faux model calls the named tool with the JSON arguments, as a real model would (swap in
``get_model(...)`` and a key for one). ``MCP_TOKEN``, when set, is sent as a bearer token.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from py_agent import Agent
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.mcp import McpException, McpServer


async def main(url: str, tool: str | None, arguments: dict[str, object]) -> int:
    headers = {"Authorization": f"Bearer {os.environ['MCP_TOKEN']}"} if os.environ.get("MCP_TOKEN") else None
    try:
        server = await McpServer.connect("server", url, headers=headers)
    except McpException as error:
        print(f"Cannot use {url}: {error}", file=sys.stderr)
        return 1
    async with server:
        for agent_tool in server.tools:
            print(f"{agent_tool.name}: {agent_tool.description}")
        if tool is None:
            return 0
        faux = register_faux_provider()
        name = f"mcp__server__{tool}"
        faux.set_responses(
            [
                faux_assistant_message([faux_tool_call(name, arguments)], stop_reason="toolUse"),
                lambda context: faux_assistant_message(f"The tool said: {context.messages[-1].content[0].text}"),
            ]
        )
        agent = Agent(initial_state={"model": faux.get_model(), "tools": server.tools})
        await agent.prompt(f"Call {tool}.")
        print(agent.state.messages[-1].content[0].text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    arguments = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None, arguments)))
