"""``build.py docs`` (the API reference, by pdoc) and ``build.py dist`` (wheel and sdist for an index).

Both run the tools from ``.venv`` (``.[test]`` brings pdoc and build), never from the registry at
run time of the site.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .config import ROOT, STATIC, BuildError, log
from .machine import ensure_venv

API_DOCS = STATIC / "api"
DIST = ROOT / "dist"
PUBLIC_MODULES = ("py_agent", "py_agent.core", "py_agent.ai", "py_agent.session", "py_agent.tools")


def build_api_docs(out: Path = API_DOCS) -> Path:
    """The API reference of :data:`PUBLIC_MODULES` (and their submodules) as HTML in ``out``.

    Fails on any warning pdoc prints (an unresolvable reference, a docstring it cannot parse)."""
    python = ensure_venv()
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "api"
        result = subprocess.run(
            [
                str(python),
                "-W",
                "error",
                "-m",
                "pdoc",
                "--docformat",
                "restructuredtext",
                "--no-show-source",
                "--footer-text",
                "py-agent",
                "-o",
                str(staging),
                *PUBLIC_MODULES,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env={"PYTHONPATH": str(ROOT), "PATH": str(python.parent)},
        )
        problems = (result.stderr + result.stdout).strip()
        if result.returncode != 0 or problems:
            raise BuildError(f"pdoc failed or warned:\n{problems}")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, out)
    log(f"API reference written to {out}/ (open index.html)")
    return out


def cmd_docs() -> int:
    build_api_docs()
    return 0


def build_dist(out: Path = DIST) -> list[Path]:
    """The wheel and the sdist of py-agent (PEP 517, through pypa's ``build``) in ``out``."""
    python = ensure_venv()
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("py_agent-*.whl"), *out.glob("py_agent-*.tar.gz")]:
        old.unlink()
    # Run from elsewhere, without PYTHONPATH: build.py in the repository would shadow pypa's `build`.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(
            [str(python), "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise BuildError(f"building the distributions failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    made = sorted([*out.glob("py_agent-*.whl"), *out.glob("py_agent-*.tar.gz")])
    for path in made:
        log(f"built {path} ({path.stat().st_size // 1024} KB)")
    return made


def cmd_dist() -> int:
    build_dist()
    return 0
