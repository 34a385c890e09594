"""Tool-argument validation, as pi-ai's ``validateToolArguments``.

pi converts the arguments before it validates them, in this order, and validates the result:

1. For a TypeBox schema (pi's own tools are built with TypeBox), TypeBox's ``Value.Convert``: a
   number, boolean, string or null where the schema wants another of these (``"3"`` to ``3``,
   ``"true"`` to ``True``, ``null`` to ``"null"``, ...), a single value where it wants an array
   (``{...}`` to ``[{...}]``), integers truncated, enum and literal values converted to the member
   they equal, unions converted to the first member whose conversion fits. Here a
   ``TypeBoxSchema`` (a dict: the JSON form of such a schema) marks these; a plain dict is a plain
   JSON schema, which pi's ``Value.Convert`` leaves alone.
2. pi's own JSON-schema coercion (``coerceWithJsonSchema``: numeric strings to numbers,
   ``"true"`` to ``True``, ``None`` to ``""``/``0``/``False``, ...).
3. Validation that collects every error with AJV's wording.

Tools whose ``parameters`` is a pydantic model class (py_agent's typed schemas, as TypeBox is
pi's) get steps 1 and 2 against the model's JSON schema (its ``$defs`` inlined), then pydantic's
validation, and receive the model instance. (A
validator library is not used because ``jsonschema`` needs ``rpds-py``, which has no Pyodide
wheel; the subset tools use is small.)

The error text is pi's: ``Validation failed for tool "<name>":``, one ``  - <path>: <message>``
line per error, a blank line, ``Received arguments:`` and the original arguments as indented JSON.
"""

from __future__ import annotations

import copy
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ._interop import get_field
from ._util import json_stringify

MAX_ERRORS = 8
"""TypeBox reports at most this many errors (its ``maxErrors`` setting); pi lists what it reports."""


class TypeBoxSchema(dict[str, Any]):
    """A tool's JSON schema that stands for a TypeBox schema, as pi's own tools have: its arguments
    get TypeBox's ``Value.Convert`` before pi's coercion (a plain dict schema gets only the latter)."""


class ToolArgumentsError(ValueError):
    """Raised when tool-call arguments do not match the tool's parameters."""


@dataclass(frozen=True)
class SchemaError:
    path: str
    """Instance path, ``/``-separated, without the leading ``/`` (``""`` for the root)."""
    message: str
    keyword: str
    missing: str | None = None


def validate_tool_arguments(tool: Any, tool_call: Any) -> Any:
    """Validated (and coerced) arguments for ``tool_call`` (an object or mapping with ``name``,
    ``arguments``). The tool call's own ``arguments`` are never mutated."""
    name = get_field(tool_call, "name")
    raw = get_field(tool_call, "arguments")
    parameters = get_field(tool, "parameters")
    if isinstance(parameters, type) and issubclass(parameters, BaseModel):
        schema = _model_schema(parameters)
        args = copy.deepcopy(raw)
        convert_with_typebox(args, schema)
        args = coerce_with_json_schema(args, schema, schema)
        try:
            return parameters.model_validate(args)
        except ValidationError as error:
            lines = [f"  - {_pydantic_path(e['loc'])}: {e['msg']}" for e in error.errors()]
            raise ToolArgumentsError(_format(name, lines, raw)) from None
    args = copy.deepcopy(raw)
    if not isinstance(parameters, Mapping):
        return args
    if isinstance(parameters, TypeBoxSchema):
        convert_with_typebox(args, parameters)
    coerced = coerce_with_json_schema(args, parameters, parameters)
    if coerced is not args and not (isinstance(args, dict) and isinstance(coerced, dict)):
        # As pi: a coerced value that is not an object replaces the arguments only when it is valid.
        return coerced if not schema_errors(coerced, parameters) else args
    args = coerced
    errors = schema_errors(args, parameters)
    if not errors:
        return args
    lines = [f"  - {_format_path(error)}: {error.message}" for error in errors[:MAX_ERRORS]]
    raise ToolArgumentsError(_format(name, lines, raw))


def _format(name: Any, lines: list[str], raw: Any) -> str:
    errors = "\n".join(lines) or "Unknown validation error"
    return f'Validation failed for tool "{name}":\n{errors}\n\nReceived arguments:\n{json_stringify(raw, indent=2)}'


def _pydantic_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "root"


def _format_path(error: SchemaError) -> str:
    base = error.path.replace("/", ".")
    if error.keyword == "required" and error.missing:
        return f"{base}.{error.missing}" if base else error.missing
    return base or "root"


