"""Sessions for the compaction parity tests (test_compaction_parity.py): hand-written ones for the
cases that matter (a split turn, an earlier compaction, a cut over non-message entries, ...) and
generated ones (seeded, so a failure names its seed) with tool calls, images, branches, bash
executions, custom messages, branch summaries and earlier compactions.

A case is plain JSON, read the same way by Node (tests/reference/run_compaction.mjs) and Python.
"""

from __future__ import annotations

import random
from typing import Any

from session_helpers import Clock, CountingIds

from py_agent.session import Entry, MessageEntry, Session

API = "compaction-test"
TOOL_NAMES = ("read", "write", "edit", "bash", "grep")
WORDS = ("alpha", "beta", "gamma", "δέλτα", "ε", "😀", "naïve", "path/to/file.py", "line\nbreak", '"quoted"', "tab\t")
PATHS = ("src/a.py", "src/b.py", "README.md", "docs/ü.md", "😀.txt", "z.txt", "Z.txt", "\uffff.txt")


def _text(rng: random.Random, low: int, high: int) -> str:
    words: list[str] = []
    size = 0
    target = rng.randint(low, high)
    while size < target:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def _image(rng: random.Random) -> dict[str, Any]:
    return {"type": "image", "data": "iVBORw0KGgo" * rng.randint(1, 3), "mimeType": "image/png"}


def _usage(rng: random.Random) -> dict[str, Any]:
    parts = [rng.randint(0, 40_000), rng.randint(0, 2_000), rng.randint(0, 10_000), rng.randint(0, 500)]
    total = sum(parts) if rng.random() < 0.8 else 0
    cost = {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}
    return {
        "input": parts[0],
        "output": parts[1],
        "cacheRead": parts[2],
        "cacheWrite": parts[3],
        "totalTokens": total,
        "cost": cost,
    }


def _assistant(content: list[Any], stop: str, rng: random.Random, ts: int) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": "test",
        "model": rng.choice(("m1", "m2")),
        "usage": _usage(rng),
        "stopReason": stop,
        "timestamp": ts,
    }
    if stop in ("error", "aborted"):
        message["errorMessage"] = "prompt is too long" if stop == "error" else "aborted"
    return message


def _arguments(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if rng.random() < 0.85:
        args["path"] = rng.choice(PATHS)
    if rng.random() < 0.5:
        args["content"] = _text(rng, 10, 600)
    if rng.random() < 0.2:
        args["2"] = "numeric key"
        args["10"] = [1, 2.5, None, True]
    if rng.random() < 0.3:
        args["options"] = {"limit": rng.randint(1, 100), "ratio": 0.1 + rng.random(), "1": "x", "tiny": 1e-7}
    return args


def _turn(session: Session, rng: random.Random, clock: list[int]) -> None:
    def ts() -> int:
        clock[0] += 1000
        return clock[0]

    content: Any
    if rng.random() < 0.3:
        content = _text(rng, 5, 1500)
    else:
        content = [{"type": "text", "text": _text(rng, 0, 1500)}]
        if rng.random() < 0.25:
            content.append(_image(rng))
        if rng.random() < 0.1:
            content.append({"type": "text", "text": ""})
    session.append_message({"role": "user", "content": content, "timestamp": ts()})
    for _ in range(rng.choice((0, 0, 1, 2, 3, 5))):
        blocks: list[Any] = []
        if rng.random() < 0.4:
            blocks.append({"type": "thinking", "thinking": _text(rng, 10, 800)})
        if rng.random() < 0.5:
            blocks.append({"type": "text", "text": _text(rng, 1, 300)})
        calls = []
        for _call in range(rng.choice((1, 1, 2, 3))):
            call_id = f"call_{rng.getrandbits(32):08x}"
            name = rng.choice(TOOL_NAMES)
            blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": _arguments(rng)})
            calls.append((call_id, name))
        session.append_message(_assistant(blocks, "toolUse", rng, ts()))
        for call_id, name in calls:
            result: list[Any] = [{"type": "text", "text": _text(rng, 0, 4500)}]
            if rng.random() < 0.15:
                result.append(_image(rng))
            if rng.random() < 0.1:
                # a surrogate pair across the 2,000-character cut of serialized tool results
                result = [{"type": "text", "text": "r" * 1999 + "😀" + _text(rng, 10, 50)}]
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": result,
                    "isError": rng.random() < 0.1,
                    "timestamp": ts(),
                }
            )
    stop = rng.choices(("stop", "length", "error", "aborted"), (20, 2, 2, 2))[0]
    final: list[Any] = [{"type": "text", "text": _text(rng, 1, 2500)}]
    if rng.random() < 0.3:
        final.insert(0, {"type": "thinking", "thinking": _text(rng, 1, 400)})
    session.append_message(_assistant(final, stop, rng, ts()))


