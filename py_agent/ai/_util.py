"""Small helpers shared by the pure layers."""

from __future__ import annotations

import inspect
import json
from typing import Any, TypeVar

T = TypeVar("T")


async def maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable (hooks may be sync or async, as in pi)."""
    if inspect.isawaitable(value):
        return await value
    return value


def error_text(error: BaseException | object) -> str:
    """An exception's message; its class name when the message is empty (decision 7)."""
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    return str(error)


def _js_numbers(value: Any) -> Any:
    # JSON.stringify writes 1.0 as 1; keep lengths (and so token estimates) identical to pi's.
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(item) for item in value]
    return value


def json_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value)`` (or with ``indent``) as JavaScript writes it."""
    if indent is None:
        return json.dumps(_js_numbers(value), separators=(",", ":"), ensure_ascii=False, default=_default)
    return json.dumps(_js_numbers(value), indent=indent, ensure_ascii=False, default=_default)


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


_capacity_cache: dict[Any, int | None] = {}


def positional_capacity(function: Any) -> int | None:
    """How many positional arguments ``function`` takes (``None``: any number)."""
    try:
        return _capacity_cache[function]
    except (KeyError, TypeError):
        pass
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        capacity: int | None = None
    else:
        capacity = 0
        for parameter in parameters:
            if parameter.kind is parameter.VAR_POSITIONAL:
                capacity = None
                break
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                capacity += 1
    try:
        if len(_capacity_cache) > 1024:
            _capacity_cache.clear()
        _capacity_cache[function] = capacity
    except TypeError:
        pass
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
