"""Parity with pi's reference agent core, run in Node on the same scripted conversations.

Every scenario in ``tests/reference/scenarios/*.json`` is run once by ``run_reference.mjs`` (the
real ``@earendil-works/pi-agent-core@0.79.10`` ``Agent`` with pi-ai's faux provider, all scenarios
in one Node process) and once by ``run_python.py`` (py_agent, one Python process). Both print a
normalized trace per scenario (events with the agent state seen at each, hook calls, the contexts
the provider received, the final state); the traces must be equal.

Scenarios with ``expected_python_difference`` cover the port's documented decisions
(``docs/port-decisions.md``, ``docs/deviations.md``): there the Python side is checked against the decision instead.

Node and npm are required (CI installs them); ``tests/reference/node_modules`` is installed with
``npm ci`` when missing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO / "tests" / "reference"
SCENARIO_DIR = REFERENCE_DIR / "scenarios"
RUN_TIMEOUT_S = 240


def _load_scenarios() -> list[dict[str, Any]]:
    scenarios: list[dict[str, Any]] = []
    for file in sorted(SCENARIO_DIR.glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        scenarios.extend(data if isinstance(data, list) else [data])
    return scenarios


SCENARIOS = _load_scenarios()


# ---------------------------------------------------------------------------------------------
# Fixtures: the reference install and the two runs


def _parse_output(label: str, completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    if completed.returncode != 0:
        pytest.fail(f"the {label} runner failed ({completed.returncode}):\n{completed.stderr[-4000:]}", pytrace=False)
    try:
        data: dict[str, Any] = json.loads(completed.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"the {label} runner printed no JSON:\n{completed.stdout[-2000:]}\n{completed.stderr[-4000:]}",
            pytrace=False,
        )
    return data


@pytest.fixture(scope="session")
def traces(reference_install: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both runners, started together, each running every scenario in one process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    node = subprocess.Popen(
        ["node", str(REFERENCE_DIR / "run_reference.mjs"), str(SCENARIO_DIR)],
        cwd=REFERENCE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    python = subprocess.Popen(
        [sys.executable, str(REFERENCE_DIR / "run_python.py"), str(SCENARIO_DIR)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = []
    for label, process in (("Node reference", node), ("py_agent", python)):
        try:
            stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            pytest.fail(f"the {label} runner did not finish in {RUN_TIMEOUT_S} s:\n{stderr[-4000:]}", pytrace=False)
        results.append(
            _parse_output(label, subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
        )
    return results[0], results[1]


# ---------------------------------------------------------------------------------------------
# Readable differences


def _differences(
    a: Any, b: Any, path: str = "", out: list[str] | None = None, seen: set[str] | None = None, limit: int = 12
) -> list[str]:
    """Up to ``limit`` leaf differences as readable lines (a repeated difference is shown once)."""
    out = [] if out is None else out
    seen = set() if seen is None else seen
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in b:
                out.append(f"{path}.{key}: only in reference: {json.dumps(a[key])[:300]}")
            elif key not in a:
                out.append(f"{path}.{key}: only in py_agent: {json.dumps(b[key])[:300]}")
            else:
                _differences(a[key], b[key], f"{path}.{key}", out, seen, limit)
            if len(out) >= limit:
                break
    elif isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            _differences(x, y, f"{path}[{index}]", out, seen, limit)
            if len(out) >= limit:
                break
        if len(a) != len(b) and len(out) < limit:
            out.append(f"{path}: length {len(a)} in reference, {len(b)} in py_agent")
    elif a != b or (type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float))):
        key = json.dumps([a, b])
        if key in seen:
            out.append(f"{path}: the same difference as above")
            return out
        seen.add(key)
        if isinstance(a, str) and isinstance(b, str) and ("\n" in a or "\n" in b):
            lines = difflib.unified_diff(a.splitlines(), b.splitlines(), "reference", "py_agent", lineterm="", n=1)
            out.append(f"{path}: text differs:\n      " + "\n      ".join(list(lines)[2:]))
        else:
            out.append(f"{path}: reference {json.dumps(a)[:300]} != py_agent {json.dumps(b)[:300]}")
    return out


def _event_label(event: dict[str, Any]) -> str:
    if "type" not in event:
        kind = "action" if "action" in event else "trigger"
        return f"<{kind} {event.get(kind)}: {json.dumps(event.get('result'))}>"
    label = event["type"]
    message = event.get("message")
    if isinstance(message, dict) and "role" in message:
        label += f"({message['role']}"
        if message.get("stopReason") and event["type"] != "message_update":
            label += f" {message['stopReason']}"
        label += ")"
    if "toolCallId" in event:
        label += f"({event['toolCallId']})"
    if event["type"] == "message_update":
        label += f"[{event['assistantMessageEvent']['type']}]"
    return label


def _report(name: str, reference: Any, python: Any) -> str:
    lines = [f"scenario {name!r}: py_agent's trace differs from the reference.", "", "First differences:"]
    ref_list = reference.get("events", []) if isinstance(reference, dict) else []
    for line in _differences(reference, python):
        match = re.match(r"\.events\[(\d+)\]", line)
        if match and int(match.group(1)) < len(ref_list):
            line = f"{line[: match.end()]} <{_event_label(ref_list[int(match.group(1))])}>{line[match.end() :]}"
        lines.append(f"  {line}")
    ref_events = [_event_label(e) for e in reference.get("events", [])] if isinstance(reference, dict) else []
    py_events = [_event_label(e) for e in python.get("events", [])] if isinstance(python, dict) else []
    if ref_events != py_events:
        lines += ["", "Event sequence (- reference, + py_agent):"]
        lines += list(difflib.unified_diff(ref_events, py_events, "reference", "py_agent", lineterm="", n=2))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The documented decisions where py_agent deliberately differs from 0.79.10

TRUNCATED = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)
RESET_WHILE_RUNNING = "Agent is already processing. Wait for completion before resetting."


def _types(trace: dict[str, Any]) -> list[str]:
    """Event types in order (actions and triggers as placeholders, without their results)."""
    return [e.get("type") or ("<action>" if "action" in e else "<trigger>") for e in trace["events"]]


def _texts(result: dict[str, Any]) -> list[str]:
    return [block.get("text") for block in result["content"]]


def _check_length_tool_calls(scenario: dict[str, Any], reference: dict[str, Any], python: dict[str, Any]) -> None:
    """docs/port-decisions.md #4: tool calls of a `length` message get an error result instead of running."""
    events = python["events"]
    length_end = next(
        i for i, e in enumerate(events) if e.get("type") == "message_end" and e["message"].get("stopReason") == "length"
    )
    assert python["events"][: length_end + 1] == reference["events"][: length_end + 1], "events before the tools differ"
    calls = [b for b in events[length_end]["message"]["content"] if b["type"] == "toolCall"]
    assert calls, "the scenario's length message must contain tool calls"
    ends = {e["toolCallId"]: e for e in events if e.get("type") == "tool_execution_end"}
    ref_ends = {e["toolCallId"]: e for e in reference["events"] if e.get("type") == "tool_execution_end"}
    for call in calls:
        assert ends[call["id"]]["isError"] is True
        assert _texts(ends[call["id"]]["result"]) == [TRUNCATED.format(name=call["name"])]
        assert ends[call["id"]]["result"]["details"] == {}
        # The reference (0.79.10) still executes them; this is what the decision changes.
        assert call["id"] in ref_ends
    assert not [h for h in python["hooks"] if h["hook"] in ("beforeToolCall", "afterToolCall")], "hooks ran"
    results = [m for m in python["final"]["messages"] if m["role"] == "toolResult"]
    for call in calls:
        result = next(m for m in results if m["toolCallId"] == call["id"])
        assert result["isError"] is True
        assert _texts(result) == [TRUNCATED.format(name=call["name"])]
    # Not terminating: the loop asks the model again, as the reference does after running them.
    assert _types(python) == _types(reference)
    assert python["final"]["callCount"] == reference["final"]["callCount"]


