"""The browser adapter: the page's side of the app, the only Python that talks to the page.

It wires the pure controller (:mod:`py_agent.app`) to IndexedDB (:mod:`.idb`), this tab's keys and
the page's events (:mod:`.main`, the entry ``web/app.js`` imports), and gives the app's plugins what
only a page has: the code tools' sandboxes (:mod:`.sandbox`), ``grep`` in a worker (:mod:`.grep`)
and workspace files in IndexedDB (:mod:`.workspace`). Besides the in-browser transport
(:mod:`py_agent.transports.fetch`), these are the only modules that import ``js`` or ``pyodide``.
"""
