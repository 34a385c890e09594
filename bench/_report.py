"""Shared by the bench scripts: machine description, statistics and BENCHMARKS.md sections.

Each script owns one section of BENCHMARKS.md, delimited by HTML comments, and rewrites only it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
from typing import Any

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


# ---- one line per target, against the figure recorded last time ----
#
# Each section ends with a comment holding its targets' figures (``<!-- figures {...} -->``): the
# next run reads it before it rewrites the section, and says per target whether it is met and
# whether a target met last time still is (a regression otherwise).

FIGURES = re.compile(r"<!-- figures (\{.*?\}) -->")


def recorded(name: str) -> dict[str, dict[str, Any]]:
    """The figures the section ``name`` of BENCHMARKS.md recorded last time (``{}`` if none)."""
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else ""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    if start not in text or end not in text:
        return {}
    found = FIGURES.search(text.split(start, 1)[1].split(end, 1)[0])
    return json.loads(found.group(1)) if found else {}


class Targets:
    """The targets of one section: ``check`` each, then ``lines()`` and ``comment()``."""

    def __init__(self, name: str, fallback: dict[str, dict[str, Any]] | None = None) -> None:
        # fallback: the last figures of a section written before it had the comment.
        self.previous = recorded(name) or (fallback or {})
        self.figures: dict[str, dict[str, Any]] = {}
        self.verdicts: list[str] = []

    def check(self, key: str, label: str, value: float, met: bool, shown: str) -> str:
        self.figures[key] = {"value": round(value, 3), "met": met, "shown": shown}
        line = f"{label}: {shown} — {'met' if met else 'not met'}"
        last = self.previous.get(key)
        if last is not None:
            regressed = bool(last.get("met")) and not met
            line += f" (last recorded {last.get('shown', last.get('value'))}: {'REGRESSION' if regressed else 'no regression'})"
        else:
            line += " (no figure recorded before)"
        self.verdicts.append(line)
        print(f"[target] {line}", flush=True)
        return line

    def lines(self) -> str:
        return "\n".join(f"- {line}" for line in self.verdicts)

    def comment(self) -> str:
        return f"<!-- figures {json.dumps(self.figures, ensure_ascii=False)} -->"