def _extra(session: Session, rng: random.Random, clock: list[int]) -> None:
    """One of the other entries a session may hold."""
    kind = rng.randrange(9)
    path = session.path()
    if kind == 0:
        session.append_model_change("test", rng.choice(("m1", "m2")))
    elif kind == 1:
        session.append_thinking_level_change(rng.choice(("off", "low", "high")))
    elif kind == 2:
        content: Any = _text(rng, 5, 300) if rng.random() < 0.5 else [{"type": "text", "text": _text(rng, 5, 300)}]
        session.append_custom_message("note", content, display=rng.random() < 0.5)
    elif kind == 3:
        session.append_custom("state", {"n": rng.randint(0, 9)})
    elif kind == 4 and path:
        session.append_label(rng.choice(path).id, "mark")
    elif kind == 5:
        clock[0] += 1000
        output = _text(rng, 0, 800) if rng.random() < 0.8 else ""
        session.append_message(
            {
                "role": "bashExecution",
                "command": "ls -la",
                "output": output,
                "exitCode": rng.choice((0, 1, None)),
                "cancelled": False,
                "truncated": False,
                "timestamp": clock[0],
            }
        )
    elif kind == 6:
        clock[0] += 1000
        session.append_message({"role": "artifact", "filename": "x.md", "timestamp": clock[0]})
    elif kind == 7 and len(path) > 3:
        kept = rng.choice(path[len(path) // 2 :])
        details: Any = {"readFiles": rng.sample(PATHS, 2), "modifiedFiles": rng.sample(PATHS, 1)}
        session.append_compaction(
            "Earlier summary: " + _text(rng, 20, 400),
            kept.id if rng.random() < 0.9 else "missing1",
            rng.randint(1000, 90_000),
            details=details,
            from_hook=rng.random() < 0.2 or None,
        )
    elif kind == 8 and len(path) > 2:
        back = rng.choice(path[:-1])
        details = {"readFiles": rng.sample(PATHS, 1), "modifiedFiles": []}
        session.branch_with_summary(back.id, "Branch summary: " + _text(rng, 10, 300), details=details)


def generated_session(seed: int) -> Session:
    rng = random.Random(seed)
    session = Session.create(session_id=f"gen-{seed}", clock=Clock(), id_generator=CountingIds())
    clock = [1_764_000_000_000]
    for _ in range(rng.randint(2, 22)):
        _turn(session, rng, clock)
        while rng.random() < 0.35:
            _extra(session, rng, clock)
        if rng.random() < 0.12:
            users = [e for e in session.path() if isinstance(e, MessageEntry) and e.message.get("role") == "user"]
            session.branch_before(rng.choice(users).id)
    return session


def _model(rng: random.Random) -> dict[str, Any]:
    return {
        "id": "m1",
        "name": "Test model",
        "api": API,
        "provider": "test",
        "baseUrl": "http://127.0.0.1:9",
        "reasoning": rng.random() < 0.5,
        "input": ["text", "image"],
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": rng.choice((0, 8_000, 32_000, 128_000)),
        "maxTokens": rng.choice((0, 1000, 8192, 64_000)),
    }


def case_json(name: str, session: Session, rng: random.Random, **overrides: Any) -> dict[str, Any]:
    """A parity case: the session's entries, a leaf, settings, a model and what the fake provider answers."""
    entries: list[Entry] = session.entries
    leaves = [entry.id for entry in session.leaves()]
    case: dict[str, Any] = {
        "name": name,
        "entries": [entry.to_json() for entry in entries],
        "leafId": session.leaf_id,
        "settings": {
            "enabled": True,
            "reserveTokens": rng.choice((16384, 2000, 500)),
            "keepRecentTokens": rng.choice((20000, 5000, 1500, 300, 50)),
        },
        "keepRecent": [1, 100, 1000, 5000, 20000],
        "windows": [1000, 20_000, 50_000, 200_000],
        "model": _model(rng),
        "apiKey": rng.choice((None, "sk-test")),
        "headers": rng.choice((None, {"x-test": "1"})),
        "customInstructions": rng.choice((None, None, "focus on the file paths")),
        "thinkingLevel": rng.choice((None, "off", "high")),
        "reply": rng.choices(("stop", "error", "aborted"), (8, 1, 1))[0],
        "branchTarget": rng.choice([entry.id for entry in entries]) if entries else None,
        "branchLeaf": rng.choice(leaves) if leaves else None,
        "branchInstructions": rng.choice((None, "what failed", "REPLACE: only list files")),
    }
    case.update(overrides)
    return case


def generated_names(count: int, first_seed: int = 1000) -> list[str]:
    """The names of ``generated_cases(count, first_seed)``, without generating them (test ids)."""
    return [f"generated-{seed}" for seed in range(first_seed, first_seed + count)]


def generated_cases(count: int, first_seed: int = 1000) -> list[dict[str, Any]]:
    return [
        case_json(name, generated_session(seed), random.Random(seed * 7 + 1))
        for seed, name in zip(range(first_seed, first_seed + count), generated_names(count, first_seed), strict=True)
    ]


# ---------------------------------------------------------------------------------------------
# Hand-written sessions


def _hand_session(name: str) -> tuple[Session, list[int]]:
    return Session.create(session_id=name, clock=Clock(), id_generator=CountingIds()), [1_764_000_000_000]


def _user(session: Session, clock: list[int], text: str) -> None:
    clock[0] += 1000
    session.append_message({"role": "user", "content": text, "timestamp": clock[0]})


def _call_and_result(session: Session, clock: list[int], name: str, path: str, result: str) -> None:
    rng = random.Random(clock[0])
    clock[0] += 1000
    call = {"type": "toolCall", "id": f"c{clock[0]}", "name": name, "arguments": {"path": path}}
    session.append_message(_assistant([call], "toolUse", rng, clock[0]))
    clock[0] += 1000
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": f"c{clock[0] - 1000}",
            "toolName": name,
            "content": [{"type": "text", "text": result}],
            "isError": False,
            "timestamp": clock[0],
        }
    )


