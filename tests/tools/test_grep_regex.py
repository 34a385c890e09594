"""grep's Python -> JavaScript regex translation (py_agent.tools.grep_regex), in CPython: what it
writes for each construct, what it refuses, and that its character classes are exactly Python's.
(tests/browser/test_workspace_grep_export.py runs the translations in Chromium against `re`.)"""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from py_agent.tools.files import ToolError, compile_grep_pattern
from py_agent.tools.grep_regex import _SPACE, JsRegex, UntranslatableRegex, to_js_regex

WORD = r"[\p{L}\p{N}_]"


def js(pattern: str, flags: int = 0) -> JsRegex:
    return to_js_regex(re.compile(pattern, flags))


@pytest.mark.parametrize(
    ("pattern", "source", "flags"),
    [
        ("abc", "abc", "v"),
        ("a.b", r"a[^\n]b", "v"),
        ("(?s)a.b", "a[^]b", "v"),
        ("(?s:.).", r"(?:[^])[^\n]", "v"),
        (r"\Aab\Z", "^ab$", "v"),
        ("^a$", "^a$", "v"),
        ("(?m)^a$", "^a$", "v"),
        (r"(?P<name>ab)(?P=name)", r"(ab)(?:\1)", "v"),
        (r"(?P<a>x)(?:y)(?P<b>z)\2\1", r"(x)y(z)(?:\2)(?:\1)", "v"),
        ("(?i)abc", "abc", "vi"),
        ("abc", "abc", "vi"),  # re.IGNORECASE given as a flag (ignoreCase)
        ("(?i:ab)c", "(?i:(?:ab))c", "v"),
        ("(?i)a(?-i:b)", "a(?-i:(?:b))", "vi"),
        ("(?i)a(?i:b)", "a(?:b)", "vi"),
        (r"\d", r"[\p{Nd}]", "v"),
        (r"\D", r"[\P{Nd}]", "v"),
        (r"\w", f"[{WORD}]", "v"),
        (r"\W", r"[[^\p{L}\p{N}_]]", "v"),
        (r"\s", f"[[{_SPACE}]]", "v"),
        (r"[^\W\d]", r"[^[^\p{L}\p{N}_]\p{Nd}]", "v"),
        (r"(?a)\w\d\s", r"[[a-zA-Z0-9_]][[0-9]][[\t-\r ]]", "v"),
        (
            r"\bx\B",
            rf"(?:(?<={WORD})(?!{WORD})|(?<!{WORD})(?={WORD}))x(?:(?<={WORD})(?={WORD})|(?<!{WORD})(?!{WORD}))",
            "v",
        ),
        ("x{,3}", "x{0,3}", "v"),
        ("x{2,}?y{3}z??", "x{2,}?y{3}z??", "v"),
        ("(?:ab)*", "(?:ab)*", "v"),
        ("[]a-]", r"[\x5da\x2d]", "v"),
        ("[^a-c]", "[^a-c]", "v"),
        ("[^a]", "[^a]", "v"),
        (r"\N{EM DASH}é😀", r"\u2014\xe9\u{1f600}", "v"),
        (r"(?x) a b  # comment", "ab", "v"),
        ("a|b|", "(?:a|b|)", "v"),
        ("(?>a+)b", r"(?=(a+))(?:\1)b", "v"),
        ("(a)(?>b)(c)", r"(a)(?=(b))(?:\2)(c)", "v"),
        ("a*+", r"(?=(a*))(?:\1)", "v"),
        ("(?<=a)b(?<!c)(?=d)(?!e)", "(?<=a)b(?<!c)(?=d)(?!e)", "v"),
        ("(?=a)*b", "(?:(?=a))*b", "v"),
        (".{2}1", r"[^\n]{2}1", "v"),
        ("(?!)", "(?!)", "v"),
        (r"\.\*\[\\\$", r"\x2e\x2a\x5b\x5c\x24", "v"),
    ],
)
def test_translation(pattern: str, source: str, flags: str) -> None:
    ignore = re.IGNORECASE if pattern == "abc" and flags == "vi" else 0
    assert js(pattern, ignore) == JsRegex(source, flags)


def test_a_literal_pattern_and_ignore_case_as_grep_compiles_them() -> None:
    regex = compile_grep_pattern("a.b(c)", literal=True, ignore_case=True)
    assert to_js_regex(regex) == JsRegex(r"a\x2eb\x28c\x29", "vi")


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(a)?(?(1)b|c)", "it uses a conditional group (?(id)yes|no)"),
        (r"(a)?\1", "it refers back to group 1, which may not have matched"),
        (r"(?:(a)|b)\1", "it refers back to group 1"),
        (r"(?!(a))\1", "it refers back to group 1"),
        (r"(a)(?<=\1)", "backreference inside a lookbehind"),
    ],
)
def test_what_javascript_cannot_express_is_refused_with_a_reason(pattern: str, problem: str) -> None:
    with pytest.raises(UntranslatableRegex) as caught:
        js(pattern)
    assert problem in str(caught.value)


def test_a_group_that_always_matched_can_be_referred_to() -> None:
    assert js(r"(ab|cd)\1").source == r"((?:ab|cd))(?:\1)"
    assert js(r"(?:(a)b)+\1").source == r"(?:(a)b)+(?:\1)"


def test_a_bad_pattern_gives_pythons_error_before_any_translation() -> None:
    with pytest.raises(ToolError) as caught:
        compile_grep_pattern("(unclosed")
    assert str(caught.value) == "regex parse error:\n    (unclosed\n    ^\nerror: unclosed group"


def test_the_classes_are_exactly_pythons() -> None:
    """\\s is Python's whitespace set; \\w is the categories L* and N* plus '_', \\d is Nd (the
    Unicode properties the translation uses), over every code point."""
    space = re.compile(r"\s")
    word = re.compile(r"\w")
    digit = re.compile(r"\d")
    spaces = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        assert bool(word.match(char)) == (category[0] in "LN" or char == "_"), hex(code)
        assert bool(digit.match(char)) == (category == "Nd"), hex(code)
        if space.match(char):
            spaces.append(code)
    listed: list[int] = []
    item = r"(\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\[tr]| )"
    for match in re.finditer(f"{item}(?:-{item})?", _SPACE):
        first, last = _code(match.group(1)), _code(match.group(2) or match.group(1))
        listed.extend(range(first, last + 1))
    assert listed == spaces and len(spaces) == 29


def _code(escape: str) -> int:
    return {"\\t": 9, "\\r": 13, " ": 32}.get(escape) or int(escape[2:], 16)
