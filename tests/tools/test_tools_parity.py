"""The workspace tools' texts, compared with pi's own tools on the same files.

``tests/reference/run_tools.mjs`` runs pi's coding-agent tools (``@earendil-works/pi-coding-agent@0.79.10``)
in Node on a folder holding ``FILES``, with Debian's ``ripgrep`` and ``fd-find`` for grep and
find; py_agent's tools run on a workspace holding the same files. Every call of ``CALLS`` must give
the same text (pi's absolute folder path shown as the workspace path), apart from the differences
``docs/deviations.md`` lists, which are checked as they are described there:

- ``order``: ripgrep and fd walk folders in no fixed order (py_agent lists in path order); the
  same lines in any order.
- ``bash_hint``: pi's read of a line over the limit names ``bash``, which the page does not have.
- ``walk_subset``: with a ``limit``, pi's find keeps the first files of fd's unordered walk.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from py_agent.tools import Workspace, make_workspace_tools

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "reference"

FILES: dict[str, str] = {
    "a.txt": "hello\nworld\nhello again\n",
    "src/main.py": (
        "import sys\n\n\ndef main():\n    print('hello')\n    return 0\n\n\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    ),
    "src/util/helpers.py": "def helper(x):\n    return x * 2\n\n\ndef other():\n    return 'hello'\n",
    "docs/readme.md": "# Title\n\nSome text about hello.\n\n## Section\n\nMore text.\n",
    "docs/notes.md": "notes\n",
    "crlf.txt": "one\r\ntwo\r\nthree\r\n",
    "bom.txt": "\ufeffbom line\nsecond\n",
    "many.txt": "".join(f"line {i}\n" for i in range(1, 2501)),
    "long.txt": "y" * 60000 + "\nshort\n",
    "empty.txt": "",
    "unicode.txt": "naïve café ☕\nünïcödé\n",
}

# (tool, args, deviation or None)
CALLS: list[tuple[str, dict[str, Any], str | None]] = [
    ("read", {"path": "a.txt"}, None),
    ("read", {"path": "a.txt", "offset": 2, "limit": 1}, None),
    ("read", {"path": "a.txt", "offset": 10}, None),
    ("read", {"path": "many.txt"}, None),
    ("read", {"path": "many.txt", "offset": 2400}, None),
    ("read", {"path": "many.txt", "offset": 100, "limit": 5}, None),
    ("read", {"path": "crlf.txt"}, None),
    ("read", {"path": "bom.txt"}, None),
    ("read", {"path": "unicode.txt"}, None),
    ("read", {"path": "empty.txt"}, None),
    ("read", {"path": "long.txt"}, "bash_hint"),
    ("read", {"path": "missing.txt"}, None),
    ("read", {"path": "docs/missing.md"}, None),
    ("read", {"path": "docs"}, None),
    ("ls", {}, None),
    ("ls", {"path": "src"}, None),
    ("ls", {"path": "docs", "limit": 1}, None),
    ("ls", {"path": "nope"}, None),
    ("ls", {"path": "a.txt"}, None),
    ("grep", {"pattern": "hello"}, "order"),
    ("grep", {"pattern": "hello", "path": "a.txt"}, None),
    ("grep", {"pattern": "HELLO", "ignoreCase": True, "path": "src"}, "order"),
    ("grep", {"pattern": "def \\w+", "glob": "*.py"}, "order"),
    ("grep", {"pattern": "x * 2", "literal": True}, None),
    ("grep", {"pattern": "world", "context": 1, "path": "a.txt"}, None),
    ("grep", {"pattern": "line 1", "path": "many.txt", "limit": 3}, None),
    ("grep", {"pattern": "nothing-matches-this"}, None),
    ("grep", {"pattern": "hello", "path": "nope"}, None),
    ("grep", {"pattern": "(unclosed"}, None),
    ("grep", {"pattern": "a)b"}, None),
    ("grep", {"pattern": "[abc"}, None),
    ("grep", {"pattern": "*x"}, None),
    ("grep", {"pattern": "\\q"}, None),
    ("grep", {"pattern": "x{3,1}"}, None),
    ("grep", {"pattern": "[z-a]"}, None),
    ("grep", {"pattern": "(?<n"}, None),
    ("grep", {"pattern": "a|*"}, None),
    ("find", {"pattern": "*.md"}, "order"),
    ("find", {"pattern": "*.py", "path": "src"}, "order"),
    ("find", {"pattern": "*.txt", "limit": 2}, "walk_subset"),
    ("find", {"pattern": "*.rs"}, None),
    ("find", {"pattern": "*.md", "path": "nope"}, None),
    ("find", {"pattern": "*.md", "path": "a.txt"}, None),
    ("edit", {"path": "a.txt", "edits": [{"oldText": "world", "newText": "planet"}]}, None),
    ("edit", {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}, None),
    ("edit", {"path": "a.txt", "edits": [{"oldText": "absent", "newText": "x"}]}, None),
    ("edit", {"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}, None),
    ("edit", {"path": "crlf.txt", "edits": [{"oldText": "two", "newText": "2"}]}, None),
    ("read", {"path": "crlf.txt"}, None),
    ("write", {"path": "new/deep/file.txt", "content": "fresh\ncontent\n"}, None),
    ("read", {"path": "new/deep/file.txt"}, None),
    ("write", {"path": "a.txt", "content": "replaced"}, None),
    ("read", {"path": "a.txt"}, None),
]


def _fd_shim(folder: Path) -> None:
    """``fd`` for pi's find: Debian installs fd-find as ``fdfind``, and its fd 8.6 predates the
    ``--no-require-git`` flag pi passes (which only matters for ignore files outside a git
    repository; the test folder has none), so the shim drops it."""
    fdfind = shutil.which("fdfind") or shutil.which("fd")
    assert fdfind is not None, "fd-find is not installed (python3 build.py test installs it)"
    shim = folder / "fd"
    shim.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do shift; [ "$a" = "--no-require-git" ] || set -- "$@" "$a"; done\n'
        f'exec "{fdfind}" "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture(scope="module")
def pi_results(reference_install: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], str]:
    assert shutil.which("rg") is not None, "ripgrep is not installed (python3 build.py test installs it)"
    root = tmp_path_factory.mktemp("pi-tools")
    folder = root / "work"
    for path, content in FILES.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))
    bin_dir = root / "bin"
    bin_dir.mkdir()
    _fd_shim(bin_dir)
    calls_file = root / "calls.json"
    calls_file.write_text(json.dumps([{"tool": tool, "args": args} for tool, args, _ in CALLS]), encoding="utf-8")
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(root)  # no tools pi may have downloaded to ~/.pi: the system's rg and fd
    completed = subprocess.run(
        ["node", str(REFERENCE_DIR / "run_tools.mjs"), str(folder), str(calls_file)],
        cwd=REFERENCE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout), str(folder)


@pytest.fixture(scope="module")
def our_results() -> list[dict[str, Any]]:
    return asyncio.run(_run_ours())


async def _run_ours() -> list[dict[str, Any]]:
    workspace = await Workspace.open()
    for path, content in FILES.items():
        await workspace.write(path, content)
    tools = {tool.name: tool for tool in make_workspace_tools(workspace)}
    results: list[dict[str, Any]] = []
    for tool, args, _ in CALLS:
        execute = tools[tool].execute
        assert execute is not None
        try:
            result = await execute("call", json.loads(json.dumps(args)), None, None)
        except Exception as error:
            results.append({"error": str(error)})
            continue
        results.append({"texts": [b.text if b.type == "text" else f"<{b.type}>" for b in result.content]})
    return results


def _as_workspace_paths(value: Any, folder: str) -> Any:
    if isinstance(value, str):
        return value.replace(folder + "/", "").replace(folder, "")
    if isinstance(value, list):
        return [_as_workspace_paths(item, folder) for item in value]
    if isinstance(value, dict):
        return {key: _as_workspace_paths(item, folder) for key, item in value.items()}
    return value


def _lines(outcome: dict[str, Any]) -> list[str]:
    return sorted("\n".join(outcome.get("texts") or [outcome.get("error", "")]).split("\n"))


@pytest.mark.parametrize("index", range(len(CALLS)), ids=[f"{i:02d}-{c[0]}" for i, c in enumerate(CALLS)])
def test_tool_text_matches_pi(index: int, pi_results: tuple[list[Any], str], our_results: list[Any]) -> None:
    tool, args, deviation = CALLS[index]
    pi_all, folder = pi_results
    theirs, ours = _as_workspace_paths(pi_all[index], folder), our_results[index]
    if deviation == "order":
        assert _lines(ours) == _lines(theirs), (tool, args)
    elif deviation == "bash_hint":
        assert "Use bash:" in theirs["texts"][0] and "bash" not in ours["texts"][0]
        assert ours["texts"][0].split(". Use ")[0] == theirs["texts"][0].split(". Use ")[0]
    elif deviation == "walk_subset":
        # A limit keeps the first files of the walk: pi's are fd's (in no fixed order), ours the
        # first in path order. The same count and notice; each listed file matches.
        ours_lines, their_lines = ours["texts"][0].split("\n"), theirs["texts"][0].split("\n")
        assert len(ours_lines) == len(their_lines) and ours_lines[-1] == their_lines[-1]
        assert all(line.endswith(".txt") for line in ours_lines[:-2] + their_lines[:-2])
    else:
        assert ours == theirs, (tool, args)