def _reply(session: Session, clock: list[int], text: str) -> None:
    clock[0] += 1000
    session.append_message(_assistant([{"type": "text", "text": text}], "stop", random.Random(clock[0]), clock[0]))


def hand_written_cases() -> list[dict[str, Any]]:
    cases = []
    rng = random.Random(5)

    # A long single turn: the cut falls inside it (a split turn, two summary requests).
    session, clock = _hand_session("split-turn")
    _user(session, clock, "Refactor the parser. " * 20)
    for index in range(12):
        _call_and_result(session, clock, ("read", "edit", "write")[index % 3], f"src/m{index % 4}.py", "x" * 3000)
    _reply(session, clock, "Done refactoring.")
    cases.append(
        case_json(
            "split-turn", session, rng, settings={"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 2000}
        )
    )

    # Several short turns: the cut falls at a user message (no split).
    session, clock = _hand_session("between-turns")
    for index in range(8):
        _user(session, clock, f"Question {index}: " + "why " * 600)
        _reply(session, clock, "Because " * 100)
    between = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 700}
    cases.append(case_json("between-turns", session, rng, settings=between))
    settings = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 1000}

    # An earlier compaction: its summary is updated, its files carried over.
    session, clock = _hand_session("iterative")
    for index in range(4):
        _user(session, clock, f"Step {index} " + "work " * 300)
        _call_and_result(session, clock, "read", f"lib/{index}.py", "y" * 2500)
        _reply(session, clock, "ok " * 200)
    path = session.path()
    session.append_compaction(
        "## Goal\nEarlier work.", path[6].id, 12345, details={"readFiles": ["old.py"], "modifiedFiles": ["lib/0.py"]}
    )
    for index in range(4, 8):
        _user(session, clock, f"Step {index} " + "work " * 300)
        _call_and_result(session, clock, "edit", f"lib/{index}.py", "z" * 2500)
        _reply(session, clock, "ok " * 200)
    cases.append(case_json("iterative", session, rng, settings=settings, customInstructions="focus on X"))

    # A compaction from a hook: its details are not carried over.
    session, clock = _hand_session("from-hook")
    for index in range(3):
        _user(session, clock, "work " * 400)
        _call_and_result(session, clock, "write", f"out/{index}.txt", "w" * 100)
    session.append_compaction(
        "hook summary", session.path()[2].id, 99, details={"readFiles": ["h.py"], "modifiedFiles": []}, from_hook=True
    )
    _user(session, clock, "more " * 500)
    _reply(session, clock, "fine " * 500)
    cases.append(case_json("from-hook", session, rng, settings=settings))

    # Non-message entries just before the cut are kept with it.
    session, clock = _hand_session("settings-before-cut")
    for index in range(5):
        _user(session, clock, "talk " * 400)
        _reply(session, clock, "reply " * 400)
        session.append_model_change("test", f"m{index}")
        session.append_thinking_level_change("high")
        session.append_label(session.path()[0].id, f"l{index}")
    cases.append(case_json("settings-before-cut", session, rng, settings=settings))

    # Nothing but settings: nothing to compact.
    session, clock = _hand_session("no-messages")
    session.append_model_change("test", "m1")
    session.append_thinking_level_change("low")
    cases.append(case_json("no-messages", session, rng))

    # The path ends with a compaction: already compacted.
    session, clock = _hand_session("already-compacted")
    _user(session, clock, "hello")
    _reply(session, clock, "hi")
    session.append_compaction("s", session.path()[0].id, 10)
    cases.append(case_json("already-compacted", session, rng))

    # A failing summary request.
    session, clock = _hand_session("failing")
    for _ in range(4):
        _user(session, clock, "long " * 600)
        _reply(session, clock, "answer " * 600)
    cases.append(case_json("failing", session, rng, settings=settings, reply="error"))
    for case in cases:
        if case["name"] != "failing":
            case["reply"] = "stop"
    return cases
