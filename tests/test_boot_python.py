"""The Python that the page's start runs (py_agent/browser/boot.py) and that the build runs in Pyodide
(buildsys/in_pyodide.py), run here in CPython. Each test that needs a fresh interpreter (nothing
imported or built yet, another time zone) runs its check in a subprocess."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import pydantic
import pytest

import py_agent
from buildsys import in_pyodide
from py_agent.browser import boot

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(code: str, **env: str) -> str:
    """Runs `code` in a fresh interpreter of this environment; its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_app_imports_the_app_and_returns_the_versions_shown() -> None:
    versions = json.loads(boot.import_app())
    assert versions == {
        "python": sys.version.split()[0],
        "py_agent": py_agent.__version__,
        "pydantic": pydantic.VERSION,
    }
    assert "py_agent.browser.main" in sys.modules


def test_warm_builds_every_deferred_validator_and_registers_the_demo_model() -> None:
    out = run_fresh(
        """
        import json, sys
        from py_agent.browser import boot
        boot.import_app()
        before = len(boot.deferred_models()) + len(boot.deferred_adapters())
        from py_agent.ai.models import get_model
        from py_agent.app.demo import DEMO_MODEL_ID, DEMO_PROVIDER
        demo_before = get_model(DEMO_PROVIDER, DEMO_MODEL_ID) is not None
        boot.warm()
        after = [m.__qualname__ for m in boot.deferred_models()] + [repr(a) for a in boot.deferred_adapters()]
        demo = get_model(DEMO_PROVIDER, DEMO_MODEL_ID) is not None
        plugins = sorted(n for n in sys.modules if n.startswith("py_agent.app.workspace"))
        print(json.dumps({"before": before, "after": after, "demo": [demo_before, demo], "plugins": plugins}))
        """
    )
    found = json.loads(out)
    assert found["before"] > 0, "nothing was deferred: the check cannot tell warm() did anything"
    assert found["after"] == []
    assert found["demo"] == [False, True]
    assert found["plugins"], "the workspace plugin's modules were not imported"


def test_freeze_moves_what_lives_now_out_of_the_collectors_way() -> None:
    out = run_fresh(
        """
        import gc
        from py_agent.browser import boot
        before = gc.get_freeze_count()
        boot.freeze()
        print(before, gc.get_freeze_count())
        """
    )
    before, after = map(int, out.split())
    assert before == 0 < after


def test_after_restore_sets_this_hosts_time_zone_and_runtime() -> None:
    # As a snapshot made in UTC and restored in New York: the time module's zone was the build's.
    out = run_fresh(
        """
        import json, random, sys, time, types
        from py_agent.browser import boot
        time.timezone, time.altzone, time.daylight, time.tzname = 0, 0, 0, ("UTC", "UTC")
        Info = type("Info", (tuple,), {
            "emscripten_version": property(lambda s: s[0]), "runtime": property(lambda s: s[1]),
            "pthreads": property(lambda s: s[2]), "shared_memory": property(lambda s: s[3]),
        })
        sys._emscripten_info = Info(((4, 0, 9), "Node.js v20", False, False))
        random.seed(1)
        state = random.getstate()
        boot.after_restore("Mozilla/5.0 (a browser)")
        info = sys._emscripten_info
        print(json.dumps({
            "zone": [time.timezone, time.altzone, time.daylight, list(time.tzname)],
            "runtime": [list(info[0]), info.runtime, info.pthreads, type(info) is Info],
            "reseeded": random.getstate() != state,
        }))
        """,
        TZ="America/New_York",
    )
    found = json.loads(out)
    assert found["zone"] == [5 * 3600, 4 * 3600, 1, ["EST", "EDT"]]
    assert found["runtime"] == [[4, 0, 9], "Mozilla/5.0 (a browser)", False, True]
    assert found["reseeded"]


def test_the_time_zone_of_the_southern_hemisphere_has_standard_time_first() -> None:
    out = run_fresh(
        """
        import time
        from py_agent.browser import boot
        boot.set_time_zone()
        print(time.timezone, time.altzone, *time.tzname)
        """,
        TZ="Australia/Sydney",
    )
    assert out.split() == [str(-10 * 3600), str(-11 * 3600), "AEST", "AEDT"]


def test_without_a_host_record_the_runtime_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "_emscripten_info", raising=False)
    boot.set_runtime("Mozilla/5.0")
    assert not hasattr(sys, "_emscripten_info")
    record = types.SimpleNamespace(runtime="Mozilla/5.0")
    monkeypatch.setattr(sys, "_emscripten_info", record, raising=False)
    boot.set_runtime("Mozilla/5.0")  # the same runtime: kept as it is
    assert sys._emscripten_info is record  # type: ignore[attr-defined]


# ---- buildsys/in_pyodide.py ----


def test_the_bundle_holds_every_file_sorted_in_the_format_the_page_reads(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_bytes(b"x = 1\n")
    (site / "pkg" / "sub" / "data.bin").write_bytes(bytes(range(5)))
    (site / "a.py").write_bytes(b"")
    bundle = in_pyodide.bundle(str(site))
    assert bundle == in_pyodide.bundle(str(site))  # deterministic (no mtime)
    raw = gzip.decompress(bundle)
    head, index, body = raw.split(b"\n", 2)
    assert head == b"py-agent-site-packages 1"
    assert json.loads(index) == [["a.py", 0], ["pkg/__init__.py", 6], ["pkg/sub/data.bin", 5]]
    assert body == b"x = 1\n" + bytes(range(5))


def test_site_packages_get_checked_hash_bytecode(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("VALUE = 42\n")
    (tmp_path / "bad.py").write_text("def (\n")
    (tmp_path / "x.dist-info").mkdir()
    (tmp_path / "x.dist-info" / "skip.py").write_text("A = 1\n")
    in_pyodide.compile_site_packages(str(tmp_path))
    pyc = sorted(p.name for p in (tmp_path / "__pycache__").iterdir())
    assert pyc == [f"good.{sys.implementation.cache_tag}.pyc"]
    flags = int.from_bytes((tmp_path / "__pycache__" / pyc[0]).read_bytes()[4:8], "little")
    assert flags == 0b11  # hash-based, checked
    assert not (tmp_path / "x.dist-info" / "__pycache__").exists()


def test_the_standard_librarys_zip_gets_bytecode_for_the_modules_named(tmp_path: Path) -> None:
    stock = tmp_path / "python_stdlib.zip"
    with zipfile.ZipFile(stock, "w") as z:
        z.writestr("used.py", "def f():\n    return 1\n")
        z.writestr("unused.py", "X = 2\n")
        z.writestr("pkg/__init__.py", "")
    out = tmp_path / "out.zip"
    in_pyodide.write_stdlib_zip(["used.py", "pkg/__init__.py"], str(out), zip_path=str(stock))
    with zipfile.ZipFile(out) as z:
        assert sorted(z.namelist()) == sorted(
            ["used.py", "used.pyc", "unused.py", "pkg/__init__.py", "pkg/__init__.pyc"]
        )
        header = z.read("used.pyc")[:8]
    assert int.from_bytes(header[4:8], "little") == 0b01  # hash-based, unchecked
