"""Cooperative cancellation: ``AbortController`` / ``AbortSignal``, as in the web platform.

Abort flips a flag and notifies listeners; it never cancels asyncio tasks. Stream functions,
tools and hooks observe the signal themselves (pi's contract).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

AbortListener = Callable[[], object]


class AbortError(Exception):
    """Raised by :meth:`AbortSignal.throw_if_aborted`."""

    def __init__(self, message: str = "This operation was aborted") -> None:
        super().__init__(message)


class AbortSignal:
    """Read side of an abort: ``aborted``, ``reason``, listeners and ``await wait()``."""

    __slots__ = ("_aborted", "_event", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[AbortListener] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_listener(self, listener: AbortListener) -> Callable[[], None]:
        """Call ``listener()`` once on abort (at once if already aborted). Returns a remover."""
        if self._aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)
        return lambda: self.remove_listener(listener)

    def remove_listener(self, listener: AbortListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def throw_if_aborted(self) -> None:
        if self._aborted:
            reason = self._reason
            raise reason if isinstance(reason, BaseException) else AbortError()

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = AbortError() if reason is None else reason
        if self._event is not None:
            self._event.set()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    @staticmethod
    def aborted_signal(reason: Any = None) -> AbortSignal:
        """A signal that is already aborted (``AbortSignal.abort()`` on the web)."""
        signal = AbortSignal()
        signal._abort(reason)
        return signal

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted})"


class AbortController:
    """Write side: ``abort(reason=None)`` aborts ``signal`` once; later calls do nothing."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal._abort(reason)
