# ruff: noqa: E501  (reference strings are kept verbatim on one line)
"""Tool-argument validation (docs/port-decisions.md #6): pydantic-model tools receive the model instance; JSON Schema
tools get pi's coercion and error text. REFERENCE_CASES were produced by pi-ai 0.79.10's
``validateToolArguments`` in Node on the same schemas and arguments."""

import copy

import pytest
from helpers import asst, asst_tools, call, new_agent, result_text, simple_tool
from pydantic import BaseModel, Field

from py_agent.ai.types import TextContent, ToolCall
from py_agent.ai.validation import ToolArgumentsError, TypeBoxSchema, validate_tool_arguments
from py_agent.core.types import AgentTool, AgentToolResult

REFERENCE_CASES = [  # (schema, arguments, validated, error text)
    ({"type": "object", "properties": {"a": {"type": "number"}}}, {"a": "5"}, {"a": 5}, None),
    ({"type": "object", "properties": {"a": {"type": "number"}}}, {"a": "1.5e2"}, {"a": 150}, None),
    ({"type": "object", "properties": {"a": {"type": "number"}}}, {"a": " 7 "}, {"a": 7}, None),
    (
        {"type": "object", "properties": {"a": {"type": "number"}}},
        {"a": ""},
        None,
        'Validation failed for tool "t":\n  - a: must be number\n\nReceived arguments:\n{\n  "a": ""\n}',
    ),
    ({"type": "object", "properties": {"a": {"type": "number"}}}, {"a": True}, {"a": 1}, None),
    ({"type": "object", "properties": {"a": {"type": "number"}}}, {"a": None}, {"a": 0}, None),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": "5"}, {"a": 5}, None),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"a": "5.5"},
        None,
        'Validation failed for tool "t":\n  - a: must be integer\n\nReceived arguments:\n{\n  "a": "5.5"\n}',
    ),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": False}, {"a": 0}, None),
    ({"type": "object", "properties": {"a": {"type": "boolean"}}}, {"a": "false"}, {"a": False}, None),
    ({"type": "object", "properties": {"a": {"type": "boolean"}}}, {"a": 1}, {"a": True}, None),
    ({"type": "object", "properties": {"a": {"type": "boolean"}}}, {"a": 0}, {"a": False}, None),
    (
        {"type": "object", "properties": {"a": {"type": "boolean"}}},
        {"a": "yes"},
        None,
        'Validation failed for tool "t":\n  - a: must be boolean\n\nReceived arguments:\n{\n  "a": "yes"\n}',
    ),
    ({"type": "object", "properties": {"a": {"type": "boolean"}}}, {"a": None}, {"a": False}, None),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": 5}, {"a": "5"}, None),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": 1.5}, {"a": "1.5"}, None),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": True}, {"a": "true"}, None),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": None}, {"a": ""}, None),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"a": {}},
        None,
        'Validation failed for tool "t":\n  - a: must be string\n\nReceived arguments:\n{\n  "a": {}\n}',
    ),
    ({"type": "object", "properties": {"a": {"type": "null"}}}, {"a": ""}, {"a": None}, None),
    ({"type": "object", "properties": {"a": {"type": "null"}}}, {"a": 0}, {"a": None}, None),
    ({"type": "object", "properties": {"a": {"type": ["number", "string"]}}}, {"a": "5"}, {"a": "5"}, None),
    ({"type": "object", "properties": {"a": {"type": ["number", "boolean"]}}}, {"a": "5"}, {"a": 5}, None),
    ({"type": "object", "properties": {"a": {"type": ["boolean", "number"]}}}, {"a": "true"}, {"a": True}, None),
    (
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}}},
        {"a": "true"},
        {"a": True},
        None,
    ),
    (
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}}},
        {"a": "7"},
        {"a": 7},
        None,
    ),
    (
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "number"}}}},
        {"a": ["1", "2", 3]},
        {"a": [1, 2, 3]},
        None,
    ),
    (
        {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]}}},
        {"a": ["1", 2, "x"]},
        {"a": [1, "2", "x"]},
        None,
    ),
    (
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}}},
        {"a": {"b": "3"}},
        {"a": {"b": 3}},
        None,
    ),
    ({"type": "object", "additionalProperties": {"type": "number"}}, {"x": "1", "y": "2"}, {"x": 1, "y": 2}, None),
    ({"type": "object", "properties": {"a": {"allOf": [{"type": "number"}]}}}, {"a": "4"}, {"a": 4}, None),
    (
        {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
        {"a": "abc", "b": 1},
        None,
        'Validation failed for tool "t":\n  - a: must be number\n\nReceived arguments:\n{\n  "a": "abc",\n  "b": 1\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["a"]},
        {"b": "x"},
        None,
        'Validation failed for tool "t":\n  - a: must have required properties a\n  - b: must be number\n\nReceived arguments:\n{\n  "b": "x"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]}}},
        {"a": "z"},
        None,
        'Validation failed for tool "t":\n  - a: must be equal to one of the allowed values\n\nReceived arguments:\n{\n  "a": "z"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "number", "multipleOf": 2}}},
        {"a": 3},
        None,
        'Validation failed for tool "t":\n  - a: must be multiple of 2\n\nReceived arguments:\n{\n  "a": 3\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}}},
        {"a": "abc"},
        None,
        'Validation failed for tool "t":\n  - a: must not have more than 2 characters\n\nReceived arguments:\n{\n  "a": "abc"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}},
        {"a": [1, 1]},
        None,
        'Validation failed for tool "t":\n  - a: must not have duplicate items\n\nReceived arguments:\n{\n  "a": [\n    1,\n    1\n  ]\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "number", "minimum": 1, "maximum": 3}}},
        {"a": "5"},
        None,
        'Validation failed for tool "t":\n  - a: must be <= 3\n\nReceived arguments:\n{\n  "a": "5"\n}',
    ),
    (
        {
            "type": "object",
            "properties": {
                "value": {"type": "string"},
                "n": {"type": "number", "minimum": 3},
                "e": {"enum": ["a", "b"]},
                "arr": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"oldText": {"type": "string"}}, "required": ["oldText"]},
                },
            },
            "required": ["value"],
            "additionalProperties": False,
        },
        {"value": "x", "arr": [{}]},
        None,
        'Validation failed for tool "t":\n  - arr.0.oldText: must have required properties oldText\n\nReceived arguments:\n{\n  "value": "x",\n  "arr": [\n    {}\n  ]\n}',
    ),
    (
        {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
            "additionalProperties": False,
        },
        {"value": "x", "extra": 1},
        None,
        'Validation failed for tool "t":\n  - root: must not have additional properties\n\nReceived arguments:\n{\n  "value": "x",\n  "extra": 1\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]},
        {},
        None,
        'Validation failed for tool "t":\n  - a: must have required properties a, b\n\nReceived arguments:\n{}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"a": 1.5},
        None,
        'Validation failed for tool "t":\n  - a: must be integer\n\nReceived arguments:\n{\n  "a": 1.5\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^x"}}},
        {"a": "y"},
        None,
        'Validation failed for tool "t":\n  - a: must not have fewer than 2 characters\n  - a: must match pattern "^x"\n\nReceived arguments:\n{\n  "a": "y"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "array", "minItems": 2, "items": {"type": "number"}}}},
        {"a": ["q"]},
        None,
        'Validation failed for tool "t":\n  - a.0: must be number\n  - a: must not have fewer than 2 items\n\nReceived arguments:\n{\n  "a": [\n    "q"\n  ]\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"const": "k"}}},
        {"a": "z"},
        None,
        'Validation failed for tool "t":\n  - a: must be equal to constant\n\nReceived arguments:\n{\n  "a": "z"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "number"}]}}},
        {"a": [1]},
        None,
        'Validation failed for tool "t":\n  - a: must be string\n  - a: must be number\n  - a: must match a schema in anyOf\n\nReceived arguments:\n{\n  "a": [\n    1\n  ]\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "boolean"}}}}},
        {"a": {"b": "maybe"}},
        None,
        'Validation failed for tool "t":\n  - a.b: must be boolean\n\nReceived arguments:\n{\n  "a": {\n    "b": "maybe"\n  }\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "number", "maximum": 3, "exclusiveMinimum": 0}}},
        {"a": 0},
        None,
        'Validation failed for tool "t":\n  - a: must be > 0\n\nReceived arguments:\n{\n  "a": 0\n}',
    ),
    (
        {
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string"}, "maxItems": 1, "uniqueItems": True}},
        },
        {"a": ["x", "x"]},
        None,
        'Validation failed for tool "t":\n  - a: must not have more than 1 items\n  - a: must not have duplicate items\n\nReceived arguments:\n{\n  "a": [\n    "x",\n    "x"\n  ]\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
        {"a": "x"},
        None,
        'Validation failed for tool "t":\n  - a: must match format "email"\n\nReceived arguments:\n{\n  "a": "x"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "object", "additionalProperties": {"type": "number"}}}},
        {"a": {"x": "1", "y": "z"}},
        None,
        'Validation failed for tool "t":\n  - a: must not have additional properties\n\nReceived arguments:\n{\n  "a": {\n    "x": "1",\n    "y": "z"\n  }\n}',
    ),
    (
        {
            "type": "object",
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {
                        "b": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"c": {"type": "number"}}, "required": ["c"]},
                        }
                    },
                }
            },
        },
        {"a": {"b": [{"c": "1"}, {}]}},
        None,
        'Validation failed for tool "t":\n  - a.b.1.c: must have required properties c\n\nReceived arguments:\n{\n  "a": {\n    "b": [\n      {\n        "c": "1"\n      },\n      {}\n    ]\n  }\n}',
    ),
    (
        {"type": "object", "properties": {"a/b": {"type": "number"}}},
        {"a/b": "x"},
        None,
        'Validation failed for tool "t":\n  - a.b: must be number\n\nReceived arguments:\n{\n  "a/b": "x"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"a": "Ünïcödé 😀"},
        {"a": "Ünïcödé 😀"},
        None,
    ),
]
REFERENCE_CASES += [
    (
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"a": {"ü": '😀 "q"'}},
        None,
        'Validation failed for tool "t":\n  - a: must be string\n\nReceived arguments:\n{\n  "a": {\n    "ü": "😀 \\"q\\""\n  }\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "number"}}},
        {"a": 1.0, "b": 2.5, "c": [True, None]},
        {"a": 1, "b": 2.5, "c": [True, None]},
        None,
    ),
    (
        {"type": "object", "additionalProperties": {"type": "number"}},
        {"x": "z", "y": "w"},
        None,
        'Validation failed for tool "t":\n  - root: must not have additional properties\n\nReceived arguments:\n{\n  "x": "z",\n  "y": "w"\n}',
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "number"}},
        {"a": 5, "x": "z"},
        None,
        'Validation failed for tool "t":\n  - root: must not have additional properties\n\nReceived arguments:\n{\n  "a": 5,\n  "x": "z"\n}',
    ),
    (
        {"type": "object", "properties": {"a/b": {"type": "object", "properties": {"c~d": {"type": "number"}}}}},
        {"a/b": {"c~d": "x"}},
        None,
        'Validation failed for tool "t":\n  - a.b.c~d: must be number\n\nReceived arguments:\n{\n  "a/b": {\n    "c~d": "x"\n  }\n}',
    ),
]


