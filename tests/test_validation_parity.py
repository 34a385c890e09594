"""Tool-argument conversion and validation, compared with pi-ai's ``validateToolArguments``.

``tests/reference/run_validation.mjs`` runs pi-ai 0.79.10 in Node on every case (a TypeBox schema
built with TypeBox itself when ``typebox`` is set, as pi's own tools are; else the plain JSON
schema); py_agent runs ``validate_tool_arguments`` with a ``TypeBoxSchema`` or a plain dict. The
validated arguments (as JSON text) or the error text must be the same. Hand-written cases cover
each conversion; a seeded generator adds schemas and argument values mixing them.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from py_agent.ai._util import json_stringify
from py_agent.ai.validation import TypeBoxSchema, validate_tool_arguments

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"

EDIT = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}
SCALARS = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "i": {"type": "integer", "minimum": 0},
        "b": {"type": "boolean"},
        "s": {"type": "string"},
        "z": {"type": "null"},
    },
}
UNIONS = {
    "type": "object",
    "properties": {
        "u": {"anyOf": [{"type": "number"}, {"type": "boolean"}]},
        "mode": {"enum": ["fast", "slow", 3]},
        "lit": {"const": 2, "type": "number"},
        "flag": {"const": True, "type": "boolean"},
        "tags": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    },
    "additionalProperties": {"type": "number"},
}

HAND_WRITTEN: list[tuple[str, dict[str, Any], Any]] = [
    ("edit_single_object_for_array", EDIT, {"path": "a.txt", "edits": {"oldText": "a", "newText": "b"}}),
    ("edit_list_untouched", EDIT, {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("edit_missing_text", EDIT, {"path": 3, "edits": {"oldText": "a"}}),
    ("numeric_strings", SCALARS, {"n": " 2.5 ", "i": "7", "b": "TRUE", "s": 12, "z": "null"}),
    ("integer_truncated", SCALARS, {"i": "5.9", "n": "0x1f", "b": 0, "s": 1.5}),
    ("nulls", SCALARS, {"n": None, "i": None, "b": None, "s": None, "z": 0}),
    ("empty_and_words", SCALARS, {"n": "", "i": "abc", "b": "yes", "s": False, "z": "undefined"}),
    ("bigint_and_exponent", SCALARS, {"n": "12n", "i": "1e2", "b": "1", "s": True}),
    ("negative_integer_refused", SCALARS, {"i": "-3"}),
    ("union_and_enum", UNIONS, {"u": "true", "mode": "3", "lit": "2", "flag": "true", "tags": "4"}),
    ("union_no_fit", UNIONS, {"u": "maybe", "mode": "medium", "lit": "3", "tags": ["1", "x"]}),
    ("additional_properties", UNIONS, {"extra": "5", "other": "x", "tags": [1, 2, 3, 4]}),
    ("not_an_object", SCALARS, "oops"),
    ("array_for_object", SCALARS, [1, 2]),
]

_STRINGS = ["3", "3.5", " 7 ", "", "0x1f", "1e3", "12n", "true", "FALSE", "0", "1", "null", "undefined", "abc", "-2"]
_SCALAR_TYPES = ["string", "number", "integer", "boolean", "null"]


def _schema(rng: random.Random, depth: int) -> dict[str, Any]:
    roll = rng.random()
    if depth < 2 and roll < 0.2:
        names = rng.sample(["a", "b", "c", "d"], rng.randint(1, 3))
        schema: dict[str, Any] = {"type": "object", "properties": {n: _schema(rng, depth + 1) for n in names}}
        required = [n for n in names if rng.random() < 0.4]
        if required:
            schema["required"] = required
        if rng.random() < 0.2:
            schema["additionalProperties"] = rng.choice([False, {"type": rng.choice(_SCALAR_TYPES)}])
        return schema
    if depth < 2 and roll < 0.35:
        schema = {"type": "array", "items": _schema(rng, depth + 1)}
        if rng.random() < 0.3:
            schema["maxItems"] = rng.randint(1, 3)
        return schema
    if roll < 0.45:
        return {"anyOf": [{"type": t} for t in rng.sample(_SCALAR_TYPES, 2)]}
    if roll < 0.52:
        return {"enum": rng.sample(["x", "y", 1, 2, True], 2)}
    if roll < 0.57:
        const = rng.choice(["x", 1, False])
        return {"const": const, "type": {str: "string", int: "number", bool: "boolean"}[type(const)]}
    kind = rng.choice(_SCALAR_TYPES)
    schema = {"type": kind}
    if kind in ("number", "integer") and rng.random() < 0.3:
        schema["minimum"] = rng.choice([0, 1, -5])
    if kind == "string" and rng.random() < 0.3:
        schema["minLength"] = rng.randint(1, 3)
    return schema


def _value(rng: random.Random, schema: dict[str, Any], depth: int) -> Any:
    roll = rng.random()
    if schema.get("type") == "object" and roll < 0.85:
        out = {name: _value(rng, sub, depth + 1) for name, sub in schema["properties"].items() if rng.random() < 0.8}
        if rng.random() < 0.15:
            out["extra"] = rng.choice(_STRINGS)
        return out
    if schema.get("type") == "array" and roll < 0.6:
        return [_value(rng, schema["items"], depth + 1) for _ in range(rng.randint(0, 3))]
    if schema.get("type") == "array" and roll < 0.85:
        return _value(rng, schema["items"], depth + 1)  # a single value where an array is wanted
    pick = rng.random()
    if pick < 0.55:
        return rng.choice(_STRINGS)
    if pick < 0.75:
        return rng.choice([0, 1, 2, 2.5, -3, 1e21])
    if pick < 0.9:
        return rng.choice([True, False, None])
    return rng.choice([[], {}, ["1"], {"k": "v"}])


def generated_cases(seed: int = 14, count: int = 150) -> list[tuple[str, dict[str, Any], Any]]:
    rng = random.Random(seed)
    cases = []
    for number in range(1, count + 1):
        schema = _schema(rng, 0)
        if schema.get("type") != "object" or rng.random() < 0.1:
            schema = {"type": "object", "properties": {"v": schema}}
        cases.append((f"generated_{number:03d}", schema, _value(rng, schema, 0)))
    return cases


CASES = [
    {"name": f"{name}/{kind}", "schema": schema, "typebox": kind == "typebox", "arguments": arguments}
    for name, schema, arguments in HAND_WRITTEN + generated_cases()
    for kind in ("typebox", "plain")
]


def _python(case: dict[str, Any]) -> dict[str, str]:
    schema = TypeBoxSchema(case["schema"]) if case["typebox"] else case["schema"]
    tool = SimpleNamespace(name="t", parameters=schema)
    try:
        return {"ok": json_stringify(validate_tool_arguments(tool, {"name": "t", "arguments": case["arguments"]}))}
    except Exception as error:
        return {"error": str(error)}


@pytest.fixture(scope="module")
def reference(reference_install: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cases_file = tmp_path_factory.mktemp("validation") / "cases.json"
    cases_file.write_text(json.dumps(CASES), encoding="utf-8")
    completed = subprocess.run(
        ["node", str(REFERENCE_DIR / "run_validation.mjs"), str(cases_file)],
        cwd=REFERENCE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    results: dict[str, Any] = json.loads(completed.stdout)
    return results


def test_cases_convert_something() -> None:
    # The cases are worth comparing: many are changed by a conversion, many are refused.
    converted = refused = 0
    for case in CASES:
        outcome = _python(case)
        if "error" in outcome:
            refused += 1
        elif json.loads(outcome["ok"]) != case["arguments"]:
            converted += 1
    assert converted > 40 and refused > 40


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validation_matches_pi(case: dict[str, Any], reference: dict[str, Any]) -> None:
    expected = reference[case["name"]]
    assert "schemaMismatch" not in expected, f"TypeBox built another schema: {expected.get('schemaMismatch')}"
    assert _python(case) == expected
