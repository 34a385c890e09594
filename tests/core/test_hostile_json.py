"""Hostile nesting in JSON that comes from the network (streamed tool arguments, SSE data, error
bodies) is refused before it is parsed.

Also run inside Pyodide (tests/pyodide/test_suites.py runs every tests/core module there): a few
thousand levels exhaust the WebAssembly stack inside ``json.loads`` and kill the page's
interpreter with a fatal error, so a model that streams ``[[[[...`` as tool arguments would take
the whole app down. Found by the page's hostile-content tests (tests/browser/test_security.py).
"""

from __future__ import annotations

import pytest

from py_agent.ai._util import MAX_JSON_DEPTH, json_too_deep
from py_agent.ai.partial_json import parse_streaming_json
from py_agent.ai.providers.errors import ProviderError, parse_json_data, try_json

DEPTHS = [MAX_JSON_DEPTH + 1, 5_000, 20_000, 200_000]


@pytest.mark.parametrize("depth", DEPTHS)
def test_streamed_tool_arguments_nested_too_deeply_parse_to_nothing(depth: int) -> None:
    for text in (
        '{"a": ' + "[" * depth,
        '{"a": ' + "[" * depth + "]" * depth + "}",
        '{"a": ' + '{"b":' * depth,
        "]" * depth + "[" * depth,
    ):
        assert parse_streaming_json(text) == {}


@pytest.mark.parametrize("depth", DEPTHS)
def test_sse_data_and_error_bodies_nested_too_deeply_are_refused(depth: int) -> None:
    with pytest.raises(ProviderError, match="nested deeper"):
        parse_json_data("[" * depth + "]" * depth)
    assert try_json('{"error": ' * depth) is None


def test_ordinary_nesting_and_brackets_in_strings_still_parse() -> None:
    deep_ok = "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2)
    assert parse_streaming_json('{"a": ' + deep_ok + "}")["a"] is not None
    brackets = '{"code": "' + "[" * 5_000 + '"}'
    assert parse_streaming_json(brackets) == {"code": "[" * 5_000}
    assert not json_too_deep(brackets)
    assert parse_json_data('{"x": [1, [2, [3]]]}') == {"x": [1, [2, [3]]]}
