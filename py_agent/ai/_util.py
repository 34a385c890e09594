"""Small helpers shared by the pure layers."""

from __future__ import annotations

import inspect
import json
import re
import types
from typing import Any, TypeVar

T = TypeVar("T")

MAX_JSON_DEPTH = 512
"""Deepest JSON nesting parsed from the network (streamed tool arguments, SSE data, error bodies).
In Pyodide a few thousand levels exhaust the WebAssembly stack inside ``json.loads`` and kill the
page's interpreter (a fatal error, not a catchable ``RecursionError``), so deeper text is refused
before it is parsed. Session files (``py_agent.session._json``) and session values (``py_agent.session.messages``)
use the same limit."""

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?')
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when (possibly incomplete) JSON ``text`` nests deeper than ``limit`` (strings skipped).
    Linear time; free for ordinary text (fewer brackets than ``limit``)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _JSON_BRACKETS.finditer(_JSON_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        elif depth:
            depth -= 1
    return False


async def maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable (hooks may be sync or async, as in pi)."""
    if inspect.isawaitable(value):
        return await value
    return value


def error_text(error: BaseException | object) -> str:
    """An exception's message; its class name when the message is empty (docs/port-decisions.md #7)."""
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    return str(error)


def js_number(value: float | int) -> str:
    """``String(value)`` for a JSON number, as JavaScript writes it (``1e-7``, ``0.000025``, ``1e+21``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        value = float(value) if abs(value) >= 10**21 else value
        if isinstance(value, int):
            return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # Position of the decimal point relative to the first significant digit (ECMAScript's n).
    point = (0 if whole == "0" else len(whole)) + (int(exponent) if exponent else 0)
    if whole == "0":
        point -= len(fraction) - len(fraction.lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    power = point - 1
    exp = f"e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + exp


# Tuples: ``int | float`` in ``isinstance`` builds a union object at every value written.
_NUMBERS = (int, float)
_SEQUENCES = (list, tuple)


def _encode(value: Any, indent: str | None, depth: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, _NUMBERS):
        return js_number(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _encode(dump(), indent, depth)
    if isinstance(value, dict):
        items = [(json.dumps(str(key), ensure_ascii=False), item) for key, item in value.items()]
        if not items:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{key}:{_encode(item, None, 0)}" for key, item in items) + "}"
        inner, outer = indent * (depth + 1), indent * depth
        body = ",\n".join(f"{inner}{key}: {_encode(item, indent, depth + 1)}" for key, item in items)
        return "{\n" + body + "\n" + outer + "}"
    if isinstance(value, _SEQUENCES):
        if not value:
            return "[]"
        if indent is None:
            return "[" + ",".join(_encode(item, None, 0) for item in value) + "]"
        inner, outer = indent * (depth + 1), indent * depth
        return "[\n" + ",\n".join(inner + _encode(item, indent, depth + 1) for item in value) + "\n" + outer + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# Integers json.dumps writes as JavaScript does (from 1e21 JavaScript writes an exponent).
_PLAIN_INT = 10**21


def _plain(value: Any) -> bool:
    """Whether json.dumps writes ``value`` as JSON.stringify does: only str keys, strings, ints below
    1e21, booleans, None, lists and dicts (no floats: Python writes ``1.0``, JavaScript ``1``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is int:
            if -_PLAIN_INT < item < _PLAIN_INT:
                continue
            return False
        if kind is dict:
            if not all(type(key) is str for key in item):
                return False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        else:
            return False
    return True


def json_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value)`` (or ``JSON.stringify(value, null, indent)``) as JavaScript writes it,
    numbers included; pi's token estimates and error texts depend on the exact characters."""
    if indent is None and _plain(value):
        # The same characters from the C encoder: a long session's request body without a Python
        # call per value (bench/first_token.py).
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _encode(value, None if indent is None else " " * indent, 0)


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


# Keyed by plain functions only (a bound method's ``__func__``): a bound method as a key would keep
# its object alive (a closed chat session with its whole transcript, for instance).
_capacity_cache: dict[Any, int | None] = {}


def positional_capacity(function: Any) -> int | None:
    """How many positional arguments ``function`` takes (``None``: any number)."""
    bound = isinstance(function, types.MethodType)
    key = function.__func__ if bound else function
    if isinstance(key, types.FunctionType):
        try:
            capacity = _capacity_cache[key]
        except KeyError:
            capacity = _capacity_cache[key] = _count_positional(key)
            if len(_capacity_cache) > 1024:
                _capacity_cache.clear()
        # The bound object fills the first parameter.
        return capacity - 1 if bound and capacity else capacity
    return _count_positional(function)


def _count_positional(function: Any) -> int | None:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    capacity = 0
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL:
            return None
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            capacity += 1
    return capacity


def call_flex(function: Any, *args: Any) -> Any:
    """Call ``function`` with as many of ``args`` as it accepts.

    JavaScript callbacks may ignore trailing arguments (a listener taking only the event, a tool
    whose ``execute`` takes no signal); Python callbacks written the same way should work too.
    """
    capacity = positional_capacity(function)
    if capacity is not None and capacity < len(args):
        return function(*args[:capacity])
    return function(*args)
