"""The page's commands: every ``py("name", {...})`` call in web/ names a declared command with
declared (snake_case) arguments, and the app checks a call's arguments before running it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from py_agent.app.commands import Command, CommandTable, command
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.plugins import default_plugins
from py_agent.app.storage import MemoryBackend

WEB = Path(__file__).resolve().parents[2] / "web"
# `py(name, args)` (web/ui/bridge.js) and app.js's `sendLike(name, args)`, which passes them to py().
CALL = re.compile(r"\b(?:py|sendLike)\(\s*([\"'])([^\"']*)\1")
KEY = re.compile(r"^(?:([A-Za-z_$][\w$]*)|\"([^\"]*)\"|'([^']*)')\s*(?::|$)")


def _skip_string(text: str, i: int) -> int:
    """The index after the string literal starting at ``text[i]``."""
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def object_keys(text: str, start: int) -> tuple[list[str], int]:
    """The top-level keys of the object literal at ``text[start] == "{"`` ("..." for a spread),
    and the index after it."""
    depth, i, segment, segments = 0, start, "", []
    while i < len(text):
        c = text[i]
        if c in "\"'`":
            end = _skip_string(text, i)
            segment += text[i:end] if depth == 1 else ""
            i = end
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if c in "{[(":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c in "}])":
            depth -= 1
            if depth == 0:
                segments.append(segment)
                break
        elif c == "," and depth == 1:
            segments.append(segment)
            segment = ""
            i += 1
            continue
        if depth == 1:
            segment += c
        i += 1
    keys = []
    for part in (s.strip() for s in segments):
        if not part:
            continue
        if part.startswith("..."):
            keys.append("...")
            continue
        match = KEY.match(part)
        keys.append(next(g for g in match.groups() if g is not None) if match else part)
    return keys, i + 1


def calls_in(text: str) -> list[tuple[str, list[str] | None, int]]:
    """``(command, argument keys or None when not an object literal, line)`` of each call."""
    found = []
    for match in CALL.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        rest = match.end()
        after = text[rest:].lstrip()
        keys: list[str] | None = []
        if after.startswith(","):
            args = after[1:].lstrip()
            keys = object_keys(args, 0)[0] if args.startswith("{") else None
        found.append((match.group(2), keys, line))
    return found


def violations(text: str, table: CommandTable, where: str = "") -> list[str]:
    problems = []
    for name, keys, line in calls_in(text):
        declared = table.get(name)
        if declared is None:
            problems.append(f"{where}:{line}: unknown command {name!r}")
            continue
        params = {p.name for p in declared.params}
        for key in keys or []:
            if key == "...":
                problems.append(f"{where}:{line}: {name}: spread arguments cannot be checked")
            elif key not in params:
                problems.append(f"{where}:{line}: {name}: {key!r} is not a parameter ({sorted(params)})")
    return problems


def app_table() -> CommandTable:
    return WebApp(MemoryBackend(), MemoryTabStore(), lambda _k, _p: None, plugins=default_plugins()).commands


def test_every_page_call_names_a_declared_command_and_parameters() -> None:
    table = app_table()
    files = sorted(p for p in WEB.rglob("*.js") if "vendor" not in p.parts)
    problems: list[str] = []
    count = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        count += len(calls_in(text))
        problems.extend(violations(text, table, str(path.relative_to(WEB))))
    assert problems == []
    assert count > 50  # the scan finds the page's calls (about 70 today)


def test_the_checker_reports_unknown_commands_and_camel_case_arguments() -> None:
    table = app_table()
    snippet = """
    await py("open_session", { id, readOnly: true });
    const r = await py("no_such_command");
    await py(
      "search_models",
      { query: `a ${b}`, nested: { entryId: 1 }, vision: f(1, 2) },
    );
    await py("agent_save", { markdown: "x, y: z", previous_name: null }); // fine
    await py("lock_state", { ...rest });
    """
    assert violations(snippet, table) == [
        ":2: open_session: 'readOnly' is not a parameter (['id', 'read_only', 'reload'])",
        ":3: unknown command 'no_such_command'",
        ":4: search_models: 'nested' is not a parameter (['query', 'reasoning', 'vision'])",
        ":9: lock_state: spread arguments cannot be checked",
    ]


async def call(app: WebApp, name: str, args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await app.dispatch(name, json.dumps(args)))
    return result


async def test_dispatch_checks_the_arguments_against_the_table() -> None:
    app = WebApp(MemoryBackend(), MemoryTabStore(), lambda _k, _p: None, demo_tokens_per_second=0, plugins=[])
    await app.start()
    assert await call(app, "cors_help", {"provider": "x"}) == {"error": "Unknown command: cors_help"}
    assert await call(app, "open_session", {"id": "x", "readOnly": True}) == {
        "error": "Unknown argument 'readOnly' for command 'open_session'"
    }
    assert await call(app, "rename_session", {"id": "x"}) == {
        "error": "Command 'rename_session' needs the argument 'name'"
    }
    assert await call(app, "answer", {"id": "q", "ok": "yes"}) == {"error": "Argument 'ok' of 'answer' must be bool"}
    assert await call(app, "open_session", {"id": "missing", "read_only": True}) == {"found": False}
    assert "sessions" in await call(app, "list_sessions", {})
    assert (await call(app, "init", [])) == {"error": "arguments must be a JSON object"}


def test_parameters_come_from_the_handler_signature() -> None:
    def handler(name: str, count: int = 1, ratio: float = 0.5, tags: list[str] | None = None, data: Any = None) -> None:
        return None

    declared = command("demo", handler)
    assert isinstance(declared, Command) and not declared.method
    assert [(p.name, p.types, p.required, p.nullable) for p in declared.params] == [
        ("name", (str,), True, False),
        ("count", (int,), False, False),
        ("ratio", (int, float), False, False),
        ("tags", (list,), False, True),
        ("data", (), False, True),
    ]
    declared.check({"name": "a", "count": 2, "ratio": 1, "tags": None, "data": {"x": 1}})
    for bad in ({"name": "a", "count": True}, {"name": 1}, {"count": 1}, {"name": "a", "other": 1}):
        try:
            declared.check(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")
    table = CommandTable([declared])
    try:
        table.add([command("demo", handler)])
    except ValueError as error:
        assert "declared twice" in str(error)
    else:
        raise AssertionError("a command declared twice was accepted")


def test_parameters_are_read_at_first_use_and_named_ones_only(monkeypatch: Any) -> None:
    import typing

    read: list[object] = []
    original = typing.get_type_hints

    def counting(obj: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(obj)
        return original(obj, *args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", counting)

    def handler(name: str, count: int = 1) -> None:
        return None

    declared = command("demo", handler)
    # Declaring it evaluates no annotation (the app's start declares the plugins' commands).
    assert read == []
    assert [p.name for p in declared.params] == ["name", "count"]
    assert [p.name for p in declared.params] == ["name", "count"]
    assert read == [handler]

    def loose(**options: Any) -> None:
        return None

    try:
        command("loose", loose)
    except TypeError as error:
        assert "must be named" in str(error)
    else:
        raise AssertionError("a command taking **options was declared")
