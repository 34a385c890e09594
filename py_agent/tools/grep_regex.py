"""A Python regular expression as a JavaScript ``RegExp`` with the same matches, for ``grep`` in
the browser (where the search runs in a Web Worker that can be stopped: see
``py_agent/browser/grep.py``).

The pattern is first compiled by Python's ``re`` (so a bad pattern gives the same error as in
CPython), then translated from the tree Python's own parser makes of it (``re._parser``), not
from its text: every syntax Python accepts (``(?P<name>...)``, ``(?P=name)``, ``\\A``, ``\\Z``,
inline flags, verbose mode, ``{,n}``, ``\\N{...}``, ``[]...]`` ...) is read the way Python reads
it. What comes out uses the ``v`` flag and writes every literal as an escape, with Python's
meaning where JavaScript's differs:

- ``\\d`` ``\\w`` ``\\s`` ``\\b`` are Unicode-aware as in Python (``\\p{Nd}``, ``[\\p{L}\\p{N}_]``,
  Python's exact whitespace set; ``\\b`` as look-arounds), ASCII-only under ``(?a)``;
- ``.`` never matches ``\\n`` (``[^]`` under ``(?s)``); ``^``/``$`` (and ``\\A``/``\\Z``) match at the
  ends of the searched line (grep searches one line at a time, which never holds a ``\\n``);
- ``(?i)`` for the whole pattern is the ``i`` flag, scoped ``(?i:...)``/``(?-i:...)`` are
  JavaScript's modifier groups; atomic groups ``(?>...)`` and possessive quantifiers ``*+``
  become ``(?=(...))\\k`` (a look-ahead is atomic in JavaScript);
- groups are numbered again (names are not needed to search), backreferences follow.

Conditional groups ``(?(1)yes|no)`` have no JavaScript equivalent: :class:`UntranslatableRegex`
says so. Remaining differences are corner cases of case-insensitive matching (JavaScript folds
case the Unicode way where Python, under ``(?a)``, folds only ASCII) and of the Unicode version
the browser knows. Pure Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

__all__ = ["JsRegex", "UntranslatableRegex", "to_js_regex"]


class UntranslatableRegex(ValueError):
    """The pattern uses something JavaScript's ``RegExp`` cannot express; the message says what."""


@dataclass(frozen=True)
class JsRegex:
    """``new RegExp(source, flags)``."""

    source: str
    flags: str


# Python's \s for text: str.isspace() (checked against re over every code point in the tests).
_SPACE = "\\t-\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
_ASCII_SPACE = "\\t-\\r "
# Python's \w for text: str.isalnum() or "_", i.e. the Unicode categories L* and N*, and \d: Nd.
_WORD = "\\p{L}\\p{N}_"
_ASCII_WORD = "a-zA-Z0-9_"


def _char(code: int) -> str:
    """A code point as an escape that means that character everywhere in a ``v``-mode pattern."""
    if 0x30 <= code <= 0x39 or 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A:
        return chr(code)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\u{{{code:x}}}"


