"""The one boundary for loose input: a value that may be a mapping or an object, with pi's camelCase
names or the port's snake_case ones.

Hooks, tools, configs and messages may come from user code as plain dicts in pi's JSON shape
(``{"stopReason": "error"}``), as dicts with Python names, or as objects (pydantic models, slotted
events, any object with attributes). Every layer reads such input through :func:`get_field`, so they all
agree on which name wins.

The rule: the snake_case name is looked up first, then the camelCase one; the first that is present
with a value other than ``None`` wins, and ``None`` is returned when neither is. For a mapping the
names are keys, for anything else attributes. (A value present under both names with different
non-``None`` values is contradictory input: the snake_case one wins, as it is the port's own name.)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

__all__ = ["camel_to_snake", "get_field", "snake_to_camel"]


@functools.lru_cache(maxsize=512)
def snake_to_camel(name: str) -> str:
    """``"stop_reason"`` -> ``"stopReason"`` (names without ``_`` are returned unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.lru_cache(maxsize=512)
def camel_to_snake(name: str) -> str:
    """``"stopReason"`` -> ``"stop_reason"``."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in name)


def get_field(source: Any, name: str, camel: str | None = None) -> Any:
    """``source``'s value for the snake_case ``name`` (or its camelCase form), by the rule above.

    ``camel`` overrides the derived camelCase name (for names whose pi spelling is not a plain
    conversion); ``source`` may be ``None`` (the result is then ``None``)."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        value = source.get(name)
        if value is None and (camel is not None or "_" in name):
            value = source.get(camel or snake_to_camel(name))
        return value
    value = getattr(source, name, None)
    if value is None and (camel is not None or "_" in name):
        value = getattr(source, camel or snake_to_camel(name), None)
    return value
