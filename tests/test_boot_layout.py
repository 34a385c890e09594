"""The page's start, read from the sources (a sibling of test_layers.py):

- every file of the page's start is under ``web/boot/`` (apart from ``web/sw.js``, which its scope
  keeps at the site's root): the scripts index.html loads (but the app's ``app.js``), what they
  import, the workers they start and what those import; the start may draw with the app's views
  (``web/ui/``), which are the app's;
- index.html preloads boot.js's imports, and boot-watchdog.js checks what it preloads;
- no JavaScript file holds Python source (Python runs from .py files: ``py_agent/browser/boot.py``,
  ``buildsys/in_pyodide.py``, ``web/sandbox/py-runtime.py``);
- ``docs/boot.md`` names every file of ``web/boot/``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
BOOT = WEB / "boot"
SHARED_WITH_APP = "ui/"  # the app's views, with which web/boot/early.js draws the first screen
APP_ENTRY = "app.js"

# ---- The start's files ----

_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]+)\"")
_PRELOAD = re.compile(r"<link rel=\"modulepreload\" href=\"([^\"]+)\"")
_IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s*(?:[\w*{}\s,$]+\sfrom\s*)?["']([^"']+)["']""", re.M)
_DYNAMIC_IMPORT = re.compile(r"""\bimport\(\s*["']([^"']+)["']\s*\)""")
_WORKER = re.compile(r"""(?:new (?:Shared)?Worker|serviceWorker\.register)\(\s*siteUrl\(\s*["']([^"']+)["']""")
_COMMENT_LINE = re.compile(r"^\s*(?://|/?\*)")
_IMPORT_SCRIPTS = re.compile(r"""\bimportScripts\(\s*["']([^"']+)["']""")


def _code(path: Path) -> str:
    """A script's text without its comment lines (which may show an import)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not _COMMENT_LINE.match(line))


def _site_path(path: Path) -> str:
    return path.relative_to(WEB).as_posix()


def imports_of(path: Path) -> set[str]:
    """The site paths that the script at `path` imports (static and literal dynamic imports), starts as
    workers (site paths) or loads with importScripts."""
    text = _code(path)
    found = set()
    for pattern in (_IMPORT, _DYNAMIC_IMPORT):
        for spec in pattern.findall(text):
            if spec.startswith("."):
                found.add(_site_path((path.parent / spec).resolve()))
    for spec in _WORKER.findall(text):
        found.add(spec)  # siteUrl: relative to the site
    for spec in _IMPORT_SCRIPTS.findall(text):
        found.add(_site_path((path.parent / spec).resolve()))
    return found


def start_files() -> set[str]:
    """Every file of the page's start (site paths): from index.html's scripts but app.js, through
    imports, workers and importScripts, not into the app's views."""
    index = (WEB / "index.html").read_text(encoding="utf-8")
    todo = [src for src in _SCRIPT.findall(index) if src != APP_ENTRY]
    seen: set[str] = set()
    while todo:
        file = todo.pop()
        if file in seen or file.startswith(SHARED_WITH_APP):
            continue
        seen.add(file)
        todo.extend(imports_of(WEB / file))
    return seen


def test_every_file_of_the_pages_start_is_under_web_boot() -> None:
    files = start_files()
    assert {"boot/boot.js", "boot/early-start.js", "boot/read-ahead.js", "boot/snapshot-worker.js", "sw.js"} <= files
    outside = sorted(f for f in files if not f.startswith("boot/") and f != "sw.js")
    assert outside == [], f"files of the page's start outside web/boot/: {outside}"
    # And web/boot/ holds nothing else (but the types for TypeScript).
    in_boot = {_site_path(p) for p in BOOT.iterdir() if p.suffix == ".js"}
    assert sorted(in_boot - files) == ["boot/messages.js"]  # types only: imported by JSDoc, never loaded


def test_the_start_walk_finds_a_start_file_outside_web_boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The walk above follows each way a file joins the start: a planted import shows up.
    web = tmp_path / "web"
    (web / "boot").mkdir(parents=True)
    (web / "ui").mkdir()
    (web / "index.html").write_text(
        '<script src="boot/a.js"></script><script type="module" src="boot/b.js"></script><script src="app.js"></script>'
    )
    (web / "boot" / "a.js").write_text('import("./c.js");\n')
    (web / "boot" / "b.js").write_text(
        'import { x } from "../loose.js";\nimport "./d.js";\nnew Worker(siteUrl("w.js"), {});\n'
    )
    (web / "boot" / "c.js").write_text('import { h } from "../ui/dom.js";\n')
    (web / "boot" / "d.js").write_text("")
    (web / "loose.js").write_text("")
    (web / "w.js").write_text('importScripts("boot/d.js");\n')
    (web / "app.js").write_text('import "./other.js";\n')
    monkeypatch.setattr(sys.modules[__name__], "WEB", web)
    assert start_files() == {"boot/a.js", "boot/b.js", "boot/c.js", "boot/d.js", "loose.js", "w.js"}


def boot_modules() -> set[str]:
    """boot.js and every module it imports, transitively (site paths)."""
    todo, seen = ["boot/boot.js"], set()
    while todo:
        file = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        text = _code(WEB / file)
        todo.extend(
            _site_path((WEB / file).parent.joinpath(spec).resolve())
            for spec in _IMPORT.findall(text)
            if spec.startswith(".")
        )
    return seen


