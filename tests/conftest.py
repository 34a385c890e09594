"""Shared fixtures: the built site, Node.js and the Pyodide test runner.

The core tests (tests/core/) use no fixtures; these serve the browser tests and the tests
that run Python inside Pyodide under Node.js.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN_MJS = ROOT / "tests" / "pyodide" / "run.mjs"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (build.py: standard library only)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(condition: bool, message: str) -> None:
    """Skip a test whose tool is missing on a developer machine; fail it in CI."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{message} (CI=true: such tests must not be skipped)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of static/, rebuilt first if its inputs changed (offline, from the cache).

    A snapshot, because others working in the same checkout may rebuild static/ meanwhile.
    """
    try:
        if build.site_is_stale():
            build.build_site(quiet=True)
    except build.BuildError as exc:
        pytest.fail(f"building static/ failed: {exc}")
    return build.snapshot_site(tmp_path_factory.mktemp("static"))


@pytest.fixture(scope="session")
def test_wheels() -> Path:
    """pytest's wheels for Pyodide in .cache/test-wheels/ (downloaded once, then cached)."""
    try:
        return build.prepare_test_wheels().parent
    except build.BuildError as exc:
        pytest.fail(f"preparing the test wheels failed: {exc}")


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    require(path is not None, "Node.js is missing: `python3 build.py test` installs it (apt-get install nodejs)")
    assert path is not None
    return path


PyodideRun = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def run_in_pyodide(node: str, built_site: Path, test_wheels: Path) -> PyodideRun:
    """Run tests/pyodide/run.mjs over test files; returns the finished process (output in .stdout)."""

    def run(files: Sequence[Path | str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        cmd = [
            node,
            str(RUN_MJS),
            "--static",
            str(built_site),
            "--test-wheels",
            str(test_wheels),
            *args,
            *map(str, files),
        ]
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)

    return run
