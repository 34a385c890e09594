"""Workspace paths: what normalize_path accepts, what it refuses, and why."""

# pyodide-runner: no-fs
from __future__ import annotations

import pytest

from py_agent.tools.workspace import WorkspaceError, normalize_path


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