def _check_reset_while_running(scenario: dict[str, Any], reference: dict[str, Any], python: dict[str, Any]) -> None:
    """docs/port-decisions.md #3: reset() raises while a run is active and changes nothing."""
    triggers = [e for e in python["events"] if "trigger" in e]
    assert triggers and triggers[0]["result"] == {"error": RESET_WHILE_RUNNING}
    ref_triggers = [e for e in reference["events"] if "trigger" in e]
    assert ref_triggers and ref_triggers[0]["result"].get("ok") is True  # 0.79.10 resets mid-run
    # Apart from the reset, the run is the one the reference runs.
    assert _types(python) == _types(reference)
    agent_end = [e for e in python["events"] if e.get("type") == "agent_end"][-1]
    assert [m["role"] for m in python["final"]["messages"]] == [m["role"] for m in agent_end["messages"]]
    assert python["final"]["isStreaming"] is False
    for event in python["events"]:
        if "state" in event:
            assert event["state"]["isStreaming"] is True


def _check_empty_error_text(scenario: dict[str, Any], reference: dict[str, Any], python: dict[str, Any]) -> None:
    """docs/port-decisions.md #7: an exception with an empty text is reported by its class name."""
    ref_ends = [e for e in reference["events"] if e.get("type") == "tool_execution_end" and e["isError"]]
    py_ends = [e for e in python["events"] if e.get("type") == "tool_execution_end" and e["isError"]]
    assert [_texts(e["result"]) for e in ref_ends] == [[""]] * len(ref_ends)
    assert len(py_ends) == len(ref_ends) > 0
    for event in py_ends:
        assert _texts(event["result"]) == ["RuntimeError"]
    assert _types(python) == _types(reference)


