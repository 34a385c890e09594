"""Workspace paths: what normalize_path accepts, what it refuses, and why."""

# pyodide-runner: no-fs
from __future__ import annotations

import pytest

from py_agent.tools.workspace import (
    MAX_PATH_LENGTH,
    MAX_SEGMENT_LENGTH,
    WorkspaceError,
    normalize_path,
    safe_path,
    unique_path,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("dir//sub/./b.md", "dir/sub/b.md"),
        ("dir/", "dir"),
        ("/workspace/data.csv", "data.csv"),
        ("/workspace", ""),
        ("@notes/todo.md", "notes/todo.md"),
        ("name with spaces.txt", "name with spaces.txt"),
        ("ünïcødé/日本.txt", "ünïcødé/日本.txt"),
        (".hidden", ".hidden"),
        ("a..b", "a..b"),
    ],
)
def test_accepted_paths(given: str, expected: str) -> None:
    assert normalize_path(given, allow_root=True) == expected


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("../secret", "'..' is not allowed"),
        ("a/../../b", "'..' is not allowed"),
        ("a/..", "'..' is not allowed"),
        ("/etc/passwd", "outside the workspace"),
        ("/workspaces/x", "outside the workspace"),
        ("/", "outside the workspace"),
        ("C:\\Windows\\system.ini", "backslashes"),
        ("C:/Windows/system.ini", "Absolute host path"),
        ("dir\\file.txt", "backslashes"),
        ("~/.ssh/id_rsa", "Home-relative"),
        ("a\x00b", "NUL"),
        ("a\nb", "control characters"),
        ("file:///etc/passwd", "URLs are not workspace paths"),
        ("https://example.com/x", "URLs are not workspace paths"),
        ("x" * 2000, "longer than"),
        ("d/" + "n" * 300, "longer than 255"),
    ],
)
def test_refused_paths_say_why(given: str, reason: str) -> None:
    with pytest.raises(WorkspaceError, match=None) as info:
        normalize_path(given)
    assert reason in str(info.value)


def test_root_only_when_allowed() -> None:
    assert normalize_path(".", allow_root=True) == ""
    for root in (".", "", "/workspace/", "./"):
        with pytest.raises(WorkspaceError, match="workspace root"):
            normalize_path(root)


def test_non_strings_are_refused() -> None:
    for value in (None, 3, b"a.txt", ["a"]):
        with pytest.raises(WorkspaceError, match="expected a string"):
            normalize_path(value)


# ---- names the user gives (uploads, drops, attachments): kept, made safe, or refused with the reason ----


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("notes.txt", "notes.txt"),
        ("project/src/main.py", "project/src/main.py"),
        ("ünïcødé/日本.txt", "ünïcødé/日本.txt"),
        # Names a disk cannot hold but a drag from another page can carry.
        ("/workspace/../tmp/absws-x.txt", "tmp/absws-x.txt"),
        ("....//....//dots-x.txt", "dots-x.txt"),
        ("../../etc/passwd", "etc/passwd"),
        ("/etc/passwd", "etc/passwd"),
        ("C:\\Users\\me\\report.docx", "Users/me/report.docx"),
        ("dir\\file.txt", "dir/file.txt"),
        ("a\x1b[31mred.txt", "a_[31mred.txt"),
        ("tab\there\x00.txt", "tab_here_.txt"),
        ("~$report.docx", "_~$report.docx"),
        ("@mention.md", "_@mention.md"),
        ("c:name.txt", "_c:name.txt"),
        # Bidi and invisible characters are kept: the page shows them (web/ui/dom.js).
        ("report\u202etxt.exe", "report\u202etxt.exe"),
    ],
)
def test_safe_paths(given: str, expected: str) -> None:
    assert safe_path(given) == expected
    assert normalize_path(safe_path(given)) == expected  # always a path the workspace takes


def test_a_long_name_is_cut_in_its_middle_and_keeps_its_extension() -> None:
    path = safe_path("x" * 1200 + ".txt")
    assert len(path) == MAX_SEGMENT_LENGTH
    assert path.endswith("\u2026.txt")
    assert path.startswith("xxxx")
    deep = safe_path("/".join(["folder" + "y" * 200] * 8) + "/leaf.md")
    assert len(deep) <= MAX_PATH_LENGTH
    assert deep.endswith("/leaf.md")


@pytest.mark.parametrize("given", ["..", "....//....", "/", "", "  /  ", "\\\\", "/workspace/"])
def test_names_with_nothing_left_are_refused_naming_them(given: str) -> None:
    with pytest.raises(WorkspaceError) as info:
        safe_path(given)
    assert repr(given) in str(info.value)
    assert "no part of its name can be a file name" in str(info.value)


def test_unique_paths_number_the_copy_before_the_extension() -> None:
    taken = {"data/report.pdf", "data/report (2).pdf", ".env", "README"}
    assert unique_path("data/report.pdf", taken.__contains__) == "data/report (3).pdf"
    assert unique_path(".env", taken.__contains__) == ".env (2)"
    assert unique_path("README", taken.__contains__) == "README (2)"
    assert unique_path("free.txt", taken.__contains__) == "free.txt"
    long = "z" * MAX_SEGMENT_LENGTH
    numbered = unique_path(long, {long}.__contains__)
    assert len(numbered) == MAX_SEGMENT_LENGTH
    assert numbered.endswith(" (2)")
    assert normalize_path(numbered) == numbered
