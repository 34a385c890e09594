"""Shared fixtures: the built site, Node.js and the Pyodide test runner.

The core tests (tests/core/) use no fixtures; these serve the browser tests and the tests
that run Python inside Pyodide under Node.js.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
RUN_MJS = ROOT / "tests" / "pyodide" / "run.mjs"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (build.py: standard library only)
from buildsys.config import FIXTURE_NEEDS, FOLDER_NEEDS, HYPOTHESIS_EXAMPLES  # noqa: E402

# The property tests take their budget from the profile: "full" unless pytest is given
# --hypothesis-profile (the quick lane passes "quick").
for _profile, _examples in HYPOTHESIS_EXAMPLES.items():
    settings.register_profile(_profile, max_examples=_examples)
settings.load_profile("full")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The markers of what each test needs (buildsys/config.py TEST_NEEDS), by its folder and by its
    fixtures (asked for directly or through another fixture)."""
    tests = ROOT / "tests"
    for item in items:
        needs: set[str] = set()
        relative = item.path.relative_to(tests) if item.path.is_relative_to(tests) else None
        if relative is not None and len(relative.parts) > 1:
            needs.update(FOLDER_NEEDS.get(relative.parts[0], ()))
        for fixture in getattr(item, "fixturenames", ()):
            needs.update(FIXTURE_NEEDS.get(fixture, ()))
        for name in sorted(needs):
            item.add_marker(name)


def require(condition: bool, message: str) -> None:
    """Fail a test whose tool is missing: the test command (`python3 build.py test`) installs every one."""
    if not condition:
        pytest.fail(message)


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


# pi's reference packages (tests/reference), shared by the parity and session-format checks.
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
PINNED = {
    "@earendil-works/pi-agent-core": "0.79.10",
    "@earendil-works/pi-ai": "0.79.10",
    "@earendil-works/pi-coding-agent": "0.79.10",
}
# pi 1.x's session code (tests/reference-1x): the checks of pi 1.6.0's session files.
REFERENCE_1X_DIR = Path(__file__).resolve().parent / "reference-1x"
PINNED_1X = {"@earendil-works/pi-coding-agent": "1.6.0"}


def _installed_version(package: str, folder: Path = REFERENCE_DIR) -> str | None:
    manifest = folder / "node_modules" / package / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text(encoding="utf-8")).get("version")


def _npm_ci(folder: Path, pinned: dict[str, str]) -> Path:
    """``folder/node_modules`` with the ``pinned`` packages (``npm ci`` if missing); fails, never skips."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "node is not installed: the reference parity tests run pi's agent core in Node. "
            "Install Node.js (>= 20) and npm.",
            pytrace=False,
        )
    # One installer at a time: pytest-xdist's workers may all ask at once.
    with (folder / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _npm_ci_locked(folder, pinned)


def _npm_ci_locked(folder: Path, pinned: dict[str, str]) -> Path:
    if all(_installed_version(package, folder) == version for package, version in pinned.items()):
        return folder
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "npm is not installed: it is needed once to install the reference packages into "
            f"{folder / 'node_modules'} (npm ci).",
            pytrace=False,
        )
    command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    completed = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600, check=False)
    if completed.returncode != 0:
        pytest.fail(
            f"`npm ci` in {folder} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}",
            pytrace=False,
        )
    for package, version in pinned.items():
        if _installed_version(package, folder) != version:
            pytest.fail(f"{package} {version} is not installed after npm ci", pytrace=False)
    return folder


@pytest.fixture(scope="session")
def reference_install() -> Path:
    """``tests/reference/node_modules`` with the pinned reference packages (``npm ci`` if missing)."""
    return _npm_ci(REFERENCE_DIR, PINNED)


@pytest.fixture(scope="session")
def reference_1x_install() -> Path:
    """``tests/reference-1x/node_modules`` with pi-coding-agent 1.6.0 (``npm ci`` if missing)."""
    return _npm_ci(REFERENCE_1X_DIR, PINNED_1X)
