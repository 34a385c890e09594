"""The commands of build.py (build, serve, test, bench, lock, docs, dist) and its command line."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .config import BENCH, FOLDER_NEEDS, NEEDS_ANY, QUICK_LANE, ROOT, BuildError
from .downloads import prepare_test_wheels
from .jschecks import ensure_node_modules, js_check_steps
from .lock import cmd_lock
from .machine import (
    chromium_path,
    ensure_chromium,
    ensure_engines,
    ensure_node,
    ensure_search_tools,
    ensure_static_servers,
    ensure_venv,
)
from .pydist import cmd_dist, cmd_docs
from .serve import ALL_INTERFACES, LOCAL_HOST, cmd_serve
from .site import build_site


def run_step(title: str, cmd: Sequence[str], env: dict[str, str] | None = None) -> int:
    print(f"\n=== {title}: {' '.join(cmd)}", flush=True)
    return subprocess.run(list(cmd), cwd=ROOT, env=env, check=False).returncode


def run_checks(steps: Sequence[tuple[str, Sequence[str]]], env: dict[str, str]) -> list[str]:
    """Run independent checks all at once (on a machine with idle cores their times overlap), then
    print each one's command, output and wall time in order; returns the titles of those that failed."""

    def run(cmd: Sequence[str]) -> tuple[subprocess.CompletedProcess[str], float]:
        start = time.monotonic()
        done = subprocess.run(list(cmd), cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        return done, time.monotonic() - start

    with ThreadPoolExecutor(max_workers=max(len(steps), 1)) as pool:
        results = list(pool.map(run, [cmd for _, cmd in steps]))
    failed = []
    for (title, cmd), (done, seconds) in zip(steps, results, strict=True):
        verdict = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        output = (done.stdout + done.stderr).rstrip()
        print(f"\n=== {title}: {' '.join(cmd)}\n{output}\n--- {title}: {verdict} in {seconds:.1f} s", flush=True)
        if done.returncode != 0:
            failed.append(title)
    return failed


def print_machine_state() -> None:
    """What a failed run needs beside its traceback (a crashed browser or a killed process often comes
    from the machine, not the code): cores, memory, cgroup limits and OOM kills, free space."""
    lines = [f"cores: {os.cpu_count()}"]
    for path, keys in (
        ("/proc/meminfo", ("MemTotal", "MemAvailable", "SwapTotal")),
        ("/sys/fs/cgroup/memory.max", ()),
        ("/sys/fs/cgroup/memory.peak", ()),
        ("/sys/fs/cgroup/memory.events", ("oom", "oom_kill")),
        ("/sys/fs/cgroup/pids.max", ()),
    ):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        wanted = [line for line in text.splitlines() if not keys or line.split(":")[0].split(" ")[0] in keys]
        lines.append(f"{path}: " + "; ".join(" ".join(line.split()) for line in wanted))
    for folder in ("/dev/shm", "/tmp", str(ROOT)):
        try:
            usage = os.statvfs(folder)
        except OSError:
            continue
        lines.append(f"free in {folder}: {usage.f_bavail * usage.f_frsize / 2**30:.1f} GiB")
    print("\n=== the machine after the run\n" + "\n".join(lines), flush=True)


def lint_steps(python: Path, js: bool) -> list[tuple[str, list[str]]]:
    """ruff (check, format) and mypy --strict over the package; with ``js``, the JavaScript checks too
    (buildsys/jschecks.py)."""
    steps = [
        ("ruff check", [str(python), "-m", "ruff", "check", "."]),
        ("ruff format", [str(python), "-m", "ruff", "format", "--check", "."]),
        ("mypy", [str(python), "-m", "mypy", "--strict", "py_agent"]),
    ]
    if js:
        steps.extend(js_check_steps())
    return steps


def run_pytest(title: str, runner: Sequence[str], args: Sequence[str], env: dict[str, str], failed: list[str]) -> int:
    """pytest's exit code (``runner`` runs a module: the venv's python, or coverage run); a failure, or
    a run of no test at all (exit 5), is added to ``failed``."""
    rc = run_step(title, [*runner, "-m", "pytest", *args], env)
    if rc == 5:
        print("pytest ran no tests: that counts as a failure here", flush=True)
    if rc != 0:
        failed.append(f"{title} (exit {rc})")
    return rc


def quick_lane_args() -> list[str]:
    """pytest's selection of the quick lane; the folders whose every test it leaves out (tests/browser,
    tests/engines) are not even collected."""
    return ["-m", QUICK_LANE, *(f"--ignore=tests/{folder}" for folder in FOLDER_NEEDS)]


def quick_lane_workers() -> str:
    """pytest-xdist workers for the quick lane: two per core (at most 16). Its tests mostly wait (on
    servers, subprocesses, timeouts: 59 s of CPU in 74 s on two workers on an idle two-core
    machine), so four workers there took 42 s, and six no less."""
    return str(min(16, 2 * (os.cpu_count() or 1)))


def quick_lane_pytest_args() -> list[str]:
    """pytest's arguments in `test --quick`: the quick lane on two workers per core (pytest-xdist),
    each property test with the quick budget (the full run's quick_lane_with_coverage keeps their
    whole budget)."""
    return [*quick_lane_args(), "-n", quick_lane_workers(), "--hypothesis-profile=quick"]


def quick_lane_with_coverage(python: Path, env: dict[str, str], failed: list[str]) -> int:
    """The quick lane's tests under coverage, then the share of py_agent's lines they ran."""
    data = ROOT / ".cache" / "coverage" / "quick-lane"
    data.parent.mkdir(parents=True, exist_ok=True)
    for stale in data.parent.glob(f"{data.name}*"):  # a killed run's workers' files would be combined
        stale.unlink()
    env = {**env, "COVERAGE_FILE": str(data)}
    coverage = [str(python), "-m", "coverage"]
    # pyproject's [tool.coverage.run] patch = subprocess measures xdist's workers.
    args = [*quick_lane_args(), "-n", quick_lane_workers()]
    rc = run_pytest("pytest (quick lane)", [*coverage, "run", "--source=py_agent"], args, env, failed)
    if rc == 0:
        subprocess.run([*coverage, "combine", "--quiet"], cwd=ROOT, env=env, check=False)
        report = [*coverage, "report", "--format=total"]
        total = subprocess.run(report, cwd=ROOT, env=env, capture_output=True, text=True, check=False).stdout.strip()
        print(f"\ncoverage of py_agent by the quick lane: {total}% of its lines", flush=True)
    return rc


def cmd_test(args: Sequence[str]) -> int:
    """`test [--quick] [PYTEST ARGS]`.

    The full run sets up the machine and builds the site, lints, then runs pytest with the arguments;
    without any (CI), the quick lane's tests under coverage and then the rest. --quick: lint, types
    and the tests that need no browser, Node.js, Pyodide, built site or package index; no machine
    setup, no site build (the venv and node_modules/ are set up only when missing or stale)."""
    quick = "--quick" in args
    pytest_args = [arg for arg in args if arg != "--quick"]
    python = ensure_venv()
    if not quick:
        ensure_chromium()
        ensure_engines()
        ensure_node()
        ensure_static_servers()
        ensure_search_tools()
        build_site()
        prepare_test_wheels()
    venv_bin = str(python.parent)
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "PY_AGENT_CHROMIUM": chromium_path(),
    }
    # Python keeps its bytecode here (in the __pycache__ folders git ignores): without it, every
    # pytest process compiles py_agent and rewrites every test module's asserts again, seconds each.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    js = shutil.which("node") is not None
    if js:
        ensure_node_modules()
    else:  # the quick lane on a machine without Node.js (the full run installed it above)
        print("\n=== the JavaScript checks: skipped, Node.js is not installed", flush=True)
    steps = lint_steps(python, js)
    failed = run_checks(steps, env)
    runner = [str(python)]
    if quick:
        rc = run_pytest("pytest (quick lane)", runner, [*quick_lane_pytest_args(), *pytest_args], env, failed)
    elif pytest_args:
        rc = run_pytest("pytest", runner, pytest_args, env, failed)
    else:
        rc = quick_lane_with_coverage(python, env, failed)
        # Every module on one worker (its browser and booted page are module fixtures), modules over
        # every core: 17-20 min instead of ~27. (The crashes once blamed on two browsers side by side
        # were Chromium's heap profiler, now off: docs/web-architecture.md; the lost message after a
        # reload was the save's race, fixed: py_agent/app/chat.py ``_save_soon``.)
        rest = ["-m", NEEDS_ANY, "-n", "auto", "--dist", "loadfile", "--durations=25"]
        rc = run_pytest("pytest (the rest)", runner, rest, env, failed) or rc
    if failed:
        print_machine_state()
        print(f"\nbuild.py test: FAILED: {', '.join(failed)}", flush=True)
        return rc or 1
    print(f"\nbuild.py test: {', '.join(title for title, _ in steps)} and pytest passed", flush=True)
    return 0