def _merge_surrogates(text: str) -> str:
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _check_whole_code_points(scenario: dict[str, Any], reference: dict[str, Any], python: dict[str, Any]) -> None:
    """pi cuts deltas inside surrogate pairs; py_agent moves such a cut after the pair. Same number
    of deltas, the same text once joined, no lone surrogate in any delta, and identical final state."""

    def deltas(trace: dict[str, Any]) -> list[str]:
        return [
            e["assistantMessageEvent"]["delta"]
            for e in trace["events"]
            if e.get("type") == "message_update" and "delta" in e.get("assistantMessageEvent", {})
        ]

    ours, theirs = deltas(python), deltas(reference)
    assert len(ours) == len(theirs)
    assert "".join(ours) == _merge_surrogates("".join(theirs))
    assert all(not any(0xD800 <= ord(ch) <= 0xDFFF for ch in delta) for delta in ours)
    assert python["final"] == reference["final"]


DECISION_CHECKS: dict[str, Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], None]] = {
    "whole_code_points": _check_whole_code_points,
    "length_tool_calls": _check_length_tool_calls,
    "reset_while_running": _check_reset_while_running,
    "empty_error_text": _check_empty_error_text,
}


# ---------------------------------------------------------------------------------------------


def test_scenarios_are_well_formed() -> None:
    names = [s["name"] for s in SCENARIOS]
    assert len(names) == len(set(names)), "duplicate scenario names"
    assert len(SCENARIOS) >= 40
    for scenario in SCENARIOS:
        difference = scenario.get("expected_python_difference")
        if difference is not None:
            assert difference["decision"] in DECISION_CHECKS, scenario["name"]
            assert difference.get("note"), scenario["name"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_reference_parity(scenario: dict[str, Any], traces: tuple[dict[str, Any], dict[str, Any]]) -> None:
    reference_all, python_all = traces
    name = scenario["name"]
    reference = reference_all.get(name)
    python = python_all.get(name)
    assert reference is not None, f"the reference runner produced no trace for {name!r}"
    assert python is not None, f"the py_agent runner produced no trace for {name!r}"
    assert "runnerError" not in reference, f"the reference run failed: {reference['runnerError']}"
    assert "runnerError" not in python, f"the py_agent run failed: {python['runnerError']}"
    difference = scenario.get("expected_python_difference")
    if difference is not None:
        DECISION_CHECKS[difference["decision"]](scenario, reference, python)
        return
    if reference != python:
        pytest.fail(_report(name, reference, python), pytrace=False)


def test_generated_scenarios_are_current() -> None:
    """The generated scenario files are what ``generate_scenarios.py`` writes for its seeds."""
    completed = subprocess.run(
        [sys.executable, str(REFERENCE_DIR / "generate_scenarios.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert any(s["name"].startswith("generated_batch_") for s in SCENARIOS)
