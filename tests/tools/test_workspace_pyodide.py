"""The pure workspace tests again, inside Pyodide under Node.js (the site's own py_agent wheel),
with file access disabled (`# pyodide-runner: no-fs` in each module): the workspace and its tools
need no filesystem."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = [
    HERE / "test_paths.py",
    HERE / "test_workspace.py",
    HERE / "test_file_tools.py",
    HERE / "test_workspace_agent.py",
]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def test_workspace_suite_passes_in_pyodide(run_in_pyodide: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    result = run_in_pyodide(MODULES)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"workspace tests failed in Pyodide (exit {result.returncode}):\n{output}"
    match = SUMMARY.search(result.stdout)
    assert match is not None, output
    assert int(match.group(1)) > 0 and int(match.group(2)) == 0, output
    for path in MODULES:
        assert f"[no-fs] tests/tools/{path.name}: file access disabled" in result.stdout, output