def tool_for(schema, name="t"):
    return AgentTool(name=name, label=name, description="", parameters=schema)


@pytest.mark.parametrize("schema, arguments, expected, error", REFERENCE_CASES)
def test_json_schema_validation_matches_reference(schema, arguments, expected, error):
    original = copy.deepcopy(arguments)
    if error is None:
        result = validate_tool_arguments(tool_for(schema), {"name": "t", "arguments": arguments})
        assert result == expected
        assert _same_json_types(result, expected)
    else:
        with pytest.raises(Exception) as info:
            validate_tool_arguments(tool_for(schema), {"name": "t", "arguments": arguments})
        assert str(info.value) == error
    assert arguments == original  # the tool call's arguments are never mutated


def _same_json_types(a, b):
    """JSON type equality: 5 and 5.0 are both numbers, True is not a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json_types(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json_types(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b)


def test_validation_accepts_tool_call_objects_and_returns_a_copy():
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}
    tool_call = ToolCall(id="c", name="t", arguments={"items": ["a", 1]})
    result = validate_tool_arguments(tool_for(schema), tool_call)
    assert result == {"items": ["a", "1"]}
    assert tool_call.arguments == {"items": ["a", 1]}
    assert result is not tool_call.arguments
    assert result["items"] is not tool_call.arguments["items"]


def test_error_text_format():
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["path"],
    }
    with pytest.raises(Exception) as info:
        validate_tool_arguments(tool_for(schema, "read"), {"name": "read", "arguments": {"count": "many"}})
    lines = str(info.value).split("\n")
    assert lines[0] == 'Validation failed for tool "read":'
    assert lines[1] == "  - path: must have required properties path"
    assert lines[2] == "  - count: must be integer"
    assert lines[3] == ""
    assert lines[4] == "Received arguments:"
    assert "\n".join(lines[5:]) == '{\n  "count": "many"\n}'


class EditParams(BaseModel):
    path: str
    count: int = 1
    tags: list[str] = Field(default_factory=list)


async def test_pydantic_tool_receives_model_instance():
    received = []

    async def execute(tool_call_id, params, signal, on_update):
        received.append(params)
        return AgentToolResult(content=[TextContent(text=f"{params.path}:{params.count}")], details=None)

    tool = simple_tool("edit", execute, EditParams)
    assistant = asst_tools(call("c1", "edit", {"path": "a.txt", "count": "3"}))
    agent, _, rec = new_agent(assistant, asst("ok"), tools=[tool])
    await agent.prompt("go")
    assert isinstance(received[0], EditParams)
    assert received[0] == EditParams(path="a.txt", count=3, tags=[])
    assert result_text(rec.first("XE").result) == "a.txt:3"
    assert rec.first("XS").args == {"path": "a.txt", "count": "3"}
    assert assistant.content[0].arguments == {"path": "a.txt", "count": "3"}


async def test_pydantic_before_tool_call_sees_model_instance():
    seen = []

    async def execute(tool_call_id, params, signal, on_update):
        seen.append(("execute", params))
        return AgentToolResult(content=[TextContent(text="ok")], details=None)

    def before(ctx, signal):
        seen.append(("before", ctx.args))

    tool = simple_tool("edit", execute, EditParams)
    agent, _, _ = new_agent(
        asst_tools(call("c1", "edit", {"path": "p"})), asst("ok"), tools=[tool], before_tool_call=before
    )
    await agent.prompt("go")
    assert seen[0][0] == "before" and isinstance(seen[0][1], EditParams)
    assert seen[1][1] is seen[0][1]


async def test_pydantic_validation_failure():
    executed = []

    async def execute(tool_call_id, params, signal, on_update):
        executed.append(params)

    tool = simple_tool("edit", execute, EditParams)
    agent, stream, rec = new_agent(asst_tools(call("c1", "edit", {"count": "x"})), asst("ok"), tools=[tool])
    await agent.prompt("go")
    assert executed == []
    end = rec.first("XE")
    assert end.is_error is True
    text = result_text(end.result)
    lines = text.split("\n")
    assert lines[0] == 'Validation failed for tool "edit":'
    error_lines = lines[1 : lines.index("")]
    assert len(error_lines) == 2
    assert all(line.startswith("  - ") for line in error_lines)
    assert any("path" in line for line in error_lines)
    assert any("count" in line for line in error_lines)
    assert text.endswith('\n\nReceived arguments:\n{\n  "count": "x"\n}')
    assert stream.call_count == 2


def test_pydantic_validate_tool_arguments_directly():
    tool = tool_for(EditParams, "edit")
    result = validate_tool_arguments(tool, {"name": "edit", "arguments": {"path": "x", "tags": ["a"]}})
    assert result == EditParams(path="x", tags=["a"])
    with pytest.raises(Exception) as info:
        validate_tool_arguments(tool, {"name": "edit", "arguments": {}})
    assert str(info.value).startswith('Validation failed for tool "edit":\n  - path: ')
    assert str(info.value).endswith("\n\nReceived arguments:\n{}")


def test_provider_view_of_pydantic_tool_is_json_schema():
    from py_agent.ai.types import tool_json_schema

    schema = tool_json_schema(EditParams)
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"path", "count", "tags"}
    assert schema["required"] == ["path"]


class Replacement(BaseModel):
    old_text: str = Field(alias="oldText")
    new_text: str = Field(alias="newText")


class MultiEdit(BaseModel):
    path: str
    edits: list[Replacement]
    line: int | None = None


def test_pydantic_arguments_get_typebox_conversions_first():
    # As pi's TypeBox tools: one edit where a list is wanted becomes a list, an integer is truncated,
    # null for a string becomes "null"; pydantic then validates the converted value.
    tool = {"name": "edit", "parameters": MultiEdit}
    args = validate_tool_arguments(
        tool, {"name": "edit", "arguments": {"path": None, "edits": {"oldText": "a", "newText": 1}, "line": "4.7"}}
    )
    assert args == MultiEdit(path="null", edits=[Replacement(oldText="a", newText="1")], line=4)


def test_typebox_schema_converts_and_plain_schema_does_not():
    schema = {
        "type": "object",
        "properties": {"edits": {"type": "array", "items": {"type": "object"}}, "n": {"type": "integer"}},
        "required": ["edits"],
    }
    raw = {"edits": {"oldText": "a"}, "n": "2.5"}
    converted = validate_tool_arguments(
        {"name": "t", "parameters": TypeBoxSchema(schema)}, {"name": "t", "arguments": raw}
    )
    assert converted == {"edits": [{"oldText": "a"}], "n": 2}
    assert raw == {"edits": {"oldText": "a"}, "n": "2.5"}  # the call's own arguments are never changed
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments({"name": "t", "parameters": schema}, {"name": "t", "arguments": raw})
    assert "  - edits: must be array\n  - n: must be integer\n" in str(info.value)


def test_workspace_tools_accept_one_edit_for_the_list():
    from py_agent.tools.files import EDIT_SCHEMA

    args = validate_tool_arguments(
        {"name": "edit", "parameters": EDIT_SCHEMA},
        {"name": "edit", "arguments": {"path": "a.txt", "edits": {"oldText": "a", "newText": "b"}}},
    )
    assert args["edits"] == [{"oldText": "a", "newText": "b"}]
