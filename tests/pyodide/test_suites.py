"""The pure test suites, run again inside Pyodide under Node.js.

tests/pyodide/run.mjs installs the site's own wheels (py_agent as built into static/) and runs the
modules of each suite with tests/pyodide/runner.py, one interpreter per suite. A module with the
line `# pyodide-runner: no-fs` runs with file access disabled, and fails if anything tried.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PyodideRun = Callable[..., subprocess.CompletedProcess[str]]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)
NO_FS = re.compile(r"^#\s*pyodide-runner:\s*no-fs\s*$", re.MULTILINE)

SUITES: dict[str, list[Path]] = {
    # The core conformance suite, every module of tests/core.
    "core": sorted((TESTS / "core").glob("test_*.py")),
    # The provider vectors: SSE decoding, partial JSON, transformMessages, request bodies and the
    # stream vectors through an in-memory transport (no pytest fixtures), exactly as in CPython.
    "provider vectors": sorted((TESTS / "providers").glob("test_vectors_*.py")),
    # Subagents; this also checks that the built-in agent definitions ship in the py_agent wheel and
    # load through importlib.resources in the browser's interpreter.
    "subagents": [
        TESTS / "tools" / name
        for name in (
            "test_subagent.py",
            "test_subagent_definitions.py",
            "test_subagent_workspace.py",
            "test_subagent_tool.py",
        )
    ],
    # Compaction (pi's token estimate, cut points and summaries) through the faux provider.
    "compaction": [TESTS / "session" / name for name in ("test_compaction_tokens.py", "test_compaction.py")],
    # The workspace and its tools, which need no filesystem (each module runs with file access off).
    "workspace": [
        TESTS / "tools" / name
        for name in ("test_paths.py", "test_workspace.py", "test_file_tools.py", "test_workspace_agent.py")
    ],
}
# The modules that must run with file access disabled: the core without files, and the workspace.
MUST_RUN_WITHOUT_FILES = [TESTS / "core" / "test_no_fs.py", *SUITES["workspace"]]


@pytest.mark.parametrize("suite", SUITES)
def test_suite_passes_in_pyodide(run_in_pyodide: PyodideRun, suite: str) -> None:
    modules = SUITES[suite]
    assert modules and all(path.exists() for path in modules), modules
    result = run_in_pyodide(modules)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"the {suite} suite failed in Pyodide (exit {result.returncode}):\n{output}"
    match = SUMMARY.search(result.stdout)
    assert match is not None, f"no summary line in the runner's output:\n{output}"
    passed, failed, skipped = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    assert passed > 0 and failed == 0, output
    assert skipped == 0, f"tests were skipped in Pyodide:\n{output}"
    for path in modules:
        if NO_FS.search(path.read_text(encoding="utf-8")):
            assert f"[no-fs] {path.relative_to(ROOT).as_posix()}: file access disabled" in result.stdout, output


def test_the_modules_that_need_no_files_are_marked() -> None:
    unmarked = [path.name for path in MUST_RUN_WITHOUT_FILES if not NO_FS.search(path.read_text(encoding="utf-8"))]
    assert unmarked == [], f"{unmarked} must contain the line `# pyodide-runner: no-fs` (run.mjs then disables files)"
