"""Helpers shared by the app's CPython tests: a page command, and waiting for the open chat's run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from py_agent.app.controller import WebApp


async def call(app: WebApp, command: str, **args: Any) -> dict[str, Any]:
    result = json.loads(await app.dispatch(command, json.dumps(args)))
    assert "error" not in result, result
    return result


async def idle(app: WebApp) -> None:
    assert app.chat is not None
    for _ in range(200):
        await app.chat.wait_idle()
        if not app.chat.streaming:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run did not end")