# ---------------------------------------------------------------------------------------------
# TypeBox's Value.Convert (typebox 1.1, value/convert), over the JSON form of a TypeBox schema


_model_schemas: dict[type[BaseModel], dict[str, Any]] = {}


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with ``$defs`` inlined (a TypeBox schema has its nested objects inline)."""
    cached = _model_schemas.get(model)
    if cached is None:
        schema = model.model_json_schema()
        cached = _model_schemas[model] = _inline_refs(schema, schema.get("$defs") or {}, 0)
    return cached


def _inline_refs(schema: Any, defs: Mapping[str, Any], depth: int) -> Any:
    if isinstance(schema, list):
        return [_inline_refs(item, defs, depth) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and depth < 16:
        target = defs.get(ref[len("#/$defs/") :])
        if isinstance(target, Mapping):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return _inline_refs({**target, **rest}, defs, depth + 1)
    return {k: _inline_refs(v, defs, depth) for k, v in schema.items() if k != "$defs"}


_JS_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_JS_RADIX = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_JS_BIGINT = re.compile(r"-?(?:0|[1-9]\d*)n")
_JS_WHITESPACE = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_MAX_SAFE = 2**53 - 1
_FAIL = object()


def _js_to_number(text: str) -> float | int | None:
    """JavaScript's ``+text`` when it is a finite number, else ``None``."""
    stripped = text.strip(_JS_WHITESPACE)
    if not stripped:
        return 0
    if _JS_RADIX.fullmatch(stripped):
        return int(stripped, 0)
    if not _JS_DECIMAL.fullmatch(stripped):
        return None
    number = float(stripped)
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() and abs(number) <= _MAX_SAFE else number


