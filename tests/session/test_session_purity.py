"""py_agent.session is pure: stdlib and pydantic only, and no file, process, network or browser module."""

from __future__ import annotations

import ast
import pathlib
import sys

import py_agent.session

FORBIDDEN = {"os", "pathlib", "io", "shutil", "tempfile", "subprocess", "socket", "glob", "js", "pyodide", "httpx"}
ALLOWED_THIRD_PARTY = {"pydantic", "pydantic_core", "typing_extensions", "annotated_types"}


def _sources() -> list[pathlib.Path]:
    return sorted(pathlib.Path(py_agent.session.__file__).resolve().parent.rglob("*.py"))


def test_session_imports_only_stdlib_and_pydantic() -> None:
    sources = _sources()
    assert len(sources) >= 6
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            for name in names:
                assert name not in FORBIDDEN, (path.name, name)
                assert name in sys.stdlib_module_names or name in ALLOWED_THIRD_PARTY or name == "__future__", (
                    path.name,
                    name,
                )
