"""JSON as JavaScript reads and writes it: ``JSON.parse`` and ``JSON.stringify``, byte for byte.

pi writes each session line with ``JSON.stringify``. To export lines pi would have written, numbers
use JavaScript's formatting (``1`` not ``1.0``, ``0.00001`` not ``1e-05``, ``1e-7`` not ``1e-07``),
non-finite numbers become ``null``, lone surrogates are escaped, and other characters are written
as they are (no ``\\uXXXX`` for non-ASCII, U+2028 included). Parsing refuses what ``JSON.parse``
refuses (``NaN``, ``Infinity``). As in JavaScript, an integer literal beyond 2**53 reads as a float.

Known difference: JavaScript objects list integer-like keys ("2", "10") first, in numeric order;
Python keeps insertion order. Both are the same JSON value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ..ai._util import MAX_JSON_DEPTH, json_too_deep

__all__ = ["MAX_DEPTH", "JsonError", "format_number", "parse", "stringify"]


class JsonError(ValueError):
    """A text that ``JSON.parse`` would refuse, or a value that is not JSON."""


def _refuse_constant(name: str) -> Any:
    raise JsonError(f"{name} is not valid JSON")


_SAFE_INTEGER = 2**53


def _parse_int(text: str) -> int | float:
    # JavaScript numbers are doubles: an integer literal beyond 2**53 reads as the nearest double
    # (so a large whole double written as digits by JSON.stringify reads back as that double).
    value = int(text)
    return value if -_SAFE_INTEGER <= value <= _SAFE_INTEGER else float(text)


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=_parse_int)


MAX_DEPTH = MAX_JSON_DEPTH
"""Deepest nesting :func:`parse` accepts: the one limit of every JSON parser in py_agent (see
``py_agent.ai._util.MAX_JSON_DEPTH`` for why deeper input is refused)."""


def parse(text: str) -> Any:
    """``JSON.parse(text)``; raises :class:`JsonError` for anything it would refuse, and for
    nesting deeper than :data:`MAX_DEPTH`."""
    if json_too_deep(text):
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    except JsonError:
        raise
    except (ValueError, RecursionError, MemoryError) as error:
        raise JsonError(str(error) or type(error).__name__) from None
    if _skip_ws(text, end) != len(text):
        raise JsonError(f"unexpected data after the JSON value at position {end}")
    return value


def _skip_ws(text: str, pos: int) -> int:
    # JSON whitespace only (JSON.parse refuses e.g. a BOM or U+00A0 around the value).
    n = len(text)
    while pos < n and text[pos] in " \t\n\r":
        pos += 1
    return pos


def format_number(value: float) -> str:
    """``Number.prototype.toString`` for a finite float (JavaScript's shortest round-trip form)."""
    if value == 0:
        return "0"
    text = repr(value)  # shortest round-trip digits, as JavaScript's
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    # value = 0.DIGITS x 10^point
    point = len(whole) + exponent - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    e = point - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp
    return sign + digits[0] + "." + digits[1:] + "e" + exp


# A JSON string token (skipped), or a float token the C encoder wrote in Python's style.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?Infinity|NaN|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')
_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _fix_token(match: re.Match[str]) -> str:
    token = match.group()
    first = token[0]
    if first == '"':
        return token
    if first == "N" or token.endswith("Infinity"):
        return "null"
    if "." not in token and "e" not in token and "E" not in token:
        return token  # an int: same in both languages
    return format_number(float(token))


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for a JSON value (dicts with string keys, lists, str, numbers, bools, None).

    Tuples are written as arrays. Raises :class:`JsonError` for anything else.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    except RecursionError:
        text = _stringify_deep(value)
    except (TypeError, ValueError) as error:
        raise JsonError(str(error)) from None
    if _needs_fixing(text):
        text = _TOKENS.sub(_fix_token, text)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(_escape_surrogate, text)
    return text


_MAYBE_FLOAT = re.compile(r"[.eEN]|Infinity")


def _needs_fixing(text: str) -> bool:
    # Cheap pre-check: without '.', 'e', 'E', 'N' or 'Infinity' anywhere there is no float token.
    return _MAYBE_FLOAT.search(text) is not None


def _stringify_deep(value: Any) -> str:
    """The same output as ``json.dumps`` above, without recursion (for very deeply nested values)."""
    out: list[str] = []
    # Work items: ("v", value) writes a value; ("s", text) writes literal text.
    stack: list[tuple[str, Any]] = [("v", value)]
    seen: set[int] = set()
    while stack:
        kind, item = stack.pop()
        if kind == "s":
            out.append(item)
            continue
        if kind == "x":  # leaving a container
            seen.discard(item)
            continue
        if isinstance(item, Mapping):
            if id(item) in seen:
                raise JsonError("circular reference")
            seen.add(id(item))
            stack.append(("x", id(item)))
            stack.append(("s", "}"))
            pairs = list(item.items())
            for index in range(len(pairs) - 1, -1, -1):
                key, child = pairs[index]
                stack.append(("v", child))
                stack.append(("s", ("," if index else "") + json.dumps(_key(key), ensure_ascii=False) + ":"))
            out.append("{")
        elif isinstance(item, list | tuple):
            if id(item) in seen:
                raise JsonError("circular reference")
            seen.add(id(item))
            stack.append(("x", id(item)))
            stack.append(("s", "]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(("v", item[index]))
                if index:
                    stack.append(("s", ","))
            out.append("[")
        else:
            try:
                out.append(json.dumps(item, ensure_ascii=False, allow_nan=True))
            except (TypeError, ValueError) as error:
                raise JsonError(str(error)) from None
    return "".join(out)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return format_number(key) if math.isfinite(key) else ("NaN" if key != key else "Infinity")
    raise JsonError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
