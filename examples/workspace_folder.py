"""pi's coding tools (read, write, edit, ls, grep, find) on a real folder, in CPython.

    python examples/workspace_folder.py some/folder

The tools work on a :class:`~py_agent.tools.Workspace` (paths relative to its root, no ``..``). Its
files are kept by a store; the library keeps them in memory (the page keeps them in IndexedDB). This
example's ``FolderStore`` keeps them in a folder on disk, so the agent's edits land in your files. The
scripted faux model lists the folder, reads ``notes.txt`` and appends a line to it: swap in a real
model (see chat_cli.py) to let one decide.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from py_agent import Agent
from py_agent.ai.faux import faux_assistant_message, faux_tool_call, register_faux_provider
from py_agent.tools import Workspace, WorkspaceFile, make_workspace_tools


class FolderStore:
    """A WorkspaceStore over a folder: each workspace file is a file under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    async def load_all(self) -> list[WorkspaceFile]:
        files = []
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(self.root).parts):
                data = path.read_bytes()
                try:
                    content: str | bytes = data.decode("utf-8")
                except UnicodeDecodeError:
                    content = data
                mtime = int(path.stat().st_mtime * 1000)
                files.append(WorkspaceFile(path.relative_to(self.root).as_posix(), content, mtime))
        return files

    async def put(self, file: WorkspaceFile) -> None:
        target = self.root / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.data.encode("utf-8") if isinstance(file.data, str) else file.data)

    async def delete(self, path: str) -> None:
        (self.root / path).unlink(missing_ok=True)

    async def clear(self) -> None:
        raise NotImplementedError("this example never deletes your folder")


async def main(folder: str) -> None:
    workspace = await Workspace.open(FolderStore(Path(folder)))
    faux = register_faux_provider()
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("ls", {})], stop_reason="toolUse"),
            faux_assistant_message([faux_tool_call("read", {"path": "notes.txt"})], stop_reason="toolUse"),
            faux_assistant_message(
                [faux_tool_call("edit", {"path": "notes.txt", "edits": [{"oldText": "TODO", "newText": "DONE"}]})],
                stop_reason="toolUse",
            ),
            faux_assistant_message("I marked the TODO in notes.txt as DONE."),
        ]
    )
    agent = Agent(initial_state={"model": faux.get_model(), "tools": make_workspace_tools(workspace)})
    agent.subscribe(
        lambda event, signal: (
            print(f"{event.tool_name}: {event.result.content[0].text.splitlines()[0]}")
            if event.type == "tool_execution_end"
            else None
        )
    )
    await agent.prompt("Mark the TODO in notes.txt as done.")
    print(agent.state.messages[-1].content[0].text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "."))
