"""JSON exactly as JavaScript's JSON.parse / JSON.stringify handle it (pi writes lines with JSON.stringify)."""

from __future__ import annotations

import json
import math

import pytest
from session_helpers import load_json_fixture

from py_agent.session import JsonError, json_parse, json_stringify
from py_agent.session._json import MAX_DEPTH, format_number


def test_numbers_format_as_javascript_does() -> None:
    # fixtures/js_numbers.json: [python repr, String(Number(repr))] pairs written by Node.js.
    table = load_json_fixture("js_numbers.json")
    assert len(table) > 80
    for python_repr, javascript in table:
        assert format_number(float(python_repr)) == javascript, python_repr


def test_stringify_matches_json_stringify() -> None:
    value = {
        "int": 3,
        "float": 1.0,
        "tiny": 0.000015,
        "small": 1e-7,
        "big": 1e21,
        "neg_zero": -0.0,
        "nan": math.nan,
        "inf": -math.inf,
        "text": 'a "quoted" \\ back\nslash\t\x01\x1f\x7f é 😀 \u2028\u2029',
        "lone": "\ud800x",
        "list": [1.5, None, True, False, []],
        "nested": {"1.0": "1.0e5 stays in strings", "k": [{"e": 2.5e-8}]},
    }
    expected = (
        '{"int":3,"float":1,"tiny":0.000015,"small":1e-7,"big":1e+21,"neg_zero":0,"nan":null,"inf":null,'
        '"text":"a \\"quoted\\" \\\\ back\\nslash\\t\\u0001\\u001f\x7f é 😀 \u2028\u2029",'
        '"lone":"\\ud800x","list":[1.5,null,true,false,[]],'
        '"nested":{"1.0":"1.0e5 stays in strings","k":[{"e":2.5e-8}]}}'
    )
    assert json_stringify(value) == expected


def test_stringify_handles_deep_nesting_without_recursion() -> None:
    deep: object = 0.5
    for _ in range(1500):  # beyond CPython's recursion limit, within Pyodide's stack
        deep = [deep, {"x": 1.0}]
    text = json_stringify(deep)
    assert text.startswith("[[[[") and text.endswith(',{"x":1}]')
    assert "0.5" in text and "1.0" not in text


def test_stringify_refuses_non_json() -> None:
    with pytest.raises(JsonError):
        json_stringify({"x": object()})
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(JsonError):
        json_stringify(loop)


def test_parse_refuses_what_json_parse_refuses() -> None:
    for text in ["NaN", "[Infinity]", "-Infinity", "{'a':1}", "[1,]", "01", "", "  ", "\ufeff{}", "{} x", '"\x01"']:
        with pytest.raises(JsonError):
            json_parse(text)
    assert json_parse(' {"a": [1, 2.5, "\\ud83d\\ude00"]}\r') == {"a": [1, 2.5, "😀"]}


def test_parse_refuses_absurd_nesting_without_crashing() -> None:
    # Pyodide's stack would overflow (a fatal error) long before a RecursionError.
    for depth in (MAX_DEPTH + 1, 100_000):
        with pytest.raises(JsonError, match="nested deeper"):
            json_parse("[" * depth + "]" * depth)
    assert json_parse("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    brackets_in_strings = json.dumps({"code": "{[" * 5000})
    assert json_parse(brackets_in_strings) == {"code": "{[" * 5000}


def test_the_request_encoders_fast_path_writes_what_the_encoder_writes() -> None:
    """py_agent.ai's json_stringify (request bodies) sends plain values (no floats) through json.dumps:
    the same characters as its value-by-value encoder."""
    from py_agent.ai._util import _encode
    from py_agent.ai._util import json_stringify as stringify

    text = 'x\u2028y\n"q" \ud83d\ude00 \U0001f600 é \x7f \x00'
    values: list[object] = [
        {"a": [1, -2, True, False, None, text], "b": {}, "c": [], "d": (1, "t")},
        {"big": 10**21 - 1, "neg": -(10**21) + 1},
        [{"role": "user", "content": [{"type": "text", "text": "hi </script>"}]}] * 3,
        "plain",
        7,
    ]
    for value in values:
        assert stringify(value) == _encode(value, None, 0)
    # Not plain: floats, huge ints, non-str keys keep the JavaScript spelling.
    assert stringify({"t": 1.0, "u": 0.5}) == '{"t":1,"u":0.5}'
    assert stringify(10**21) == "1e+21"
    assert stringify({1: "a"}) == '{"1":"a"}'
