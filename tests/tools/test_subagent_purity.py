"""The subagent modules are pure: no filesystem, process, socket or browser modules (CPython only)."""

from __future__ import annotations

import ast
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "py_agent"
TOOLS = PACKAGE / "tools"
MODULES = ["tools/subagent.py", "tools/subagent_definitions.py", "app/subagent_plugin.py"]
FORBIDDEN = {"os", "pathlib", "io", "shutil", "tempfile", "subprocess", "socket", "glob", "js", "pyodide", "httpx"}
THIRD_PARTY = {"pydantic", "pydantic_core", "typing_extensions", "annotated_types"}


def _imports(path: pathlib.Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_subagent_modules_import_only_stdlib_pydantic_and_py_agent() -> None:
    for name in MODULES:
        imports = _imports(PACKAGE / name)
        assert not imports & FORBIDDEN, (name, imports & FORBIDDEN)
        for module in imports:
            assert module in sys.stdlib_module_names or module in THIRD_PARTY or module == "__future__", (name, module)


def test_built_in_definitions_are_package_data() -> None:
    assert sorted(p.name for p in (TOOLS / "agents").glob("*.md")) == [
        "planner.md",
        "reviewer.md",
        "scout.md",
        "worker.md",
    ]
    pyproject = (TOOLS.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"tools/agents/*.md"' in pyproject
