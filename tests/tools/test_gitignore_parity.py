"""The .gitignore rules grep and find apply (py_agent/tools/gitignore.py) against git's own answer
(`git check-ignore`) on a project with tricky patterns: nested files, negation, folder-only and
anchored patterns, `**`, escapes and a re-include under an ignored folder (which git refuses)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from py_agent.tools.gitignore import IgnoreRules

ROOT_RULES = "\n".join(
    [
        "# comment",
        "*.log",
        "!keep.log",
        "build/",
        "/anchored.txt",
        "docs/*.tmp",
        "a/**/z.txt",
        "**/cache",
        "\\#literal",
        "trailing-space.txt   ",
        "out/",
        "!out/wanted.txt",  # cannot re-include: out/ itself is ignored
        "*.bak",
        "!important.bak",
        "dir-or-file",
    ]
)
NESTED_RULES = "nested-only.txt\n!also.log\n/anchored-here.txt\n"
FILES = [
    "x.log",
    "keep.log",
    "deep/keep.log",
    "build/a.txt",
    "src/build/b.txt",
    "build.txt",
    "anchored.txt",
    "src/anchored.txt",
    "docs/a.tmp",
    "docs/deep/a.tmp",
    "a/z.txt",
    "a/b/c/z.txt",
    "cache/x",
    "src/cache/y",
    "#literal",
    "trailing-space.txt",
    "out/wanted.txt",
    "important.bak",
    "other.bak",
    "dir-or-file/inner.txt",
    "src/dir-or-file",
    "src/nested-only.txt",
    "nested-only.txt",
    "src/also.log",
    "src/anchored-here.txt",
    "src/sub/anchored-here.txt",
    "plain.py",
]


def test_ignored_files_match_git_check_ignore(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(ROOT_RULES + "\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".gitignore").write_text(NESTED_RULES)
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    answer = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(FILES) + "\n",
        capture_output=True,
        text=True,
    )
    assert answer.returncode in (0, 1), answer.stderr
    by_git = set(answer.stdout.splitlines())
    rules = IgnoreRules([(".gitignore", ROOT_RULES + "\n"), ("src/.gitignore", NESTED_RULES)])
    ours = {name for name in FILES if rules.ignored(name)}
    assert ours == by_git
    assert {"x.log", "build/a.txt", "out/wanted.txt", "src/nested-only.txt"} <= ours  # the test sees ignoring
