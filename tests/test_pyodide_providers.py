"""The provider vector tests (tests/providers/test_vectors_*.py), run again inside Pyodide.

They use no pytest fixtures: SSE decoding, partial JSON, transformMessages, request bodies and the
stream vectors through an in-memory transport, exactly as in CPython.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PyodideRun = Callable[..., subprocess.CompletedProcess[str]]
VECTOR_TESTS = sorted((ROOT / "tests" / "providers").glob("test_vectors_*.py"))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def test_provider_vectors_pass_in_pyodide(run_in_pyodide: PyodideRun) -> None:
    assert VECTOR_TESTS, "no tests/providers/test_vectors_*.py"
    result = run_in_pyodide(VECTOR_TESTS)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"provider vectors failed in Pyodide (exit {result.returncode}):\n{output}"
    match = SUMMARY.search(result.stdout)
    assert match is not None, f"no summary line in the runner's output:\n{output}"
    assert int(match.group(1)) > 0 and int(match.group(2)) == 0, output
