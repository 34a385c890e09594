"""`python3 build.py dist`: a wheel and an sdist ready for an index; the wheel installs into a fresh
virtual environment (its dependencies from the configured index) and the README's quick start runs there,
far from the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from readme_blocks import needs_mcp_server, needs_provider, python_blocks

from buildsys.pydist import build_dist
from py_agent import __version__


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return build_dist(tmp_path_factory.mktemp("dist"))


def test_built_in_agent_definitions_are_package_data() -> None:
    root = Path(__file__).resolve().parent.parent
    assert sorted(p.name for p in (root / "py_agent" / "tools" / "agents").glob("*.md")) == [
        "planner.md",
        "reviewer.md",
        "scout.md",
        "worker.md",
    ]
    assert '"tools/agents/*.md"' in (root / "pyproject.toml").read_text(encoding="utf-8")


def test_wheel_metadata(dists: list[Path]) -> None:
    wheel = next(p for p in dists if p.suffix == ".whl")
    assert wheel.name == f"py_agent-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = Parser().parsestr(archive.read(f"py_agent-{__version__}.dist-info/METADATA").decode())
    assert "py_agent/py.typed" in names
    assert f"py_agent-{__version__}.dist-info/licenses/LICENSE" in names
    assert "py_agent/testing/mock_server.py" in names  # test helpers stay importable in CPython
    assert metadata["Name"] == "py-agent"
    assert metadata["Summary"]
    assert metadata["License-Expression"] == "MIT"
    assert "Typing :: Typed" in metadata.get_all("Classifier", [])
    assert {"http", "test"} <= set(metadata.get_all("Provides-Extra", []))
    assert any(r.startswith("pydantic") for r in metadata.get_all("Requires-Dist", []))
    assert metadata.get_all("Project-URL")
    assert "Use py_agent from Python" in metadata.get_payload()  # the README is the long description


def test_sdist_has_sources_license_and_readme(dists: list[Path]) -> None:
    sdist = next(p for p in dists if p.name.endswith(".tar.gz"))
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "py_agent/__init__.py", "py_agent/core/agent.py"} <= names


def test_wheel_installs_in_a_fresh_venv_and_the_quick_start_runs(dists: list[Path], tmp_path: Path) -> None:
    wheel = next(p for p in dists if p.suffix == ".whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    work = tmp_path / "work"
    work.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import py_agent; print(py_agent.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        env=clean_env,
        check=True,
    )
    assert str(env_dir) in where.stdout, "imported from the installed wheel, not the checkout"
    for block in [b for b in python_blocks() if not needs_provider(b) and not needs_mcp_server(b)]:
        script = work / "quick_start.py"
        script.write_text(block, encoding="utf-8")
        done = subprocess.run(
            [str(python), str(script)],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip()
    assert sys.version_info >= (3, 11)
