"""The browser layer: the page's session wiring (pi's AgentSession role), storage, keys and fetch.

Only this package touches ``js``/``pyodide`` (in ``fetch``, ``idb`` and ``main``); the rest is pure
and runs in CPython tests.
"""
