"""`python3 build.py docs`: the API reference of the public modules, built by pdoc without a warning,
with a docstring on every public name."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from buildsys.pydist import PUBLIC_MODULES, build_api_docs


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_name_is_documented(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__doc__ and module.__doc__.strip(), module_name
    undocumented = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            own = obj.__doc__ if not inspect.isclass(obj) else obj.__dict__.get("__doc__")
            if not (own and own.strip()):
                undocumented.append(name)
    assert not undocumented, f"{module_name}: no docstring on {', '.join(undocumented)}"


def test_docs_build_without_warnings(tmp_path: Path) -> None:
    out = build_api_docs(tmp_path / "api")  # raises BuildError on any warning
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    assert {"index.html", "py_agent.html", "py_agent/core.html", "py_agent/ai.html"} <= pages
    assert {"py_agent/session.html", "py_agent/tools.html"} <= pages
    agent_page = (out / "py_agent" / "core.html").read_text(encoding="utf-8")
    assert "continue_" in agent_page and "prompt" in agent_page
