"""Best-effort parsing of incomplete JSON, for tool-call arguments while they stream.

:func:`parse_streaming_json` is pi's ``parseStreamingJson``: a strict parse first (with pi's repair
of raw control characters and invalid escapes inside strings), then a lenient parse that follows
the npm ``partial-json`` 0.1.7 library (all partial kinds allowed) so the same prefixes give the
same values. It never raises and always returns a dict (pi may return ``None`` or a
number: docs/deviations.md D22).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._util import json_too_deep

__all__ = ["parse_partial_json", "parse_streaming_json", "repair_json"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name}")


def _json_parse(text: str) -> Any:
    """``JSON.parse``: like ``json.loads`` but without NaN/Infinity."""
    return json.loads(text, parse_constant=_reject_constant)


_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


_STRING_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*\\?)("?)', re.DOTALL)
_STRING_INNER = re.compile(r"\\u[0-9a-fA-F]{4}|\\(.)|\\$|[\x00-\x1f]", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x1f]")
_NEEDS_REPAIR = re.compile(r'[\x00-\x1f]|\\(?:[^"\\/bfnrtu]|$)')


def _escape_control(char: str) -> str:
    return _CONTROL_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _fix_inner(match: re.Match[str]) -> str:
    token = match.group(0)
    if token[0] != "\\":
        return _escape_control(token)
    if len(token) == 1:
        return "\\\\"  # a dangling backslash
    if len(token) == 6 or token[1] in _VALID_ESCAPES:
        return token
    following = token[1]
    return "\\\\" + (_escape_control(following) if ord(following) <= 0x1F else following)


def _fix_string(match: re.Match[str]) -> str:
    return '"' + _STRING_INNER.sub(_fix_inner, match.group(1)) + match.group(2)


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes of invalid escapes
    (pi's ``repairJson``; text outside strings is kept as is)."""
    if "\\" not in text and _CONTROL.search(text) is None:
        return text
    if _NEEDS_REPAIR.search(text) is None:
        return text
    return _STRING_TOKEN.sub(_fix_string, text)


# ---------------------------------------------------------------------------------------------
# The lenient parser (a port of partial-json 0.1.7 with Allow.ALL, minus NaN/Infinity)


class _PartialJSON(Exception):
    pass


class _MalformedJSON(Exception):
    pass


def _js_substring(text: str, start: int, end: int) -> str:
    """JavaScript ``String.prototype.substring`` (negative → 0, swapped bounds)."""
    length = len(text)
    start = min(max(start, 0), length)
    end = min(max(end, 0), length)
    if start > end:
        start, end = end, start
    return text[start:end]


_BLANK = " \n\r\t"


class _Parser:
    __slots__ = ("index", "length", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.index = 0

    def skip_blank(self) -> None:
        text, length, index = self.text, self.length, self.index
        while index < length and text[index] in _BLANK:
            index += 1
        self.index = index

    def parse_any(self) -> Any:
        self.skip_blank()
        text, index, length = self.text, self.index, self.length
        if index >= length:
            raise _PartialJSON("Unexpected end of input")
        char = text[index]
        if char == '"':
            return self.parse_str()
        if char == "{":
            return self.parse_obj()
        if char == "[":
            return self.parse_arr()
        rest = text[index:]
        for literal, value in (("null", None), ("true", True), ("false", False)):
            size = len(literal)
            if rest[:size] == literal or (length - index < size and literal.startswith(rest)):
                self.index += size
                return value
        return self.parse_num()

    def parse_str(self) -> str:
        text, length = self.text, self.length
        start = self.index
        index = start + 1
        escape = False
        while True:
            quote = text.find('"', index)
            backslash = text.find("\\", index, quote if quote != -1 else length)
            if backslash == -1:
                index = length if quote == -1 else quote
                break
            # A backslash: the next character is escaped.
            if backslash + 1 >= length:
                escape = True
                index = length
                break
            index = backslash + 2
        if index > length:
            index = length
        if index < length and text[index] == '"':
            self.index = index + 1
            try:
                value = _json_parse(text[start : index + 1])
            except ValueError as error:
                raise _MalformedJSON(str(error)) from None
            if not isinstance(value, str):
                raise _MalformedJSON("Expected a string")
            return value
        self.index = index
        try:
            value = _json_parse(text[start : index - int(escape)] + '"')
        except ValueError:
            # An incomplete escape such as "\u00": cut at the last backslash.
            value = _json_parse(_js_substring(text, start, text.rfind("\\")) + '"')
        if not isinstance(value, str):
            raise _MalformedJSON("Expected a string")
        return value

    def parse_obj(self) -> dict[str, Any]:
        self.index += 1
        self.skip_blank()
        obj: dict[str, Any] = {}
        text = self.text
        try:
            while self.index >= self.length or text[self.index] != "}":
                self.skip_blank()
                if self.index >= self.length:
                    return obj
                key = self.parse_str()  # partial-json reads a key even without its quote
                self.skip_blank()
                self.index += 1  # the colon
                try:
                    value = self.parse_any()
                except Exception:
                    return obj
                obj[key] = value
                self.skip_blank()
                if self.index < self.length and text[self.index] == ",":
                    self.index += 1
        except Exception:
            return obj
        self.index += 1
        return obj

    def parse_arr(self) -> list[Any]:
        self.index += 1
        arr: list[Any] = []
        text = self.text
        try:
            while self.index >= self.length or text[self.index] != "]":
                arr.append(self.parse_any())
                self.skip_blank()
                if self.index < self.length and text[self.index] == ",":
                    self.index += 1
        except Exception:
            return arr
        self.index += 1
        return arr

    def parse_num(self) -> Any:
        text, length = self.text, self.length
        if self.index == 0:
            if text == "-":
                raise _MalformedJSON("Not sure what '-' is")
            try:
                return _json_parse(text)
            except ValueError:
                try:
                    return _json_parse(_js_substring(text, 0, text.rfind("e")))
                except ValueError as error:
                    raise _MalformedJSON(str(error)) from None
        start = self.index
        index = start
        if index < length and text[index] == "-":
            index += 1
        while index < length and text[index] not in ",]}":
            index += 1
        self.index = index
        number = text[start:index]
        try:
            return _json_parse(number)
        except ValueError:
            if number == "-":
                raise _PartialJSON("Not sure what '-' is") from None
            try:
                return _json_parse(_js_substring(text, start, text.rfind("e")))
            except ValueError as error:
                raise _MalformedJSON(str(error)) from None


def parse_partial_json(text: str) -> Any:
    """The lenient parse of ``partial-json``; raises ``ValueError`` when nothing can be made of it."""
    trimmed = text.strip(_BLANK)
    if not trimmed:
        raise ValueError(f"{text!r} is empty")
    try:
        return _Parser(trimmed).parse_any()
    except (_PartialJSON, _MalformedJSON, RecursionError) as error:
        raise ValueError(str(error)) from None


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Parse possibly incomplete JSON tool arguments; always a dict, never raises."""
    if not text or not text.strip():
        return {}
    if json_too_deep(text):
        return {}  # hostile nesting: parsing it could exhaust Pyodide's stack (see MAX_JSON_DEPTH)
    try:
        try:
            value = _json_parse(text)
        except (ValueError, RecursionError):
            repaired = repair_json(text)
            value = None
            parsed = False
            if repaired != text:
                try:
                    value = _json_parse(repaired)
                    parsed = True
                except (ValueError, RecursionError):
                    pass
            if not parsed:
                for candidate in (text, repaired) if repaired != text else (text,):
                    try:
                        value = parse_partial_json(candidate)
                        break
                    except (ValueError, RecursionError):
                        continue
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}