class _Translator:
    def __init__(self, flags: int) -> None:
        self.groups: dict[int, int] = {}  # Python group number -> JavaScript group number
        self.count = 0
        self.lookbehind = 0
        self.optional = 0  # > 0 inside something that may match without its groups
        self.optional_groups: set[int] = set()

    # -- classes --------------------------------------------------------------------------

    def _category(self, code: Any, flags: int) -> str:
        """A category as one class item (a nested class in ``v`` mode)."""
        ascii_only = bool(flags & re.ASCII)
        if code is C.CATEGORY_DIGIT:
            return "[0-9]" if ascii_only else "\\p{Nd}"
        if code is C.CATEGORY_NOT_DIGIT:
            return "[^0-9]" if ascii_only else "\\P{Nd}"
        if code is C.CATEGORY_WORD:
            return f"[{_ASCII_WORD if ascii_only else _WORD}]"
        if code is C.CATEGORY_NOT_WORD:
            return f"[^{_ASCII_WORD if ascii_only else _WORD}]"
        if code is C.CATEGORY_SPACE:
            return f"[{_ASCII_SPACE if ascii_only else _SPACE}]"
        if code is C.CATEGORY_NOT_SPACE:
            return f"[^{_ASCII_SPACE if ascii_only else _SPACE}]"
        raise UntranslatableRegex(f"the character category {code} cannot be translated")

    def _set(self, items: list[tuple[Any, Any]], flags: int) -> str:
        negate = False
        parts: list[str] = []
        for op, value in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                parts.append(_char(value))
            elif op is C.RANGE:
                parts.append(f"{_char(value[0])}-{_char(value[1])}")
            elif op is C.CATEGORY:
                parts.append(self._category(value, flags))
            else:
                raise UntranslatableRegex(f"the character set item {op} cannot be translated")
        return "[" + ("^" if negate else "") + "".join(parts) + "]"

    def _word_boundary(self, flags: int, negate: bool) -> str:
        word = f"[{_ASCII_WORD if flags & re.ASCII else _WORD}]"
        if negate:
            return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"

    # -- the tree -------------------------------------------------------------------------

    def sequence(self, items: Any, flags: int) -> str:
        return "".join(self.node(op, value, flags) for op, value in items)

    def maybe(self, optional: bool, build: Any) -> str:
        """``build()`` with its groups marked as possibly not set when ``optional``."""
        self.optional += optional
        try:
            return str(build())
        finally:
            self.optional -= optional

    def atom(self, items: Any, flags: int) -> str:
        """``items`` as one quantifiable unit."""
        items = list(items)
        text = self.sequence(items, flags)
        if len(items) == 1 and items[0][0] in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return text
        return f"(?:{text})"

    def atomic(self, build: Any) -> str:
        """``(?=(X))\\n``: X matched once, never backtracked into (a look-ahead is atomic)."""
        self.count += 1
        number = self.count
        return f"(?=({build()}))(?:\\{number})"

    @staticmethod
    def quantifier(low: int, high: int) -> str:
        if high == C.MAXREPEAT:
            return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
        if (low, high) == (0, 1):
            return "?"
        return f"{{{low}}}" if low == high else f"{{{low},{high}}}"

    def node(self, op: Any, value: Any, flags: int) -> str:
        if op is C.LITERAL:
            return _char(value)
        if op is C.NOT_LITERAL:
            return f"[^{_char(value)}]"
        if op is C.ANY:
            return "[^]" if flags & re.DOTALL else "[^\\n]"
        if op is C.IN:
            return self._set(value, flags)
        if op is C.CATEGORY:
            return self._category(value, flags)
        if op is C.BRANCH:
            branches = value[1]
            return self.maybe(
                len(branches) > 1, lambda: "(?:" + "|".join(self.sequence(b, flags) for b in branches) + ")"
            )
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            low, high, items = value
            lazy = "?" if op is C.MIN_REPEAT else ""
            return self.maybe(low == 0, lambda: self.atom(items, flags)) + self.quantifier(low, high) + lazy
        if op is C.POSSESSIVE_REPEAT:
            low, high, items = value
            return self.atomic(
                lambda: self.maybe(low == 0, lambda: self.atom(items, flags)) + self.quantifier(low, high)
            )
        if op is C.ATOMIC_GROUP:
            return self.atomic(lambda: self.sequence(value, flags))
        if op is C.SUBPATTERN:
            group, add, remove, items = value
            inner_flags = (flags | add) & ~remove
            if group is not None:
                self.count += 1
                self.groups[group] = self.count
                if self.optional:
                    self.optional_groups.add(group)
                text = f"({self.sequence(items, inner_flags)})"
            else:
                text = f"(?:{self.sequence(items, inner_flags)})"
            before, after = bool(flags & re.IGNORECASE), bool(inner_flags & re.IGNORECASE)
            if before != after:
                text = f"(?{'i' if after else '-i'}:{text})"
            return text
        if op is C.GROUPREF:
            if self.lookbehind:
                raise UntranslatableRegex("it uses a backreference inside a lookbehind")
            if value in self.optional_groups or value not in self.groups:
                # Python fails such a reference when the group did not match; JavaScript matches "".
                raise UntranslatableRegex(
                    f"it refers back to group {value}, which may not have matched (JavaScript would then match "
                    "an empty string where Python fails)"
                )
            return f"(?:\\{self.groups[value]})"
        if op is C.GROUPREF_EXISTS:
            raise UntranslatableRegex(
                "it uses a conditional group (?(id)yes|no), which JavaScript has no equivalent of"
            )
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, items = value
            if direction < 0:
                self.lookbehind += 1
                try:
                    inner = self.maybe(op is C.ASSERT_NOT, lambda: self.sequence(items, flags))
                finally:
                    self.lookbehind -= 1
                return f"(?<{'=' if op is C.ASSERT else '!'}{inner})"
            inner = self.maybe(op is C.ASSERT_NOT, lambda: self.sequence(items, flags))
            return f"(?{'=' if op is C.ASSERT else '!'}{inner})"
        if op is C.AT:
            if value in (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_BEGINNING_LINE):
                return "^"
            if value in (C.AT_END, C.AT_END_STRING, C.AT_END_LINE):
                return "$"
            if value is C.AT_BOUNDARY:
                return self._word_boundary(flags, negate=False)
            if value is C.AT_NON_BOUNDARY:
                return self._word_boundary(flags, negate=True)
        if op is C.FAILURE:
            return "(?!)"
        raise UntranslatableRegex(f"it uses {op} {value!r}, which cannot be translated")


def to_js_regex(regex: re.Pattern[str]) -> JsRegex:
    """The ``RegExp`` that finds the same lines as ``regex.search(line)`` (a line holds no
    ``\\n``). Raises :class:`UntranslatableRegex` for what JavaScript cannot express."""
    if not isinstance(regex.pattern, str):
        raise UntranslatableRegex("only text patterns can be translated")
    try:
        tree = P.parse(regex.pattern, regex.flags)
    except re.error as error:  # pragma: no cover - the pattern compiled already
        raise UntranslatableRegex(str(error)) from None
    flags = tree.state.flags
    translator = _Translator(flags)
    source = translator.sequence(tree, flags)
    return JsRegex(source, "v" + ("i" if flags & re.IGNORECASE else ""))
