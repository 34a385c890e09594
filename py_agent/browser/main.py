"""The page's entry point: ``start(on_event, db)`` wires :class:`~py_agent.app.controller.WebApp` to
IndexedDB, this tab's key store and the page, and returns the ``dispatch`` function.

Called from ``web/app.js``::

    const dispatch = await pyodide.pyimport("py_agent.browser.main").start(onEvent, db, tabStore, "{}");
    const resultJson = await dispatch("send", JSON.stringify({ text }));
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..app.controller import WebApp
from ..app.plugins import default_plugins
from .idb import IndexedDBBackend
from .workspace import page_workspace_platform

__all__ = ["SessionStorageTabKeys", "start"]

_app: WebApp | None = None


class SessionStorageTabKeys:
    """Keys kept for this tab only: the page's ``sessionStorage`` (gone when the tab closes),
    through the small object ``web/app.js`` passes in (``entries()``, ``set``, ``remove``, ``clear``)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def get_all(self) -> dict[str, str]:
        import json

        value = json.loads(str(self._store.entries()))
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def set(self, provider: str, key: str) -> None:
        self._store.set(provider, key)

    def delete(self, provider: str) -> None:
        self._store.remove(provider)

    def clear(self) -> None:
        self._store.clear()


async def start(
    on_event: Callable[[str, str], Any], db: Any, tab_store: Any, options_json: str = "{}"
) -> Callable[[str, str], Awaitable[str]]:
    """Create the app over ``db`` (web/boot/idb.js's ``Storage``) and ``tab_store`` (this tab's keys)
    and return its ``dispatch``."""
    import json

    global _app
    options = json.loads(options_json or "{}")
    tps = options.get("demoTokensPerSecond")
    app = WebApp(
        IndexedDBBackend(db),
        SessionStorageTabKeys(tab_store),
        lambda kind, payload: on_event(kind, payload),
        demo_tokens_per_second=float(tps) if isinstance(tps, int | float) else None,
        plugins=default_plugins(workspace_platform=page_workspace_platform()),
    )
    await app.start()
    _app = app
    return app.dispatch
