"""Property tests (hypothesis, fixed budget, derandomized) of the two parsers every reply goes
through: the SSE decoder and the partial-JSON parser of streamed tool arguments.

- SSE: however the bytes are split (inside a UTF-8 sequence, between the CR and LF of a CRLF,
  anywhere), the decoder yields the same events as for the whole body at once, and those events
  are what an independent, line-by-line reading of the WHATWG algorithm gives; any bytes at all
  never raise.
- Partial JSON: never raises, always returns a dict, agrees with ``json.loads`` on every complete
  JSON object, and every prefix of one parses to a dict whose keys are keys of the whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Imported, not importorskip'ed: CI must never skip these (hypothesis is in the test extras).
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_agent.ai.partial_json import parse_streaming_json
from py_agent.ai.sse import SSEDecoder, SSEEvent

# A fixed budget (the hypothesis profile's, tests/conftest.py) and no randomness between runs: CI runs
# exactly the same examples every time.
BUDGET = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# SSE


def decode(chunks: list[bytes]) -> list[tuple[str, str | None, str | None]]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.flush())
    return [(e.data, e.event, e.id) for e in events]


def reference(text: str) -> list[tuple[str, str | None, str | None]]:
    """The WHATWG event-stream interpretation, on the whole (already decoded) text."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # the last piece has no line end: an incomplete line, discarded at end of body
    events = []
    data: list[str] = []
    has_data = False
    event: str | None = None
    last_id: str | None = None
    for line in lines:
        if line == "":
            if has_data:
                events.append(("\n".join(data), event, last_id))
            data, has_data, event = [], False, None
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
            has_data = True
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
    return events


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


field_value = st.text(alphabet=st.characters(blacklist_characters="\r\n", codec="utf-8"), max_size=12)
sse_line = st.one_of(
    st.builds(lambda v: f"data: {v}", field_value),
    st.builds(lambda v: f"data:{v}", field_value),
    st.just("data"),
    st.builds(lambda v: f"event: {v}", field_value),
    st.builds(lambda v: f"id: {v}", field_value),
    st.just("id: a\0b"),
    st.builds(lambda v: f"retry: {v}", field_value),
    st.builds(lambda v: f": {v}", field_value),  # a comment
    st.builds(lambda n, v: f"{n}: {v}", st.sampled_from(["x", "Data", "dat", "ev"]), field_value),
    st.just(""),  # an event boundary
)
line_end = st.sampled_from(["\n", "\r", "\r\n"])
sse_body = st.builds(
    lambda bom, lines, ends, tail: (
        ("\ufeff" if bom else "") + "".join(line + ends[i % len(ends)] for i, line in enumerate(lines)) + tail
    ),
    st.booleans(),
    st.lists(sse_line, max_size=24),
    st.lists(line_end, min_size=1, max_size=6),
    st.sampled_from(["", "data: unterminated", "\r", "data: x\n"]),
)


@BUDGET
@given(sse_body, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_sse_any_split_gives_the_same_events(text: str, cuts: list[int]) -> None:
    data = text.encode("utf-8")
    whole = decode([data])
    assert whole == reference(text)
    assert decode(split_at(data, cuts)) == whole


@BUDGET
@given(sse_body)
def test_sse_byte_by_byte_gives_the_same_events(text: str) -> None:
    data = text.encode("utf-8")
    assert decode([data[i : i + 1] for i in range(len(data))]) == decode([data])


@BUDGET
@given(st.binary(max_size=200), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_sse_any_bytes_never_raise_and_splits_agree(data: bytes, cuts: list[int]) -> None:
    # Invalid UTF-8 included: it is replaced (U+FFFD) the same way however it is split.
    whole = decode([data])
    assert decode(split_at(data, cuts)) == whole
    assert whole == reference(data.decode("utf-8", errors="replace"))


# ---------------------------------------------------------------------------------------------
# Partial JSON

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=16,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=6)


def dumped(value: Any, indent: int | None, ascii_only: bool) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only)


@BUDGET
@given(st.text(max_size=200))
def test_partial_json_never_raises_on_any_text(text: str) -> None:
    assert isinstance(parse_streaming_json(text), dict)


@BUDGET
@given(json_objects, st.sampled_from([None, 0, 2]), st.booleans())
def test_partial_json_agrees_with_json_loads_on_complete_objects(
    value: dict[str, Any], indent: Any, ascii_only: bool
) -> None:
    text = dumped(value, indent, ascii_only)
    assert parse_streaming_json(text) == json.loads(text)


@BUDGET
@given(json_values.filter(lambda v: not isinstance(v, dict)))
def test_partial_json_gives_an_empty_dict_for_other_complete_json(value: Any) -> None:
    assert parse_streaming_json(json.dumps(value)) == {}


@BUDGET
@given(json_objects, st.sampled_from([None, 1]), st.booleans())
def test_partial_json_every_prefix_is_a_dict_of_known_keys(
    value: dict[str, Any], indent: Any, ascii_only: bool
) -> None:
    text = dumped(value, indent, ascii_only)
    step = max(1, len(text) // 60)  # at most ~60 prefixes per example keeps the budget fixed
    for end in [*range(0, len(text), step), len(text)]:
        parsed = parse_streaming_json(text[:end])
        assert isinstance(parsed, dict)
        # A key can still be growing (`{"ab` of `{"abc": 1}`): it is a prefix of a real key.
        assert all(any(real.startswith(key) for real in value) for key in parsed), (text[:end], parsed)


@BUDGET
@given(
    st.lists(
        st.sampled_from(["{", "[", '"', ":", ",", "}", "]", "1", "-", "e", "\\", "u", "null", "tru", " "]), max_size=60
    )
)
def test_partial_json_never_raises_on_json_like_junk(tokens: list[str]) -> None:
    assert isinstance(parse_streaming_json("".join(tokens)), dict)
