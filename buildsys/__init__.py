"""The jobs of build.py (the entry point, beside this package), one module each.

config: paths, pinned versions, shared helpers; pins: build.lock.json; downloads: pinned files
through pip and npm, cached; lock: `build.py lock`; wheel: the site's py_agent wheel; site:
static/; serve: the static servers; machine: .venv, Chromium, Node.js; commands: the CLI.
Standard library only.
"""