def _try_number(value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    if _is_number(value):
        return value if math.isfinite(value) else _FAIL
    if value is None:
        return 0
    if isinstance(value, str):
        number = _js_to_number(value)
        if number is not None:
            return number
        lower = value.lower()
        if lower in ("false", "true"):
            return 1 if lower == "true" else 0
        if _JS_BIGINT.fullmatch(value):
            big = int(value[:-1])
            return big if -_MAX_SAFE <= big <= _MAX_SAFE else _FAIL
    return _FAIL


def _try_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if _is_number(value):
        return False if value == 0 else True if value == 1 else _FAIL
    if value is None:
        return False
    if isinstance(value, str):
        lower = value.lower()
        if lower == "false" or value == "0":
            return False
        if lower == "true" or value == "1":
            return True
    return _FAIL


def _try_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_number(value):
        return json_stringify(value) if math.isfinite(value) else _FAIL
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    return _FAIL


def _try_null(value: Any) -> Any:
    if value is None or value is False or (_is_number(value) and value == 0):
        return None
    if isinstance(value, str) and (value.lower() in ("undefined", "null") or value in ("", "0")):
        return None
    return _FAIL


def _typebox_kind(schema: Mapping[str, Any]) -> str | None:
    """The TypeBox type a JSON schema is the form of (``None``: one Value.Convert leaves alone)."""
    if "$ref" in schema:
        return "Ref"
    if isinstance(schema.get("anyOf"), list):
        return "Union"
    if isinstance(schema.get("allOf"), list):
        return "Intersect"
    if "const" in schema:
        return "Literal"
    kind = schema.get("type")
    if kind is None and isinstance(schema.get("enum"), list):
        return "Enum"
    if kind == "array":
        return "Tuple" if isinstance(schema.get("items"), list) else "Array"
    if kind == "object":
        if "patternProperties" in schema and "properties" not in schema:
            return "Record"
        return "Object"
    if kind in ("string", "number", "integer", "boolean", "null"):
        return str(kind).capitalize()
    return None


def _key_pattern(key: str) -> Callable[[str], bool]:
    # TypeBox matches property keys with RegExp(`^${key}$`).
    try:
        pattern = re.compile(f"^{key}$")
    except re.error:
        return lambda other: other == key
    return lambda other: pattern.search(other) is not None


def _check(value: Any, schema: Any) -> bool:
    return not schema_errors(value, schema)


def convert_with_typebox(value: Any, schema: Any) -> Any:
    """TypeBox's ``Value.Convert(schema, value)``: objects are converted in place (pi keeps only
    that effect: it ignores the returned value), the converted value is returned."""
    if not isinstance(schema, Mapping):
        return value
    kind = _typebox_kind(schema)
    if kind == "Array":
        items = value if isinstance(value, list) else [value]
        return [convert_with_typebox(item, schema.get("items")) for item in items]
    if kind == "Tuple":
        if isinstance(value, list):
            for index, sub in enumerate(schema["items"][: len(value)]):
                value[index] = convert_with_typebox(value[index], sub)
        return value
    if kind == "Boolean":
        converted = _try_boolean(value)
    elif kind == "Integer":
        converted = _try_number(value)
        if converted is not _FAIL:
            converted = math.trunc(converted)
    elif kind == "Number":
        converted = _try_number(value)
    elif kind == "String":
        converted = _try_string(value)
    elif kind == "Null":
        converted = _try_null(value)
    elif kind == "Literal":
        return _convert_literal(value, schema["const"])
    elif kind == "Enum":
        return _convert_union(value, [{"const": item} for item in schema["enum"]], schema)
    elif kind == "Union":
        return _convert_union(value, schema["anyOf"], schema)
    elif kind == "Intersect":
        return _convert_intersect(value, schema)
    elif kind in ("Object", "Record"):
        if isinstance(value, dict):
            _convert_properties(value, schema, "properties" if kind == "Object" else "patternProperties")
        return value
    else:
        return value
    return value if converted is _FAIL else converted


def _convert_properties(value: dict[str, Any], schema: Mapping[str, Any], key: str) -> None:
    properties = schema.get(key)
    entries = [(_key_pattern(name), sub) for name, sub in (properties or {}).items()]
    keys = list(value)
    for matches, sub in entries:
        for name in keys:
            if matches(name) and name in value:
                value[name] = convert_with_typebox(value[name], sub)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        # As TypeBox: a key is converted once for every property pattern it does not match.
        for matches, _ in entries:
            for name in keys:
                if not matches(name) and name in value:
                    value[name] = convert_with_typebox(value[name], extra)


def _convert_literal(value: Any, const: Any) -> Any:
    if _json_equal(value, const):
        return value
    if isinstance(const, bool):
        converted = _try_boolean(value)
    elif _is_number(const):
        converted = _try_number(value)
    elif isinstance(const, str):
        converted = _try_string(value)
    else:
        return value
    return converted if converted is not _FAIL and _json_equal(converted, const) else value


def _convert_union(value: Any, members: list[Any], union: Mapping[str, Any]) -> Any:
    if any(_check(value, member) for member in members):
        return value
    for member in members:
        candidate = convert_with_typebox(copy.deepcopy(value), member)
        if _check(candidate, union):
            return candidate
    return value


def _convert_intersect(value: Any, schema: Mapping[str, Any]) -> Any:
    members = [m for m in schema["allOf"] if isinstance(m, Mapping)]
    if members and all(_typebox_kind(m) == "Object" for m in members):
        # TypeBox evaluates an intersection of objects to one object with every property.
        merged: dict[str, Any] = {"type": "object", "properties": {}}
        for member in members:
            merged["properties"].update(member.get("properties") or {})
        return convert_with_typebox(value, merged)
    return value


# ---------------------------------------------------------------------------------------------
# Coercion (pi's coerceWithJsonSchema)


def _schema_types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [item for item in kind if isinstance(item, str)]
    return []


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def matches_json_type(value: Any, kind: str) -> bool:
    if kind == "number":
        return _is_number(value) and not (isinstance(value, float) and not math.isfinite(value))
    if kind == "integer":
        return _is_number(value) and float(value).is_integer()
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return False


def _parse_js_number(text: str) -> float | int | None:
    stripped = text.strip()
    if not stripped:
        return None
    try:
        number = float(int(stripped, 0)) if stripped.lower().startswith(("0x", "0o", "0b")) else float(stripped)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() and "." not in stripped and "e" not in stripped.lower() else number


def _coerce_primitive(value: Any, kind: str) -> Any:
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, str):
            parsed = _parse_js_number(value)
            if parsed is not None and (kind == "number" or float(parsed).is_integer()):
                return int(parsed) if kind == "integer" else parsed
            return value
        if isinstance(value, bool):
            return 1 if value else 0
        return value
    if kind == "boolean":
        if value is None:
            return False
        if value == "true":
            return True
        if value == "false":
            return False
        if _is_number(value) and value in (0, 1):
            return value == 1
        return value
    if kind == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if _is_number(value):
            return json_stringify(value)
        return value
    if kind == "null":
        if value == "" or (value is not True and value == 0) or value is False:
            return None
        return value
    return value


