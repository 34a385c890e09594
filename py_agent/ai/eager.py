"""Coroutines started now, up to their first real suspension, then finished as tasks.

The agent loop starts tools this way (pi runs each tool of a batch synchronously up to its first
``await``); a request with a timeout is sent this way (providers/retry.py), and the chat app starts
a save this way so that its write is handed to storage in the same turn (py_agent/app/chat.py
``_save_soon``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

__all__ = ["start_eagerly"]

_T = TypeVar("_T")


def start_eagerly(coroutine: Coroutine[Any, Any, _T]) -> asyncio.Future[_T]:
    """Run ``coroutine`` now, up to its first real suspension, then finish it as a task.

    pi dispatches a progress event synchronously inside ``onUpdate``, and starts each tool of a
    batch synchronously up to its first ``await``. Python 3.12+ has eager tasks for this; on 3.11
    the first step is driven by hand.
    """
    loop = asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        return asyncio.Task(coroutine, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    try:
        awaited = coroutine.send(None)
    except StopIteration as stop:
        done: asyncio.Future[_T] = loop.create_future()
        done.set_result(stop.value)
        return done
    except Exception as error:
        failed: asyncio.Future[_T] = loop.create_future()
        failed.set_exception(error)
        return failed
    return loop.create_task(_finish(coroutine, awaited))


def _settled(future: asyncio.Future[Any]) -> asyncio.Future[None]:
    """A future that completes (with no result) when ``future`` does."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def settle(_: asyncio.Future[Any]) -> None:
        if not done.done():
            done.set_result(None)

    future.add_done_callback(settle)
    return done


async def _finish(coroutine: Coroutine[Any, Any, _T], awaited: Any) -> _T:
    """Drive a coroutine that was started by hand, the way a Task would."""
    while True:
        if awaited is None:
            await asyncio.sleep(0)  # a bare yield
        else:
            awaited._asyncio_future_blocking = False
            try:
                await _settled(awaited)
            except asyncio.CancelledError as cancel:
                awaited.cancel()
                awaited = coroutine.throw(cancel)
                continue
        try:
            awaited = coroutine.send(None)
        except StopIteration as stop:
            return cast(_T, stop.value)
