"""The pure subagent tests again, inside Pyodide under Node.js (the site's own wheels).

Besides the behaviour, this checks that the built-in agent definitions ship in the py_agent
wheel and load through importlib.resources in the browser's interpreter.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = [
    HERE / "test_subagent.py",
    HERE / "test_subagent_definitions.py",
    HERE / "test_subagent_workspace.py",
    HERE / "test_subagent_plugin.py",
]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def test_subagent_suite_passes_in_pyodide(run_in_pyodide: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    result = run_in_pyodide(MODULES)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"subagent tests failed in Pyodide (exit {result.returncode}):\n{output}"
    match = SUMMARY.search(result.stdout)
    assert match is not None, output
    assert int(match.group(1)) > 0 and int(match.group(2)) == 0, output
