"""Tests of the Pyodide test runner itself (run.mjs + runner.py), on sample modules in tmp_path."""

from __future__ import annotations

import re
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

PyodideRun = Callable[..., subprocess.CompletedProcess[str]]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.MULTILINE)


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def summary(result: subprocess.CompletedProcess[str]) -> tuple[int, int, int]:
    match = SUMMARY.search(result.stdout)
    assert match, f"no summary line:\n{result.stdout}\n{result.stderr}"
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


MIXED = """
    import asyncio
    import pytest
    from sample_helpers import double

    CASES = [(1, 2), (2, 4), (5, 10)]

    def test_sync():
        assert double(2) == 4

    async def test_async():
        await asyncio.sleep(0.01)
        assert double(3) == 6

    @pytest.mark.parametrize("x,expected", CASES)
    async def test_param(x, expected):
        await asyncio.sleep(0)
        assert double(x) == expected

    def test_raises():
        with pytest.raises(ZeroDivisionError):
            1 / 0

    @pytest.mark.skip(reason="sample skip")
    def test_skipped():
        raise AssertionError("never runs")

    class TestGroup:
        async def test_method(self):
            assert double(0) == 0

    def test_fails():
        assert double(2) == 5, "deliberate"

    async def test_fails_async():
        await asyncio.sleep(0)
        raise RuntimeError("deliberate async failure")
"""
MIXED_PASSING = 1 + 1 + 3 + 1 + 1  # sync, async, 3 params, raises, class method
MIXED_FAILING = 2
MIXED_SKIPPED = 1


def test_runner_runs_sync_async_parametrized_and_reports_failures(run_in_pyodide: PyodideRun, tmp_path: Path) -> None:
    write(tmp_path, "sample_helpers.py", "def double(x):\n    return 2 * x\n")
    module = write(tmp_path, "test_mixed.py", MIXED)
    result = run_in_pyodide([module], "-v")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert summary(result) == (MIXED_PASSING, MIXED_FAILING, MIXED_SKIPPED), out
    for case in ("test_param[1-2]", "test_param[2-4]", "test_param[5-10]", "TestGroup::test_method"):
        assert re.search(rf"{re.escape(case)} PASSED", out), f"{case} not passed:\n{out}"
    assert "deliberate async failure" in out
    assert "assert 4 == 5" in out, "pytest's assertion rewriting should explain the failed assert"
    assert "FAILED " in out and "test_mixed.py::test_fails" in out


def test_runner_passes_and_disables_file_access_on_request(run_in_pyodide: PyodideRun, tmp_path: Path) -> None:
    ok = write(
        tmp_path,
        "test_ok.py",
        """
        import json
        import py_agent
        import pydantic

        class Item(pydantic.BaseModel):
            name: str

        async def test_models_without_files():
            import decimal  # a lazy standard-library import still works with file access off
            assert json.loads(Item(name="x").model_dump_json()) == {"name": "x"}
            assert py_agent.__version__
    """,
    )
    result = run_in_pyodide([ok], "--no-fs", str(ok))
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary(result) == (1, 0, 0)
    assert "test_ok.py: file access disabled" in result.stdout


def test_no_fs_mode_refuses_and_reports_file_access(run_in_pyodide: PyodideRun, tmp_path: Path) -> None:
    target = "/tmp/py-agent-no-fs-probe.txt"
    guarded = write(
        tmp_path,
        "test_guarded.py",
        f"""
        # pyodide-runner: no-fs
        import os
        import pathlib
        import pytest

        def test_write_is_refused():
            with pytest.raises(PermissionError):
                pathlib.Path({target!r}).write_text("x")

        def test_listing_home_is_refused_even_if_caught():
            try:
                os.listdir(os.path.expanduser("~"))
            except OSError:
                pass
    """,
    )
    result = run_in_pyodide([guarded])
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert f"open for writing: {target}" in out, out
    assert "open: /home/pyodide" in out, out
    assert summary(result) == (2, 1, 0), out  # both tests pass; the module fails for the attempts


def test_runner_fails_when_no_test_ran(run_in_pyodide: PyodideRun, tmp_path: Path) -> None:
    empty = write(tmp_path, "test_empty.py", "VALUE = 1\n")
    result = run_in_pyodide([empty])
    assert result.returncode == 5, result.stdout + result.stderr
    assert summary(result) == (0, 0, 0)
