"""HTTP transports, and the one place that tells Pyodide from CPython (as micropip's ``_compat``).

The provider layer sends every request through an :class:`~py_agent.ai.transport.HttpTransport`
(the interface lives in :mod:`py_agent.ai.transport`). The implementations live here, side by side:

- :mod:`.fetch`: the page's ``fetch`` (Pyodide), streamed with a reader and a JS ``AbortController``;
- :mod:`.httpx`: ``httpx`` (CPython, the ``http`` extra);
- :mod:`.proxy`: any transport sent through a CORS proxy of the user's (``<proxy>/?url=...``).

:func:`default_transport` is the single platform check of the package: nothing else in
``py_agent`` asks where it runs. The package root (``py_agent/__init__.py``) hands it to
:func:`py_agent.ai.transport.set_default_transport_factory`, so the ``ai`` layer never imports
this package. ``fetch`` is the only module here that imports ``js``/``pyodide``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ai.transport import HttpTransport

__all__ = ["IN_PYODIDE", "default_transport"]

IN_PYODIDE = sys.platform == "emscripten"
"""True inside Pyodide (the browser); the only platform check in py_agent."""


def default_transport() -> HttpTransport:
    """``fetch`` in the browser, ``httpx`` in CPython."""
    if IN_PYODIDE:
        from .fetch import FetchTransport

        return FetchTransport()
    from .httpx import HttpxTransport

    return HttpxTransport()
