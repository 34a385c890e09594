"""Where py-agent runs: the single place that tells Pyodide from CPython (as micropip's _compat).

Pure code asks this module for environment services and never checks the platform itself.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ai.transport import HttpTransport

IN_PYODIDE = sys.platform == "emscripten"


def default_http_transport() -> HttpTransport:
    """``fetch`` in the browser, ``httpx`` in CPython."""
    if IN_PYODIDE:
        from .web.fetch import FetchTransport

        return FetchTransport()
    from .transports.httpx import HttpxTransport

    return HttpxTransport()
