"""The JavaScript checks of `build.py test`: biome (lint and formatting) over web/ and scripts/, and
TypeScript's compiler over jsconfig.json when there is one, both pinned in the root package.json and
installed into node_modules/ by `npm ci` when it is missing or was installed from another lock."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from .config import ROOT, BuildError, log

JS_SOURCES = ("web", "scripts")
# npm ci's record of the lock it installed from: node_modules/ is stale when it differs.
INSTALLED_STAMP = ".py-agent-lock-sha256"


def lock_digest(root: Path) -> str:
    return hashlib.sha256((root / "package-lock.json").read_bytes()).hexdigest()


def node_modules_stale(root: Path = ROOT) -> bool:
    stamp = root / "node_modules" / INSTALLED_STAMP
    return not stamp.exists() or stamp.read_text(encoding="utf-8").strip() != lock_digest(root)


def ensure_node_modules(root: Path = ROOT) -> None:
    """`npm ci` at the root when node_modules/ is missing or stale (package-lock.json changed)."""
    if not node_modules_stale(root):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is missing: it installs the JavaScript checks (biome, TypeScript) from package.json")
    log("installing the JavaScript checks into node_modules/ (npm ci)")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=root, check=True)
    (root / "node_modules" / INSTALLED_STAMP).write_text(lock_digest(root) + "\n", encoding="utf-8")


def js_check_steps(root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """(title, command) of each check, run from ``root``: `biome ci` fails on a lint error or on a file
    that its formatter would change; `tsc` on a type error in the files jsconfig.json takes in."""
    tools = root / "node_modules" / ".bin"
    steps = [("biome (lint, format)", [str(tools / "biome"), "ci", "--colors=off", *JS_SOURCES])]
    if (root / "jsconfig.json").exists():
        steps.append(("tsc (types)", [str(tools / "tsc"), "-p", "jsconfig.json"]))
    return steps
