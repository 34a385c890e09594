"""The chat app's controller, pure Python: what the page asks for and what it is told.

:class:`~py_agent.app.controller.WebApp` runs the page's commands over a storage backend, a key
ring and the model catalogue; :class:`~py_agent.app.chat.ChatSession` wires one session to an
``Agent`` (pi's AgentSession role). Nothing here imports ``js`` or ``pyodide``: CPython tests drive
it with :class:`~py_agent.app.storage.MemoryBackend`, and :mod:`py_agent.browser` connects it to
the page.
"""
