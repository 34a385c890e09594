"""The core conformance suite (tests/core/test_*.py), run again inside Pyodide under Node.js.

tests/pyodide/run.mjs installs the site's own wheels (py_agent as built into static/) and runs
every core test module with tests/pyodide/runner.py. A module with the line
`# pyodide-runner: no-fs` (such as tests/core/test_no_fs.py) runs with file access disabled.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PyodideRun = Callable[..., subprocess.CompletedProcess[str]]
CORE_TESTS = sorted((ROOT / "tests" / "core").glob("test_*.py"))
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def test_core_suite_passes_in_pyodide(run_in_pyodide: PyodideRun) -> None:
    assert CORE_TESTS, "no tests/core/test_*.py"
    result = run_in_pyodide(CORE_TESTS)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"core tests failed in Pyodide (exit {result.returncode}):\n{output}"
    match = SUMMARY.search(result.stdout)
    assert match is not None, f"no summary line in the runner's output:\n{output}"
    assert int(match.group(1)) > 0 and int(match.group(2)) == 0, output
    assert int(match.group(3) or 0) == 0, f"tests were skipped in Pyodide:\n{output}"
    no_fs = [p for p in CORE_TESTS if "# pyodide-runner: no-fs" in p.read_text(encoding="utf-8")]
    for path in no_fs:
        assert f"[no-fs] {path.relative_to(ROOT).as_posix()}: file access disabled" in result.stdout, output


def test_no_fs_module_is_marked() -> None:
    """tests/core/test_no_fs.py must run with file access disabled."""
    path = ROOT / "tests" / "core" / "test_no_fs.py"
    assert path.exists(), f"{path} is missing"
    assert re.search(r"^#\s*pyodide-runner:\s*no-fs\s*$", path.read_text(encoding="utf-8"), re.MULTILINE), (
        f"{path.name} must contain the line `# pyodide-runner: no-fs` so that run.mjs disables file access"
    )
