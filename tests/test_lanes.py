"""The test command's lanes and checks (buildsys/commands.py, buildsys/jschecks.py).

- The markers of what a test needs are the ones pyproject.toml registers, and the quick lane leaves
  out every one of them; every fixture of tests/conftest.py that looks for Node.js or installs npm
  packages marks the tests that use it.
- Every script of the page is type-checked (`// @ts-check`) but a list that only shrinks.
- The property tests have their whole budget everywhere but in `build.py test --quick`.
- The checks (ruff, mypy, biome, tsc) run at the same time, each with its own verdict.
- `python3 build.py test` (what .ci/run runs) runs the JavaScript checks, and each fails on what it
  checks: a lint error, a formatting difference and a type error, each planted in a copy of the
  sources, fail their check and only theirs.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from buildsys.commands import lint_steps, quick_lane_args, quick_lane_pytest_args, run_checks
from buildsys.config import FIXTURE_NEEDS, FOLDER_NEEDS, HYPOTHESIS_EXAMPLES, QUICK_LANE, ROOT, TEST_NEEDS
from buildsys.jschecks import (
    INSTALLED_STAMP,
    JS_SOURCES,
    ensure_node_modules,
    js_check_steps,
    lock_digest,
    node_modules_stale,
)

BIOME = "biome (lint, format)"
TSC = "tsc (types)"
# Used when the repository has no jsconfig.json yet: type-checks the boot's files that ask for it.
MINIMAL_JSCONFIG = {
    "compilerOptions": {
        "allowJs": True,
        "checkJs": False,
        "noEmit": True,
        "target": "es2022",
        "module": "es2022",
        "moduleResolution": "bundler",
        "lib": ["es2023", "dom", "dom.iterable"],
        "skipLibCheck": True,
        "types": [],
    },
    "include": ["web/boot/**/*.js"],
}


def test_the_markers_are_registered_and_the_quick_lane_leaves_each_out() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    registered = {line.split(":")[0] for line in pyproject["tool"]["pytest"]["ini_options"]["markers"]}
    # Besides what a test needs, two markers say what a browser test is: a soak, or one that crashes a page.
    assert registered - set(TEST_NEEDS) == {"soak", "crashes"} and set(TEST_NEEDS) <= registered
    assert {need for needs in [*FOLDER_NEEDS.values(), *FIXTURE_NEEDS.values()] for need in needs} <= registered
    assert f"not ({' or '.join(TEST_NEEDS)})" == QUICK_LANE


def _fixtures_that_start_node(conftest: str) -> dict[str, list[str]]:
    """The fixtures of a conftest whose body looks for Node.js or installs npm packages, with the
    other fixtures they ask for."""
    found = {}
    for node in ast.parse(conftest).body:
        if not isinstance(node, ast.FunctionDef) or not any("fixture" in ast.unparse(d) for d in node.decorator_list):
            continue
        calls = {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}
        texts = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        if "_npm_ci" in calls or ("shutil.which" in calls and "node" in texts):
            found[node.name] = [arg.arg for arg in node.args.args]
    return found


def test_every_fixture_that_starts_node_marks_its_tests() -> None:
    # A fixture that installs pi's packages or looks for Node.js, unmarked, pulls Node (and npm ci)
    # into the quick lane.
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    fixtures = _fixtures_that_start_node(conftest)
    assert {"node", "reference_install", "reference_1x_install"} <= set(fixtures)
    for name, asks_for in fixtures.items():
        assert "node" in FIXTURE_NEEDS.get(name, ()) or any("node" in FIXTURE_NEEDS.get(a, ()) for a in asks_for), name


def test_only_the_quick_lane_cuts_the_property_tests_budget() -> None:
    assert settings.get_profile("full").max_examples == HYPOTHESIS_EXAMPLES["full"] >= 300
    assert settings.get_profile("quick").max_examples == HYPOTHESIS_EXAMPLES["quick"]
    assert "--hypothesis-profile=quick" in quick_lane_pytest_args()
    assert not any("hypothesis" in arg for arg in quick_lane_args())  # the full run's selection
    tests = [path for path in (ROOT / "tests").rglob("test_*.py") if path != Path(__file__)]
    property_tests = [path for path in tests if "@given(" in path.read_text(encoding="utf-8")]
    assert len(property_tests) >= 3
    for path in property_tests:  # each takes the profile's budget
        assert "max_examples" not in path.read_text(encoding="utf-8"), path


def test_node_modules_is_stale_until_installed_from_this_lock(tmp_path: Path) -> None:
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3}', encoding="utf-8")
    assert node_modules_stale(tmp_path)  # never installed
    (tmp_path / "node_modules").mkdir()
    stamp = tmp_path / "node_modules" / INSTALLED_STAMP
    stamp.write_text("0" * 64 + "\n", encoding="utf-8")
    assert node_modules_stale(tmp_path)  # installed from another lock
    stamp.write_text(lock_digest(tmp_path) + "\n", encoding="utf-8")
    assert not node_modules_stale(tmp_path)
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {}}', encoding="utf-8")
    assert node_modules_stale(tmp_path)


def test_build_py_test_runs_the_javascript_checks() -> None:
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("exec python3 build.py test")
    titles = [title for title, _ in lint_steps(Path("python"), js=True)]
    assert titles[:3] == ["ruff check", "ruff format", "mypy"]
    assert BIOME in titles
    assert (TSC in titles) == (ROOT / "jsconfig.json").exists()


def test_the_checks_run_at_once_and_each_reports_its_own_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each of the first two waits for the other's file: they pass only when they run at the same time.
    def meet(mine: str, theirs: str) -> list[str]:
        wait = (
            f"import pathlib, sys, time; pathlib.Path({str(tmp_path / mine)!r}).touch(); "
            f"end = time.monotonic() + 60; other = pathlib.Path({str(tmp_path / theirs)!r})\n"
            "while not other.exists() and time.monotonic() < end: time.sleep(0.01)\n"
            f"print('{mine} met', other.exists()); sys.exit(0 if other.exists() else 3)"
        )
        return [sys.executable, "-c", wait]

    steps = [
        ("first", meet("a", "b")),
        ("second", meet("b", "a")),
        ("broken", [sys.executable, "-c", "import sys; print('planted failure'); sys.exit(2)"]),
    ]
    assert run_checks(steps, dict(os.environ)) == ["broken"]
    out = capsys.readouterr().out
    assert out.index("=== first") < out.index("a met True") < out.index("--- first: ok")
    assert out.index("--- first: ok") < out.index("=== second") < out.index("b met True")
    assert out.index("planted failure") < out.index("--- broken: FAILED (exit 2)")


@pytest.fixture(scope="module")
def sources_copy(node: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the JavaScript checks read, copied: web/, scripts/, their configuration and a link to
    the repository's node_modules/ (installed first when missing or stale)."""
    ensure_node_modules()
    copy = tmp_path_factory.mktemp("js-sources")
    for folder in JS_SOURCES:
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("vendor", "__pycache__"))
    for name in ("biome.jsonc", "package.json", ".gitignore", "jsconfig.json"):
        if (ROOT / name).exists():
            shutil.copyfile(ROOT / name, copy / name)
    if not (copy / "jsconfig.json").exists():
        (copy / "jsconfig.json").write_text(json.dumps(MINIMAL_JSCONFIG), encoding="utf-8")
    (copy / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return copy


def failed_checks(root: Path) -> dict[str, str]:
    """The checks that fail on ``root``, with their output."""
    failed = {}
    for title, cmd in js_check_steps(root):
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            failed[title] = done.stdout + done.stderr
    return failed


@pytest.fixture
def planted(sources_copy: Path) -> Iterator[dict[str, str]]:
    """Files to plant in the copy (relative path: text), taken out again after the test."""
    files: dict[str, str] = {}
    yield files
    for name in files:
        (sources_copy / name).unlink(missing_ok=True)


def plant(root: Path, files: dict[str, str], name: str, text: str) -> None:
    files[name] = text
    (root / name).write_text(text, encoding="utf-8")


def test_the_sources_pass_every_check(sources_copy: Path) -> None:
    assert [title for title, _ in js_check_steps(sources_copy)] == [BIOME, TSC]
    assert failed_checks(sources_copy) == {}


def test_a_lint_error_fails_the_linter(sources_copy: Path, planted: dict[str, str]) -> None:
    plant(sources_copy, planted, "web/planted.js", "export function stop() {\n  debugger;\n}\n")
    failed = failed_checks(sources_copy)
    assert list(failed) == [BIOME]
    assert "lint/suspicious/noDebugger" in failed[BIOME]


def test_a_formatting_difference_fails_the_formatter(sources_copy: Path, planted: dict[str, str]) -> None:
    plant(sources_copy, planted, "scripts/planted.mjs", "export const limits = {files:3, bytes : 10};\n")
    failed = failed_checks(sources_copy)
    assert list(failed) == [BIOME]
    assert "format" in failed[BIOME] and "lint/" not in failed[BIOME]


def test_a_type_error_fails_the_type_checker(sources_copy: Path, planted: dict[str, str]) -> None:
    plant(
        sources_copy,
        planted,
        "web/boot/planted.js",
        '// @ts-check\n\n/** @type {number} */\nexport const count = "three";\n',
    )
    failed = failed_checks(sources_copy)
    assert list(failed) == [TSC]
    assert "TS2322" in failed[TSC]


# The page's scripts that do not ask for type checks: none any more. The set stays empty (a new
# script starts with `// @ts-check`).
NOT_YET_TYPE_CHECKED: set[str] = set()


def test_the_pages_scripts_are_type_checked_but_a_shrinking_list() -> None:
    jsconfig = json.loads((ROOT / "jsconfig.json").read_text(encoding="utf-8"))
    assert {"web/**/*.js", "web/**/*.d.ts"} <= set(jsconfig["include"])
    web = ROOT / "web"
    scripts = {path.relative_to(web).as_posix(): path for path in web.rglob("*.js")}
    unchecked = {
        name for name, path in scripts.items() if not path.read_text(encoding="utf-8").startswith("// @ts-check")
    }
    assert unchecked == NOT_YET_TYPE_CHECKED & set(scripts), "a script lost its // @ts-check, or a new one lacks it"
    # Every worker's messages are typed, and so is the page's side of each.
    for name in (
        "sandbox/grep-worker.js",
        "sandbox/js-worker.js",
        "sandbox/py-worker.js",
        "attachments/image-worker.js",
        "attachments/extract-worker.js",
    ):
        assert name not in unchecked and 'import("../messages")' in scripts[name].read_text(encoding="utf-8"), name
    assert 'import("../messages")' in scripts["sandbox/grep.js"].read_text(encoding="utf-8")


def test_test_modules_have_names_unique_across_the_suite() -> None:
    # pytest imports test modules by their base name (no packages under tests/): two files of one name
    # in different folders stop the whole run at collection ("import file mismatch").
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "node_modules" not in path.parts:
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
