"""Asking the user before the agent deletes or replaces their files in a real folder.

While a session's workspace is a folder on the user's disk (docs/folders.md), the ``write`` tool
and the ``python``/``javascript`` tools' copy-back ask the user first (:class:`FolderConsent`'s
``asker``, a dialog in the page) before they delete a file, or replace one the agent did not
create or write itself in this session: the user's own files. ``edit`` does not ask: it is a
focused change of a file the agent read, shown as a diff, with undo. Which files are asked about
is decided in :meth:`py_agent.tools.workspace.Workspace.confirm_changes`. Pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ASKING_SOURCES", "Asker", "ConsentAnswer", "ConsentRequest", "FolderConsent"]

ASKING_SOURCES = frozenset({"write", "javascript", "python"})
"""The tools whose deletions and overwrites of the user's files ask first (not ``edit``)."""

ConsentAnswer = Literal["allow", "allow_folder", "deny"]
"""``allow_folder``: allowed, and no more questions for this folder in this session."""


def _names(paths: tuple[str, ...]) -> str:
    return paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " and " + paths[-1]


@dataclass(frozen=True)
class ConsentRequest:
    """What a tool call would do to the user's files in ``folder``."""

    folder: str
    tool: str
    overwrite: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return self.overwrite + self.delete

    def _actions(self) -> str:
        actions = [f"overwrite {_names(self.overwrite)}"] if self.overwrite else []
        actions += [f"delete {_names(self.delete)}"] if self.delete else []
        return " and ".join(actions)

    @property
    def title(self) -> str:
        return "Allow this change to your files?"

    @property
    def message(self) -> str:
        return (
            f"The agent wants to {self._actions()} in {self.folder} (its {self.tool} tool). "
            "You made or changed these files, not the agent; this cannot be undone from the folder."
        )

    def declined(self) -> str:
        """The tool's error: the user said no, nothing was changed."""
        return (
            f"The user declined: they did not allow the {self.tool} tool to {self._actions()} in the folder "
            f"{self.folder}, so nothing was changed. Do not try again unless the user asks you to; "
            "write to a new file instead, or ask the user."
        )


Asker = Callable[[ConsentRequest], Awaitable[ConsentAnswer]]


@dataclass
class FolderConsent:
    """One workspace's answers: the files the agent wrote itself (path -> the modification time
    its write left: a later change outside makes the file the user's again), and whether the
    user allowed everything for this folder. Without an ``asker`` every question is declined."""

    asker: Asker | None = None
    _own: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _trusted: bool = field(default=False, init=False, repr=False)
    _lock: asyncio.Lock | None = field(default=None, init=False, repr=False)

    def reset(self) -> None:
        """A folder was opened or closed: its answers start afresh."""
        self._own.clear()
        self._trusted = False

    def asks(self, path: str, mtime: int) -> bool:
        """Whether changing the existing file ``path`` (at ``mtime``) needs the user's word."""
        return not self._trusted and self._own.get(path) != mtime

    def owns(self, path: str, mtime: int) -> bool:
        return self._own.get(path) == mtime

    def mine(self, path: str, mtime: int) -> None:
        """The agent wrote ``path`` (or the user allowed it to): changing it asks no more."""
        self._own[path] = mtime

    def forget(self, path: str) -> None:
        self._own.pop(path, None)

    async def ask(self, request: ConsentRequest) -> bool:
        """The user's answer; one question at a time (a batch of tool calls does not stack dialogs)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._trusted:  # allowed for the folder while this call waited
                return True
            answer = await self.asker(request) if self.asker is not None else "deny"
            if answer == "allow_folder":
                self._trusted = True
            return answer in ("allow", "allow_folder")