def _resolve_ref(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while isinstance(schema.get("$ref"), str) and seen < 32:
        ref: str = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        target: Any = root
        for part in ref.lstrip("#").strip("/").split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return schema
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema


def coerce_with_json_schema(value: Any, schema: Any, root: Mapping[str, Any] | None = None) -> Any:
    if not isinstance(schema, Mapping):
        return value
    root = root if root is not None else schema
    schema = _resolve_ref(schema, root)
    result = value
    for nested in schema.get("allOf") or []:
        result = coerce_with_json_schema(result, nested, root)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            result = _coerce_union(result, schema[key], root)
    kinds = _schema_types(schema)
    matches_member = len(kinds) > 1 and any(matches_json_type(result, kind) for kind in kinds)
    if kinds and not matches_member:
        for kind in kinds:
            candidate = _coerce_primitive(result, kind)
            if type(candidate) is not type(result) or candidate != result:
                result = candidate
                break
    if "object" in kinds and isinstance(result, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if key in result:
                result[key] = coerce_with_json_schema(result[key], sub, root)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in list(result):
                if key not in properties:
                    result[key] = coerce_with_json_schema(result[key], extra, root)
    if "array" in kinds and isinstance(result, list):
        items = schema.get("items")
        if isinstance(items, list):
            for index, sub in enumerate(items[: len(result)]):
                result[index] = coerce_with_json_schema(result[index], sub, root)
        elif isinstance(items, Mapping):
            for index in range(len(result)):
                result[index] = coerce_with_json_schema(result[index], items, root)
    return result


def _coerce_union(value: Any, schemas: list[Any], root: Mapping[str, Any]) -> Any:
    for schema in schemas:
        candidate = coerce_with_json_schema(copy.deepcopy(value), schema, root)
        if isinstance(schema, Mapping) and not schema_errors(candidate, schema, root):
            return candidate
    return value


# ---------------------------------------------------------------------------------------------
# Validation with AJV's wording


_FORMATS: dict[str, re.Pattern[str]] = {
    "date-time": re.compile(r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:?\d\d)$"),
    "date": re.compile(r"^\d{4}-\d\d-\d\d$"),
    "time": re.compile(r"^\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:?\d\d)?$"),
    "email": re.compile(r"^[^\s@]+@[^\s@]+\.[^\s@]+$"),
    "uri": re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$"),
    "uuid": re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
}


def _num(value: Any) -> str:
    return json_stringify(value)


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def schema_errors(value: Any, schema: Any, root: Mapping[str, Any] | None = None, path: str = "") -> list[SchemaError]:
    """Every error of ``value`` against ``schema``, in AJV's order and wording."""
    if schema is True or schema is None:
        return []
    if schema is False:
        return [SchemaError(path, "boolean schema is false", "false schema")]
    if not isinstance(schema, Mapping):
        return []
    root = root if root is not None else schema
    schema = _resolve_ref(schema, root)
    errors: list[SchemaError] = []

    for nested in schema.get("allOf") or []:
        errors.extend(schema_errors(value, nested, root, path))
    if isinstance(schema.get("anyOf"), list):
        branch_errors = [schema_errors(value, sub, root, path) for sub in schema["anyOf"]]
        if all(branch_errors):
            for branch in branch_errors:
                errors.extend(branch)
            errors.append(SchemaError(path, "must match a schema in anyOf", "anyOf"))
    if isinstance(schema.get("oneOf"), list):
        passing = sum(1 for sub in schema["oneOf"] if not schema_errors(value, sub, root, path))
        if passing != 1:
            errors.append(SchemaError(path, "must match exactly one schema in oneOf", "oneOf"))
    if "not" in schema and not schema_errors(value, schema["not"], root, path):
        errors.append(SchemaError(path, "must NOT be valid", "not"))

    kinds = _schema_types(schema)
    wrong_type = bool(kinds) and not any(matches_json_type(value, kind) for kind in kinds)
    if wrong_type:
        errors.append(SchemaError(path, f"must be {','.join(kinds)}", "type"))
    # TypeBox checks const and enum whatever the type; the other keywords only for their own type.
    if "const" in schema and not _json_equal(value, schema["const"]):
        errors.append(SchemaError(path, "must be equal to constant", "const"))
    if isinstance(schema.get("enum"), list) and not any(_json_equal(value, item) for item in schema["enum"]):
        errors.append(SchemaError(path, "must be equal to one of the allowed values", "enum"))
    if wrong_type:
        return errors

    if isinstance(value, dict):
        errors.extend(_object_errors(value, schema, root, path))
    elif isinstance(value, list):
        errors.extend(_array_errors(value, schema, root, path))
    elif isinstance(value, str):
        errors.extend(_string_errors(value, schema, path))
    elif _is_number(value):
        errors.extend(_number_errors(value, schema, path))
    return errors


def _child(path: str, key: str | int) -> str:
    # Not JSON-Pointer escaped: TypeBox writes keys as they are (pi then turns "/" into ".").
    return f"{path}/{key}" if path else str(key)


def _object_errors(
    value: dict[str, Any], schema: Mapping[str, Any], root: Mapping[str, Any], path: str
) -> list[SchemaError]:
    # TypeBox's order: required, additional properties, properties, pattern properties, counts.
    errors: list[SchemaError] = []
    required = [key for key in schema.get("required") or [] if key not in value]
    if required:
        errors.append(
            SchemaError(path, f"must have required properties {', '.join(required)}", "required", required[0])
        )
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    unknown = [key for key in value if key not in properties and not _pattern_property(schema, key)]
    if (extra is False and unknown) or (
        isinstance(extra, Mapping) and any(schema_errors(value[key], extra, root) for key in unknown)
    ):
        # A failing additional property is reported once, at the object, with this wording.
        errors.append(SchemaError(path, "must not have additional properties", "additionalProperties"))
    for key, sub in properties.items():
        if key in value:
            errors.extend(schema_errors(value[key], sub, root, _child(path, key)))
    for pattern, sub in (schema.get("patternProperties") or {}).items():
        for key in value:
            if re.search(pattern, key):
                errors.extend(schema_errors(value[key], sub, root, _child(path, key)))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        errors.append(
            SchemaError(path, f"must not have fewer than {schema['minProperties']} properties", "minProperties")
        )
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(
            SchemaError(path, f"must not have more than {schema['maxProperties']} properties", "maxProperties")
        )
    return errors


def _pattern_property(schema: Mapping[str, Any], key: str) -> bool:
    return any(re.search(pattern, key) for pattern in schema.get("patternProperties") or {})


def _array_errors(value: list[Any], schema: Mapping[str, Any], root: Mapping[str, Any], path: str) -> list[SchemaError]:
    errors: list[SchemaError] = []
    items = schema.get("items")
    prefix = schema.get("prefixItems")
    if isinstance(items, list):
        prefix, items = items, schema.get("additionalItems")
    if isinstance(prefix, list):
        for index, sub in enumerate(prefix[: len(value)]):
            errors.extend(schema_errors(value[index], sub, root, _child(path, index)))
    start = len(prefix) if isinstance(prefix, list) else 0
    if isinstance(items, Mapping):
        for index in range(start, len(value)):
            errors.extend(schema_errors(value[index], items, root, _child(path, index)))
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(SchemaError(path, f"must not have fewer than {schema['minItems']} items", "minItems"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(SchemaError(path, f"must not have more than {schema['maxItems']} items", "maxItems"))
    if schema.get("uniqueItems"):
        seen = [json_stringify(item) for item in value]
        if len(set(seen)) != len(seen):
            errors.append(SchemaError(path, "must not have duplicate items", "uniqueItems"))
    return errors


def _string_errors(value: str, schema: Mapping[str, Any], path: str) -> list[SchemaError]:
    errors: list[SchemaError] = []
    length = len(value)
    if "minLength" in schema and length < schema["minLength"]:
        errors.append(SchemaError(path, f"must not have fewer than {schema['minLength']} characters", "minLength"))
    if "maxLength" in schema and length > schema["maxLength"]:
        errors.append(SchemaError(path, f"must not have more than {schema['maxLength']} characters", "maxLength"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and re.search(pattern, value) is None:
        errors.append(SchemaError(path, f'must match pattern "{pattern}"', "pattern"))
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS and not _FORMATS[fmt].match(value):
        errors.append(SchemaError(path, f'must match format "{fmt}"', "format"))
    return errors


def _number_errors(value: float, schema: Mapping[str, Any], path: str) -> list[SchemaError]:
    errors: list[SchemaError] = []
    checks = (
        ("maximum", operator.le, "<="),
        ("minimum", operator.ge, ">="),
        ("exclusiveMaximum", operator.lt, "<"),
        ("exclusiveMinimum", operator.gt, ">"),
    )
    for keyword, ok, op in checks:
        limit = schema.get(keyword)
        if isinstance(limit, int | float) and not isinstance(limit, bool) and not ok(value, limit):
            errors.append(SchemaError(path, f"must be {op} {_num(limit)}", keyword))
    multiple = schema.get("multipleOf")
    if _is_number(multiple) and multiple and not float(value / multiple).is_integer():
        errors.append(SchemaError(path, f"must be multiple of {_num(multiple)}", "multipleOf"))
    return errors
