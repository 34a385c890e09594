"""The page's commands: what ``py(name, args)`` in the page may call, and with which arguments.

A :class:`Command` is a name, a handler and its parameters; the parameters (snake_case names, JSON
types, required or not) come from the handler's signature, so the declaration cannot drift from
the code. The app's own commands are the table ``APP_COMMANDS`` at the end of
:mod:`py_agent.app.controller`; a plugin adds its own (:attr:`py_agent.app.plugin_contract.Plugin.commands`).
:class:`CommandTable` merges them and checks a call's arguments before it runs, so an unknown
command or argument comes back as a clear ``{"error": ...}``. ``tests/app/test_commands.py``
checks every ``py("name", {...})`` call of ``web/`` against the table.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Command", "CommandError", "CommandTable", "Param", "command", "method_command"]

_JSON_TYPES: dict[type, tuple[type, ...]] = {
    str: (str,),
    bool: (bool,),
    int: (int,),
    float: (int, float),
    dict: (dict,),
    list: (list,),
}


class CommandError(ValueError):
    """A call that does not match the table (unknown command, unknown or missing argument, wrong type)."""


@dataclass(frozen=True)
class Param:
    """One argument of a command: ``types`` are the JSON values it accepts (empty: any)."""

    name: str
    types: tuple[type, ...] = ()
    required: bool = True
    nullable: bool = False

    def check(self, command: str, value: Any) -> None:
        if value is None and (self.nullable or not self.types):
            return
        if not self.types:
            return
        ok = isinstance(value, self.types) and not (isinstance(value, bool) and bool not in self.types)
        if not ok:
            wanted = " or ".join(t.__name__ for t in self.types)
            raise CommandError(f"Argument {self.name!r} of {command!r} must be {wanted}")


@dataclass(frozen=True)
class Command:
    """A page command: ``handler(**args)``, or ``handler(app, **args)`` when ``method`` (a WebApp method)."""

    name: str
    handler: Callable[..., Any]
    method: bool = False

    @functools.cached_property
    def params(self) -> tuple[Param, ...]:
        """Read from the handler's signature at first use, not when the command is declared: its
        type hints are evaluated then (Python 3.14 compiles each annotation's source), which took
        ~50 ms of the page's start for the plugins' commands, declared as the app starts."""
        return _params(self.handler, skip_first=self.method)

    def check(self, args: Mapping[str, Any]) -> None:
        known = {p.name: p for p in self.params}
        for key, value in args.items():
            param = known.get(key)
            if param is None:
                raise CommandError(f"Unknown argument {key!r} for command {self.name!r}")
            param.check(self.name, value)
        missing = [p.name for p in self.params if p.required and p.name not in args]
        if missing:
            raise CommandError(f"Command {self.name!r} needs the argument {missing[0]!r}")


def _param(name: str, parameter: inspect.Parameter, hint: Any) -> Param:
    required = parameter.default is inspect.Parameter.empty
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    members = typing.get_args(hint) if union else (hint,)
    nullable = type(None) in members
    accepted: list[type] = []
    for member in members:
        if member is type(None):
            continue
        if member is Any:
            return Param(name, (), required, True)
        base = typing.get_origin(member) or member
        accepted.extend(_JSON_TYPES.get(base, ()) if isinstance(base, type) else ())
        if isinstance(base, type) and base not in _JSON_TYPES:
            return Param(name, (), required, True)  # a type JSON cannot name: the handler checks it
    return Param(name, tuple(dict.fromkeys(accepted)), required, nullable)


def _params(handler: Callable[..., Any], skip_first: bool) -> tuple[Param, ...]:
    hints = typing.get_type_hints(handler)
    parameters = list(inspect.signature(handler).parameters.values())
    if skip_first:
        parameters = parameters[1:]
    result = []
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
            raise TypeError(f"{handler.__qualname__}: a command's parameters must be named")
        result.append(_param(parameter.name, parameter, hints.get(parameter.name, Any)))
    return tuple(result)


def _check_named(handler: Callable[..., Any]) -> None:
    # At declaration, as the parameters were read then: a cheap look at the code's flags.
    code = getattr(getattr(handler, "__func__", handler), "__code__", None)
    if code is not None and code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise TypeError(f"{handler.__qualname__}: a command's parameters must be named")


def command(name: str, handler: Callable[..., Any]) -> Command:
    """A plugin's command ``name``: ``handler(**args)``, its parameters read from its signature."""
    _check_named(handler)
    return Command(name, handler)


def method_command(name: str, method: Callable[..., Any]) -> Command:
    """One of the app's commands: an unbound method of the app, called with the app first."""
    _check_named(method)
    return Command(name, method, method=True)


class CommandTable:
    """The commands the page may call: the app's, then each plugin's (a name is declared once)."""

    def __init__(self, commands: Iterable[Command] = ()) -> None:
        self._commands: dict[str, Command] = {}
        self.add(commands)

    def add(self, commands: Iterable[Command]) -> None:
        new = list(commands)
        for item in new:
            if item.name in self._commands:
                raise ValueError(f"The command {item.name!r} is declared twice")
        for item in new:
            self._commands[item.name] = item

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def names(self) -> list[str]:
        return sorted(self._commands)

    def __contains__(self, name: object) -> bool:
        return name in self._commands

    def __iter__(self) -> typing.Iterator[Command]:
        return iter(self._commands.values())
