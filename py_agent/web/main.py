"""The page's entry point: ``start(on_event, db)`` wires :class:`~py_agent.web.app.WebApp` to
IndexedDB, the tab's ``sessionStorage`` and the page, and returns the ``dispatch`` function.

Called from ``web/app.js``::

    const dispatch = await pyodide.pyimport("py_agent.web.main").start(onEvent, db);
    const resultJson = await dispatch("send", JSON.stringify({ text }));
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .app import WebApp
from .idb import IndexedDBBackend

__all__ = ["SessionStorageTabKeys", "start"]

_TAB_PREFIX = "py-agent.key."
_app: WebApp | None = None


class SessionStorageTabKeys:
    """Keys kept for this tab only: the page's ``sessionStorage`` (gone when the tab closes)."""

    def __init__(self) -> None:
        import js  # type: ignore[import-not-found]

        self._storage = js.sessionStorage

    def _names(self) -> list[str]:
        return [str(self._storage.key(i)) for i in range(int(self._storage.length))]

    def get_all(self) -> dict[str, str]:
        keys: dict[str, str] = {}
        for name in self._names():
            if name.startswith(_TAB_PREFIX):
                value = self._storage.getItem(name)
                if value is not None:
                    keys[name[len(_TAB_PREFIX) :]] = str(value)
        return keys

    def set(self, provider: str, key: str) -> None:
        self._storage.setItem(_TAB_PREFIX + provider, key)

    def delete(self, provider: str) -> None:
        self._storage.removeItem(_TAB_PREFIX + provider)

    def clear(self) -> None:
        for name in self._names():
            if name.startswith(_TAB_PREFIX):
                self._storage.removeItem(name)


async def start(
    on_event: Callable[[str, str], Any], db: Any, options_json: str = "{}"
) -> Callable[[str, str], Awaitable[str]]:
    """Create the app over ``db`` (web/idb.js's ``Storage``) and return its ``dispatch``."""
    import json

    global _app
    options = json.loads(options_json or "{}")
    tps = options.get("demoTokensPerSecond")
    app = WebApp(
        IndexedDBBackend(db),
        SessionStorageTabKeys(),
        lambda kind, payload: on_event(kind, payload),
        demo_tokens_per_second=float(tps) if isinstance(tps, int | float) else None,
    )
    await app.start()
    _app = app
    return app.dispatch
