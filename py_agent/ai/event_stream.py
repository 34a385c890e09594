"""Async event streams (pi-ai's ``EventStream``).

A producer ``push``es events and ``end``s the stream; a consumer iterates with ``async for`` and
awaits ``result()``. A terminal event resolves the result; events pushed after it are dropped.

A stream may instead be fed by a *source*, an iterator (sync or async) of events that runs in the
consumer's task and is pulled as the consumer iterates (or awaits ``result()``). In-process
producers such as the faux provider use it: an event then costs no event-loop round trip, which
is what JavaScript's microtask-paced producers cost, and nothing is produced ahead of the consumer.
A synchronous source never suspends, so ``poll()`` can hand its events to a consumer without an
``await`` (the agent loop's per-delta path).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

from .events import AssistantMessageEvent
from .types import AssistantMessage

E = TypeVar("E")
R = TypeVar("R")

_UNSET: Any = object()


class _Pending:
    """The type of :data:`PENDING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = _Pending()
"""What ``EventStream.poll()`` returns when no event is ready without waiting."""


class StreamEndedWithoutResult(RuntimeError):
    """The producer ended the stream without a terminal event or a result."""


class EventStream(Generic[E, R]):
    """An async iterable of events with a final result (pi's ``EventStream``): producers ``push`` events and
    ``end`` it; consumers ``async for`` over the events and ``await result()`` for the final value.
    """

    _terminal_types: frozenset[str] | None = None
    """When set, ``is_terminal(event)`` is ``event.type in _terminal_types``: tested inline per event."""

    def __init__(self, is_terminal: Callable[[E], bool], extract_result: Callable[[E], R]) -> None:
        self._is_terminal = is_terminal
        self._extract_result = extract_result
        self._queue: deque[E] = deque()
        self._waiters: list[asyncio.Future[None]] = []
        self._done = False
        self._result: Any = _UNSET
        self._error: BaseException | None = None
        self._result_waiters: list[asyncio.Future[None]] = []
        self._source: AsyncIterator[E] | Iterator[E] | None = None
        self._sync_source: Iterator[E] | None = None
        """``_source`` when it is a synchronous iterator."""
        self._pulling = False

    def set_source(self, source: AsyncIterator[E] | Iterator[E]) -> None:
        """Feed the stream from ``source`` (an async or a plain iterator), pulled on demand in the
        consumer's task.

        A running source may call this again to hand over to another source when it finishes.
        """
        self._source = source
        self._sync_source = None if hasattr(source, "__anext__") else source

    def poll(self) -> Any:
        """The next event if one is ready without waiting, else :data:`PENDING`.

        Ready: queued, or produced by a synchronous source (pulled here). ``PENDING`` says that
        iterating (``async for``) would wait or end: a consumer may mix both; each event is
        delivered once.
        """
        queue = self._queue
        if queue:
            return queue.popleft()
        source = self._sync_source
        if source is None or self._done or self._pulling:
            return PENDING
        try:
            event: Any = next(source)  # Any: `event.type` below
        except StopIteration:
            if self._source is source:
                self._source = self._sync_source = None
                self.end()
            return PENDING  # ended, or handed over to another source: the iterator goes on
        except Exception as error:
            self._source = self._sync_source = None
            self.fail(error)
            return PENDING
        # ``push(event)``, inlined, without the queue: the event is returned at once.
        terminal_types = self._terminal_types
        if event.type in terminal_types if terminal_types is not None else self._is_terminal(event):
            self._done = True
            self._source = self._sync_source = None
            self._resolve(self._extract_result(event))
        if self._waiters:
            self._wake()
        return event

    def _pull_sync(self, source: Iterator[E]) -> None:
        try:
            event = next(source)
        except StopIteration:
            if self._source is source:
                self._source = self._sync_source = None
                self.end()
        except Exception as error:
            self._source = self._sync_source = None
            self.fail(error)
        else:
            self.push(event)
            if self._done:
                self._source = self._sync_source = None

    async def _pull(self) -> None:
        """Take one event from the source (or wait while another consumer is pulling)."""
        if self._pulling:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
            return
        if self._sync_source is not None:
            self._pull_sync(self._sync_source)
            return
        source: Any = self._source  # an async iterator here
        self._pulling = True
        try:
            event = await anext(source)
        except StopAsyncIteration:
            if self._source is source:
                self._source = self._sync_source = None
                self.end()
            # else: the source handed over to another one (see ``set_source``); keep pulling.
        except Exception as error:
            self._source = self._sync_source = None
            self.fail(error)
        else:
            self.push(event)
            if self._done:
                self._source = self._sync_source = None
        finally:
            self._pulling = False
            self._wake()

    @property
    def done(self) -> bool:
        return self._done

    @property
    def has_result(self) -> bool:
        return self._result is not _UNSET or self._error is not None

    def push(self, event: E) -> None:
        if self._done:
            return
        if self._is_terminal(event):
            self._done = True
            self._resolve(self._extract_result(event))
        self._queue.append(event)
        self._wake()

    def end(self, result: R | None = None) -> None:
        """Mark the stream done; ``result`` (if given) resolves the result unless already resolved."""
        self._done = True
        if result is not None:
            self._resolve(result)
        self._wake()

    def fail(self, error: BaseException) -> None:
        """End the stream so that iteration stops and ``result()`` raises ``error``."""
        self._done = True
        if not self.has_result:
            self._error = error
            self._release_result_waiters()
        self._wake()

    def _resolve(self, result: R) -> None:
        if self.has_result:
            return
        self._result = result
        self._release_result_waiters()

    def _release_result_waiters(self) -> None:
        waiters, self._result_waiters = self._result_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _wake(self) -> None:
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[E]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[E]:
        poll = self.poll
        while True:
            event = poll()
            if event is not PENDING:
                yield event
            elif self._done:
                return
            elif self._source is not None:
                await self._pull()
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter

    async def result(self) -> R:
        """The final result; waits for a terminal event or ``end(result)``."""
        while not self.has_result and not self._done and self._source is not None:
            await self._pull()
        if not self.has_result:
            waiter = asyncio.get_running_loop().create_future()
            self._result_waiters.append(waiter)
            await waiter
        if self._error is not None:
            raise self._error
        result: R = self._result
        return result


def _is_assistant_terminal(event: AssistantMessageEvent) -> bool:
    return event.type == "done" or event.type == "error"


def _assistant_result(event: AssistantMessageEvent) -> AssistantMessage:
    if event.type == "done":
        return event.message
    if event.type == "error":
        return event.error
    raise ValueError("Unexpected event type for final result")


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """The stream a provider returns: ``done``/``error`` are terminal."""

    _terminal_types = frozenset({"done", "error"})  # as _is_assistant_terminal

    def __init__(self) -> None:
        super().__init__(_is_assistant_terminal, _assistant_result)


def create_assistant_message_event_stream() -> AssistantMessageEventStream:
    """A new, empty :class:`AssistantMessageEventStream` (pi's ``createAssistantMessageEventStream``)."""
    return AssistantMessageEventStream()