def test_the_lists_of_boot_js_modules_are_its_imports() -> None:
    modules = boot_modules()
    index = (WEB / "index.html").read_text(encoding="utf-8")
    preloaded = {href for href in _PRELOAD.findall(index) if href.startswith("boot/") and href != "boot/early.js"}
    preloaded -= {"boot/idb.js"}  # early.js's
    assert preloaded == modules - {"boot/boot.js"}, "index.html's modulepreloads of boot.js's imports"
    # boot-watchdog.js checks boot.js and what index.html preloads (the page's own modules): the
    # same list, in web/ and in a built site, whose index.html preloads the bundle (buildsys/bundle.py).
    watchdog = _code(BOOT / "boot-watchdog.js")
    assert 'var files = ["boot/boot.js"];' in watchdog
    assert """querySelectorAll('link[rel="modulepreload"]')""" in watchdog


# ---- No Python in JavaScript ----

# Python's statements that JavaScript never writes this way (at the start of a line), and a call
# that runs Python given as a literal.
_PYTHON_LINES = re.compile(
    r"""^[ \t]*(?:
        (?:async[ \t]+)?def[ \t]+\w+[ \t]*\(.*\)[^{;]*:[ \t]*(?:\#.*)?$
      | class[ \t]+\w+(?:\(.*\))?[ \t]*:[ \t]*(?:\#.*)?$
      | (?:try|else|finally)[ \t]*:[ \t]*(?:\#.*)?$
      | except\b[^{;]*:[ \t]*(?:\#.*)?$
      | (?:if|elif|while|for|with)[ \t]+[^(\s][^{;]*:[ \t]*(?:\#.*)?$
      | from[ \t]+[\w.]+[ \t]+import[ \t]+[\w.*,() \t]+$
      | import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*[ \t]*(?:\#.*)?$
    )""",
    re.M | re.X,
)
_RUN_PYTHON_LITERAL = re.compile(r"""\brunPython(?:Async)?\(\s*["'`]""")


def python_in_javascript(text: str) -> list[str]:
    """The lines of a JavaScript file that hold Python source: Python's statements, or a runPython
    call given a literal. ``line: text``; comment lines are left out."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if _COMMENT_LINE.match(line):
            continue
        if _PYTHON_LINES.match(line) or _RUN_PYTHON_LITERAL.search(line):
            found.append(f"{number}: {line.strip()}")
    return found


def javascript_files() -> list[Path]:
    files = [*WEB.rglob("*.js"), *WEB.rglob("*.mjs"), *(ROOT / "scripts").rglob("*.mjs")]
    return sorted(p for p in files if "vendor" not in p.relative_to(ROOT).parts)


def test_no_javascript_file_holds_python_source() -> None:
    files = javascript_files()
    assert len(files) > 30
    found = {p.relative_to(ROOT).as_posix(): lines for p in files if (lines := python_in_javascript(p.read_text()))}
    assert found == {}


def test_the_python_check_finds_python_planted_in_javascript() -> None:
    # What web/fastboot.js held before (WARM_CODE, IMPORT_CODE) and one-liners run from strings.
    planted = """
export const WARM = `
def _py_agent_warm():
    import sys
    from pydantic import BaseModel, TypeAdapter
    try:
        from py_agent.app.plugins import default_plugins
    except Exception:
        pass
    for name, module in list(sys.modules.items()):
        if name.startswith("py_agent"):
            with open(name) as f:
                pass
class Thing(Base):
    pass
_py_agent_warm()
`;
const IMPORT = () => `
import json, sys
import py_agent, pydantic as p
`;
pyodide.runPython("import gc as _gc; _gc.collect()");
await pyodide.runPythonAsync(`x = 1`);
"""
    found = [line.split(": ", 1)[1] for line in python_in_javascript(planted)]
    assert found == [
        "def _py_agent_warm():",
        "import sys",
        "from pydantic import BaseModel, TypeAdapter",
        "try:",
        "from py_agent.app.plugins import default_plugins",
        "except Exception:",
        "for name, module in list(sys.modules.items()):",
        'if name.startswith("py_agent"):',
        "with open(name) as f:",
        "class Thing(Base):",
        "import json, sys",
        "import py_agent, pydantic as p",
        'pyodide.runPython("import gc as _gc; _gc.collect()");',
        "await pyodide.runPythonAsync(`x = 1`);",
    ]
    # JavaScript that looks a little like it is not Python.
    javascript = """
import { a, b } from "./x.js";
import "./bytes.js";
import * as y from "../y.js";
export { c } from "./c.js";
} from "./d.js";
const z = await import("./z.js");
for (const [k, v] of Object.entries(o)) {
if (ready) return;
while (queue.length) {
try {
} catch (error) {
} else {
} finally {
class Storage extends Base {
  constructor(db) {
  get(key) {
    key: value,
    const text = cond
      ? "yes"
      : "no";
// from py_agent.app import x: a comment may name Python
 * try: a JSDoc line
pyodide.runPython(init.runtime, { filename: "<sandbox>" });
const boot = pyodide.pyimport("py_agent.browser.boot");
"""
    assert python_in_javascript(javascript) == []


# ---- docs/boot.md ----


def test_docs_boot_md_names_every_file_of_web_boot() -> None:
    doc = (ROOT / "docs" / "boot.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in BOOT.iterdir() if p.is_file())
    assert len(files) > 10
    missing = [name for name in files if f"`{name}`" not in doc and f"web/boot/{name}" not in doc]
    assert missing == [], f"docs/boot.md does not name {missing}"
    assert "web/sw.js" in doc or "`sw.js`" in doc


def test_every_script_of_web_boot_is_type_checked() -> None:
    # jsconfig.json checks the files that ask for it (checkJs is off: the page's other scripts are not yet typed).
    unchecked = sorted(
        p.name for p in BOOT.glob("*.js") if not p.read_text(encoding="utf-8").startswith("// @ts-check")
    )
    assert unchecked == []
