"""Shared by the bench scripts: machine description, statistics and BENCHMARKS.md sections.

Each script owns one section of BENCHMARKS.md, delimited by HTML comments, and rewrites only it.
"""

from __future__ import annotations

import datetime as _dt
import os
import pathlib
import platform
import statistics
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
HEADER = (
    "# Benchmarks\n\n"
    "Written by `python3 build.py bench` (each section by its script in `bench/`). Times are medians with "
    "their spread (min–max) over the runs shown, measured on the machine named in each section.\n"
)


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = _version(["node", "--version"])
    return (
        f"{platform.system()} {platform.release()} {platform.machine()}, {cpu}, {os.cpu_count()} cores; "
        f"CPython {platform.python_version()}; Node {node}; {_dt.date.today().isoformat()}"
    )


def _version(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip() or "n/a"
    except (OSError, subprocess.SubprocessError):
        return "n/a"


def summary(values: list[float], unit: str, digits: int = 2) -> str:
    """``median (min–max) unit`` over ``values``."""
    return f"{statistics.median(values):.{digits}f} {unit} ({min(values):.{digits}f}–{max(values):.{digits}f}, n={len(values)})"


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section ``name`` of BENCHMARKS.md."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else HEADER
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS.write_text(text, encoding="utf-8")
