"""The pure layers import no filesystem, process, socket or browser module (architecture rule)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "py_agent"
FORBIDDEN = {"os", "pathlib", "io", "shutil", "tempfile", "subprocess", "socket", "glob", "js", "pyodide", "httpx"}


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_and_ai_import_no_environment_modules() -> None:
    offenders = {}
    files = [*sorted((ROOT / "core").rglob("*.py")), *sorted((ROOT / "ai").rglob("*.py"))]
    assert files, "no sources found"
    for path in files:
        bad = _imports(path) & FORBIDDEN
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert offenders == {}


def test_core_imports_only_stdlib_pydantic_and_py_agent() -> None:
    import sys

    allowed_third_party = {"pydantic", "pydantic_core", "typing_extensions", "annotated_types", "py_agent"}
    for path in sorted((ROOT / "core").rglob("*.py")):
        for name in _imports(path):
            assert name in sys.stdlib_module_names or name in allowed_third_party or name == "__future__", (path, name)


def test_tools_import_no_environment_modules() -> None:
    """py_agent/tools (the workspace, its tools, subagents) is pure.

    Only py_agent/browser (and py_agent/transports/fetch.py) touches the browser.
    """
    import sys

    allowed_third_party = {"pydantic", "pydantic_core", "typing_extensions", "annotated_types", "py_agent"}
    files = sorted((ROOT / "tools").rglob("*.py"))
    assert files, "no sources found"
    for path in files:
        for name in _imports(path):
            assert name not in FORBIDDEN, (path, name)
            assert name in sys.stdlib_module_names or name in allowed_third_party or name == "__future__", (path, name)
