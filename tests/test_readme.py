"""Every Python code block in README.md runs as written.

Offline blocks run as they are; blocks that talk to a real provider run against the mock provider
server (py_agent/testing/mock_server.py), reached through the provider's ``<PROVIDER>_BASE_URL``, with
a made-up key. Each runs in its own process and folder, as a reader who pastes it into a file would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from readme_blocks import needs_mcp_server, needs_provider, python_blocks

from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = python_blocks()
OFFLINE = [block for block in BLOCKS if not needs_provider(block) and not needs_mcp_server(block)]
MCP = [block for block in BLOCKS if needs_mcp_server(block)]
ONLINE = [block for block in BLOCKS if needs_provider(block)]
KEY = "sk-ant-test-readme-0123456789"


def run(
    block: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    script = cwd / "example.py"
    script.write_text(block, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
    )


def test_the_readme_has_the_quick_start() -> None:
    assert len(OFFLINE) >= 3, "the offline tool agent, steering/follow-up and sessions"
    assert len(ONLINE) >= 1, "the same agent on a real provider"
    assert any("register_faux_provider" in block and "AgentTool(" in block for block in OFFLINE)
    assert any("steer(" in block and "follow_up(" in block for block in OFFLINE)
    assert any("export_jsonl" in block and "import_jsonl" in block for block in OFFLINE)


@pytest.mark.parametrize("index", range(len(OFFLINE)))
def test_offline_block_runs(index: int, tmp_path: Path) -> None:
    done = run(OFFLINE[index], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "every block prints what it did"
    assert "Traceback" not in done.stderr


def test_tool_block_runs_the_tool(tmp_path: Path) -> None:
    block = next(b for b in OFFLINE if "AgentTool(" in b)
    done = run(block, tmp_path)
    assert "tool_execution_end" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "Paris is sunny today."


def test_steering_block_delivers_both_queues(tmp_path: Path) -> None:
    block = next(b for b in OFFLINE if "steer(" in b)
    lines = run(block, tmp_path).stdout.splitlines()
    assert lines == [
        "user: Tell me a story.",
        "assistant: Here is a long story about dragons...",
        "user: Make it shorter.",
        "assistant: Fine, a short one: the dragon slept.",
        "user: Thanks!",
        "assistant: You're welcome!",
    ]


def test_session_block_writes_a_file_pi_reads(tmp_path: Path, reference_install: Path) -> None:
    block = next(b for b in OFFLINE if "export_jsonl" in b)
    done = run(block, tmp_path)
    assert done.stdout.strip() == "You said hello."
    saved = tmp_path / "chat.jsonl"
    script = ROOT / "tests" / "session" / "pi_reference_check.mjs"
    read = subprocess.run(["node", str(script), str(saved)], capture_output=True, text=True, timeout=60, check=False)
    assert read.returncode == 0, read.stderr
    seen = json.loads(read.stdout)
    context = seen["contexts"][seen["leafId"]]
    assert [m["role"] for m in context["messages"]] == ["user", "assistant"]
    assert context["messages"][1]["content"][0]["text"] == "Hello! I'm listening."


@pytest.mark.parametrize("index", range(len(ONLINE)))
def test_provider_block_streams_from_the_provider(index: int, tmp_path: Path) -> None:
    with MockProviderServer() as server:
        server.script([{"text": "Because air scatters blue light more than red light.", "chunk_size": 5}])
        env = {"ANTHROPIC_BASE_URL": server.base_url("anthropic-messages"), "ANTHROPIC_API_KEY": KEY}
        done = run(ONLINE[index], tmp_path, env)
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert "Because air scatters blue light more than red light." in done.stdout
    assert len(requests) == 1
    assert requests[0]["headers"]["x-api-key"] == KEY
    assert requests[0]["body"]["stream"] is True


def test_provider_block_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    block = ONLINE[0]
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    with MockProviderServer() as server:
        server.script([{"text": "word " * 400, "chunk_size": 5, "delay_ms": 20}])
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "ANTHROPIC_BASE_URL": server.base_url("anthropic-messages"),
            "ANTHROPIC_API_KEY": KEY,
        }
        process = subprocess.Popen(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        first = process.stdout.read(5)  # the reply is streaming
        assert first.startswith("word")
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        closed = server.wait_closed(0, timeout=10)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert "[aborted]" in out
    assert closed, "the connection to the provider was closed"


def test_compaction_block_compacts_the_saved_file(tmp_path: Path, reference_install: Path) -> None:
    block = next(b for b in ONLINE if "compact_session" in b)
    with MockProviderServer() as server:
        server.script([{"text": "## Goal\nQuestion 1 was answered."}])
        env = {"ANTHROPIC_BASE_URL": server.base_url("anthropic-messages"), "ANTHROPIC_API_KEY": KEY}
        done = run(block, tmp_path, env)
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert "Question 1 was answered." in done.stdout
    prompt = requests[0]["body"]["messages"][0]["content"][0]["text"]
    assert "[User]: Question 1:" in prompt and "Question 2" not in prompt
    # pi's own reader sees the summary first, then the kept messages (from Question 2 on).
    script = ROOT / "tests" / "session" / "pi_reference_check.mjs"
    saved = tmp_path / "long-chat.jsonl"
    read = subprocess.run(["node", str(script), str(saved)], capture_output=True, text=True, timeout=60, check=False)
    assert read.returncode == 0, read.stderr
    seen = json.loads(read.stdout)
    messages = seen["contexts"][seen["leafId"]]["messages"]
    assert messages[0]["role"] == "compactionSummary" and "Question 1 was answered." in messages[0]["summary"]
    assert messages[1]["content"].startswith("Question 2:") and len(messages) == 7


def test_mcp_block_calls_the_servers_tool(tmp_path: Path) -> None:
    assert len(MCP) == 1
    with McpTestServer() as server:
        done = run(MCP[0], tmp_path, {"MCP_URL": server.url})
        seen = list(server.seen)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("tools: mcp__tools__add, mcp__tools__pixel, mcp__tools__weather")
    assert lines[1:] == ["add returned: 5", "2 + 3 = 5"]
    assert "tools/call" in seen
