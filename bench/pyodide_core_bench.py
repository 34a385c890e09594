"""Runs the core workload inside Pyodide (under Node, through tests/pyodide/run.mjs).

Not a test: ``bench/core_overhead.py`` runs it and reads the ``BENCH`` line it prints.
"""

from __future__ import annotations

import json
import sys

sys.path.insert(0, "/".join(__file__.split("/")[:-1]))

from core_workload import run


async def test_core_overhead_in_pyodide() -> None:
    runs = await run()
    print("BENCH " + json.dumps({"runs": runs}))
