"""The package's layers, read from the source (every import, also inside functions and under
``if TYPE_CHECKING``):

- ai imports only ai; core: ai; session: ai, core; tools: ai, core, session; transports: ai;
  mcp (the MCP client and its tool adapter): ai, core; app: ai, core, session, tools, transports,
  mcp; browser: those and app; testing: anything but app and browser; ``py_agent/__init__.py``
  (the composition root) anything; any layer may read the
  package's version (``from py_agent import __version__``: a literal, set before any layer runs);
- only ``py_agent/browser/`` and ``py_agent/transports/fetch.py`` import ``js`` or ``pyodide``;
- only ``py_agent/transports/__init__.py`` asks which platform it runs on (``sys.platform``,
  ``"emscripten"``, ``IN_PYODIDE``);
- the pure layers (ai, core, session, tools, and the subagent tool of app) import only the standard
  library, pydantic, pathspec and py_agent, and none of the standard library's file, process or socket
  modules: they run alike in CPython and in Pyodide, with no file system.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "py_agent"

LOWER = ("ai", "core", "session", "tools", "transports", "mcp")
ALLOWED: dict[str, set[str]] = {
    "ai": {"ai"},
    "core": {"ai", "core"},
    "session": {"ai", "core", "session"},
    "tools": {"ai", "core", "session", "tools"},
    "transports": {"ai", "transports"},
    "mcp": {"ai", "core", "mcp"},
    "app": {*LOWER, "app"},
    "browser": {*LOWER, "app", "browser"},
    "testing": {*LOWER, "testing"},
}
BROWSER_MODULES = ("js", "pyodide", "pyodide_js")
BROWSER_ALLOWED = ("browser/", "transports/fetch.py")
PLATFORM_CHECK_ALLOWED = "transports/__init__.py"
ROOT_METADATA = ("__version__",)
PURE = ("ai/", "core/", "session/", "tools/", "app/subagent_tool.py")
ENVIRONMENT_MODULES = {"os", "pathlib", "io", "shutil", "tempfile", "subprocess", "socket", "glob", "js", "pyodide"}
# pathspec: .gitignore matching for grep/find (tools/gitignore.py); pure Python, shipped to Pyodide too.
PURE_THIRD_PARTY = {"pydantic", "pydantic_core", "typing_extensions", "annotated_types", "pathspec", "__future__"}


def _module_parts(relative: Path) -> list[str]:
    parts = [relative.parts[0], *relative.parts[1:-1]]
    if relative.name != "__init__.py":
        parts.append(relative.stem)
    return parts


def _imports(tree: ast.AST, package: str, relative: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in the module at ``relative`` (under ``package``)."""
    here = [package, *_module_parts(relative)]
    if relative.name != "__init__.py":
        here = here[:-1]  # the module's package
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
                if node.module is None:  # from . import x: x may be a submodule
                    found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names)
                    continue
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return found


def _is_platform_check(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return (node.attr == "platform" and getattr(node.value, "id", None) == "sys") or node.attr == "IN_PYODIDE"
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and "emscripten" in node.value.lower()
    if isinstance(node, ast.Name):
        return node.id == "IN_PYODIDE"
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[-1] == "IN_PYODIDE"
    return False


def _platform_checks(tree: ast.AST) -> list[int]:
    return [getattr(node, "lineno", 0) for node in ast.walk(tree) if _is_platform_check(node)]


def _is_pure_import(top: str, package: str) -> bool:
    if top in ENVIRONMENT_MODULES:
        return False
    return top == package or top in PURE_THIRD_PARTY or top in sys.stdlib_module_names


def layer_violations(root: Path) -> list[str]:
    """Every import against the layers or out of a pure module, browser import or platform check out of
    place, under ``root`` (a package laid out as py_agent)."""
    package = root.name
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        where = relative.as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        layer = relative.parts[0] if len(relative.parts) > 1 else None
        for line, module in _imports(tree, package, relative):
            top = module.split(".")[0]
            if top in BROWSER_MODULES and not where.startswith(BROWSER_ALLOWED):
                problems.append(f"{where}:{line}: imports {module} (only browser/ and transports/fetch.py may)")
            elif where.startswith(PURE) and not _is_pure_import(top, package):
                problems.append(f"{where}:{line}: imports {module} (a pure module: standard library and pydantic only)")
            if top != package or layer is None:
                continue  # the composition root (package/__init__.py) may import anything
            parts = module.split(".")
            target = parts[1] if len(parts) > 1 else ""
            if target not in ALLOWED.get(layer, set()) and not (len(parts) == 2 and target in ROOT_METADATA):
                problems.append(f"{where}:{line}: {layer} imports {module}")
        if where != PLATFORM_CHECK_ALLOWED:
            problems.extend(
                f"{where}:{line}: a platform check (only {PLATFORM_CHECK_ALLOWED} may)"
                for line in _platform_checks(tree)
            )
    return problems


def test_py_agent_keeps_its_layers() -> None:
    assert (ROOT / "app").is_dir() and (ROOT / "browser").is_dir()
    assert layer_violations(ROOT) == []


def test_the_checker_reports_violations(tmp_path: Path) -> None:
    root = tmp_path / "py_agent"
    files = {
        "__init__.py": "from .browser import main\nimport sys\nPLATFORM = sys.platform\n",
        "ai/__init__.py": "",
        "ai/types.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..core import agent\n",
        "core/__init__.py": "",
        "core/agent.py": "def f():\n    from py_agent.session import tree\n    import js\n    import os.path\n",
        "session/__init__.py": "from ..ai import types\nfrom . import tree\n",
        "session/tree.py": "import json\nimport pydantic\nimport httpx\n",
        "tools/__init__.py": "from .. import app\nfrom .. import __version__\nimport py_agent\n",
        "transports/__init__.py": "import sys\nIN_PYODIDE = sys.platform == 'emscripten'\n",
        "transports/fetch.py": "import js\nfrom pyodide.ffi import to_js\n",
        "transports/httpx.py": "from ..session import tree\nfrom . import IN_PYODIDE\n",
        "app/__init__.py": "from ..tools import x\nfrom ..transports import y\nimport io\n",
        "app/subagent_tool.py": "from pathlib import Path\n",
        "app/controller.py": "from ..browser import main\nif 'emscripten' in NAME:\n    pass\n",
        "browser/__init__.py": "",
        "browser/main.py": "import js\nfrom ..app import controller\nfrom ..testing import mock\n",
        "testing/__init__.py": "",
        "testing/mock.py": "from ..app import controller\nfrom ..ai import types\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert layer_violations(root) == [
        "__init__.py:3: a platform check (only transports/__init__.py may)",
        "ai/types.py:3: ai imports py_agent.core",
        "app/controller.py:1: app imports py_agent.browser",
        "app/controller.py:2: a platform check (only transports/__init__.py may)",
        "app/subagent_tool.py:1: imports pathlib (a pure module: standard library and pydantic only)",
        "browser/main.py:3: browser imports py_agent.testing",
        "core/agent.py:2: core imports py_agent.session",
        "core/agent.py:3: imports js (only browser/ and transports/fetch.py may)",
        "core/agent.py:4: imports os.path (a pure module: standard library and pydantic only)",
        "session/tree.py:3: imports httpx (a pure module: standard library and pydantic only)",
        "testing/mock.py:1: testing imports py_agent.app",
        "tools/__init__.py:1: tools imports py_agent.app",
        "tools/__init__.py:3: tools imports py_agent",
        "transports/httpx.py:1: transports imports py_agent.session",
        "transports/httpx.py:2: a platform check (only transports/__init__.py may)",
    ]
