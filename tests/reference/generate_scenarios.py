"""Writes the generated parity scenarios (seeded, so the files are reproducible).

    python tests/reference/generate_scenarios.py          # rewrite the files
    python tests/reference/generate_scenarios.py --check  # exit 1 when a file is out of date

``scenarios/90_generated_batches.json``: parallel tool batches of ``step`` and ``sync_step`` tools
with synchronous updates, waits with later updates, errors, ``terminate``, blocked and missing
tools and invalid arguments, hooks, and aborts from listeners at a start, update or end of the
batch. Waits in one batch are distinct multiples of 40 ms, so their order is the timers' order.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BATCHES_FILE = HERE / "scenarios" / "90_generated_batches.json"
BATCH_SEED = 14
BATCH_COUNT = 48
WAIT_STEP_MS = 40


def _batch_call(rng: random.Random, index: int, wait_ms: int, all_terminate: bool) -> dict[str, Any]:
    name = rng.choice(["step", "step", "sync_step"])
    args: dict[str, Any] = {"id": f"t{index}"}
    if rng.random() < 0.5:
        args["updates"] = rng.randint(1, 2)
    if name == "step" and rng.random() < 0.55:
        args["ms"] = wait_ms
        if rng.random() < 0.5:
            args["after"] = 1
    if rng.random() < 0.2:
        args["fail"] = True
    if all_terminate or rng.random() < 0.3:
        args["terminate"] = True
    special = rng.random()
    if special < 0.05:
        name = "no_such_tool"
    elif special < 0.1:
        args = {"updates": "many"}  # no id, and not an integer: refused by validation
    return {"type": "toolCall", "id": f"call-{index}", "name": name, "arguments": args}


def batch_scenarios(seed: int = BATCH_SEED, count: int = BATCH_COUNT) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    scenarios = []
    for number in range(1, count + 1):
        size = rng.randint(2, 5)
        waits = [WAIT_STEP_MS * k for k in rng.sample(range(1, 7), size)]
        all_terminate = rng.random() < 0.25
        calls = [_batch_call(rng, i, waits[i - 1], all_terminate) for i in range(1, size + 1)]
        scenario: dict[str, Any] = {
            "name": f"generated_batch_{number:02d}",
            "description": f"Generated parallel batch (seed {seed}, case {number}).",
            "state": {"tools": ["step", "sync_step"]},
            "responses": [{"content": calls, "stopReason": "toolUse"}, {"content": "done"}],
            "actions": [{"prompt": "run the batch"}],
        }
        hooks: dict[str, Any] = {}
        if rng.random() < 0.2:
            hooks["beforeToolCall"] = [{"tool": "sync_step", "block": True, "reason": "sync steps are blocked"}]
        if rng.random() < 0.25:
            override: dict[str, Any] = rng.choice(
                [{"terminate": True}, {"isError": True}, {"content": [{"type": "text", "text": "overridden"}]}]
            )
            hooks["afterToolCall"] = [{"tool": rng.choice(["step", "sync_step"]), "override": override}]
        if hooks:
            scenario["options"] = {"hooks": hooks}
        if rng.random() < 0.35:
            call = rng.choice(calls)
            event = rng.choice(["tool_execution_start", "tool_execution_update", "tool_execution_end"])
            if event == "tool_execution_update" and not call["arguments"].get("updates"):
                event = "tool_execution_end"
            scenario["triggers"] = [{"on": event, "where": {"toolCallId": call["id"]}, "do": {"abort": True}}]
            if event != "tool_execution_end":
                # Tools that start after the abort would find their wait over at once; next to update
                # events that races in microtask turns (docs/deviations.md), so they do not wait.
                later = calls if event == "tool_execution_start" else calls[calls.index(call) + 1 :]
                for other in later:
                    other["arguments"].pop("ms", None)
                    other["arguments"].pop("after", None)
        scenarios.append(scenario)
    return scenarios


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1) + "\n"


FILES = {BATCHES_FILE: batch_scenarios}


def main(argv: list[str]) -> int:
    stale = []
    for path, make in FILES.items():
        text = _dump(make())
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)} (run tests/reference/generate_scenarios.py)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