def bench_scripts() -> list[Path]:
    """bench/*.py that run as scripts (helpers start with "_"; others lack a __main__ block)."""
    return [
        path
        for path in sorted(BENCH.glob("*.py"))
        if not path.name.startswith("_") and "__main__" in path.read_text(encoding="utf-8")
    ]


def cmd_bench(names: Sequence[str]) -> int:
    python = ensure_venv()
    ensure_chromium()
    ensure_node()
    build_site()
    prepare_test_wheels()
    scripts = bench_scripts()
    if names:
        scripts = [s for s in scripts if s.stem in names or s.name in names]
        if not scripts:
            raise BuildError(f"no bench script named {', '.join(names)} in {BENCH}")
    env = {**os.environ, "PY_AGENT_CHROMIUM": chromium_path()}
    failed = [s.name for s in scripts if run_step(f"bench {s.name}", [str(python), str(s)], env) != 0]
    if failed:
        print(f"bench failed: {', '.join(failed)}", flush=True)
        return 1
    return 0


# --------------------------------------------------------------------------------------


def parse_serve_args(args: Sequence[str], parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    """`serve [--port N] [--host [HOST]]`: 127.0.0.1 by default; `--host` alone binds every
    interface (0.0.0.0: to try the page from a phone on the same network), `--host HOST` that one."""
    parser = parser or argparse.ArgumentParser(prog="build.py serve")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", nargs="?", const=ALL_INTERFACES, default=LOCAL_HOST, metavar="HOST")
    return parser.parse_args(list(args))


def main(argv: Sequence[str], doc: str | None = None) -> int:
    argv = list(argv)
    command = argv[0] if argv and not argv[0].startswith("-") else "build"
    rest = argv[1:] if argv and not argv[0].startswith("-") else argv
    try:
        if command == "test":
            return cmd_test(rest)  # every argument goes to pytest unchanged
        parser = argparse.ArgumentParser(
            prog="build.py", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        if command == "build":
            parser.add_argument("--quiet", action="store_true")
            build_site(quiet=parser.parse_args(rest).quiet)
            return 0
        if command == "serve":
            options = parse_serve_args(rest, parser)
            return cmd_serve(options.port, options.host)
        if command == "bench":
            parser.add_argument("names", nargs="*", help="bench script names (default: all)")
            return cmd_bench(parser.parse_args(rest).names)
        if command == "docs":
            parser.parse_args(rest)
            return cmd_docs()
        if command == "dist":
            parser.parse_args(rest)
            return cmd_dist()
        if command == "lock":
            parser.parse_args(rest)
            return cmd_lock()
        parser.print_help()
        print(f"\nunknown command: {command}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(
            f"build.py: error: command failed (exit {exc.returncode}): {' '.join(map(str, exc.cmd))}", file=sys.stderr
        )
        return 1
