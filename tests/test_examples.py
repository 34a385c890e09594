"""Every program in examples/ runs and does what its docstring says (the page example:
tests/browser/test_example_page.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(name: str, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
    )


def test_every_example_is_run_by_a_test() -> None:
    tested = {"chat_cli.py", "workspace_folder.py", "subagents.py", "mcp_tools.py", "pyodide_page"}
    assert {p.name for p in EXAMPLES.iterdir() if p.name != "README.md"} == tested


def test_chat_cli_offline_runs_its_tool() -> None:
    done = run("chat_cli.py", stdin="What time is it?\nAnd now?\n\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[clock {'timezone_offset_hours': 0}]") == 2
    assert done.stdout.count("The clock says: It is ") == 2


def test_chat_cli_streams_from_a_real_provider_api() -> None:
    with MockProviderServer() as server:
        server.script([{"text": "Hi there, how can I help?", "chunk_size": 3}])
        env = {"OPENAI_BASE_URL": server.base_url("openai-completions"), "OPENAI_API_KEY": "sk-test-examples"}
        done = run("chat_cli.py", "openai", "gpt-4o-mini", stdin="Hello\n\n", env=env)
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert "Hi there, how can I help?" in done.stdout
    assert requests[0]["headers"]["authorization"] == "Bearer sk-test-examples"
    tools = requests[0]["body"]["tools"]  # Responses and Chat Completions shape tools differently
    assert [t.get("name") or t["function"]["name"] for t in tools] == ["clock"]


def test_chat_cli_says_when_the_model_is_unknown() -> None:
    done = run("chat_cli.py", "openai", "no-such-model")
    assert done.returncode != 0
    assert "Unknown model openai/no-such-model" in done.stderr


def test_workspace_folder_edits_the_real_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Shopping\nTODO: buy milk\n", encoding="utf-8")
    (tmp_path / "other.md").write_text("# untouched\n", encoding="utf-8")
    done = run("workspace_folder.py", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "ls: notes.txt" in done.stdout
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "Shopping\nDONE: buy milk\n"
    assert (tmp_path / "other.md").read_text(encoding="utf-8") == "# untouched\n"


def test_subagents_run_three_tasks() -> None:
    done = run("subagents.py")
    assert done.returncode == 0, done.stderr
    for fruit in ("APPLES", "PEARS", "PLUMS"):
        assert f"Done: COUNT THE {fruit}" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "All three counts are done."


def test_mcp_tools_lists_the_tools_and_the_model_calls_one() -> None:
    with McpTestServer() as server:
        done = run("mcp_tools.py", server.url, "add", '{"a": 2, "b": 3}', env={"MCP_TOKEN": "tok-example"})
        headers = list(server.headers_seen)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "mcp__server__add: Add two integers and return the sum"
    assert "mcp__server__pixel: A 1x1 red pixel, as an image" in lines
    assert lines[-1] == "The tool said: 5"
    assert all(h.get("authorization") == "Bearer tok-example" for h in headers)


def test_mcp_tools_names_a_wrong_url() -> None:
    with McpTestServer() as server:
        done = run("mcp_tools.py", server.url.replace("/mcp", "/wrong"))
    assert done.returncode == 1
    assert "No MCP server answers at" in done.stderr
