"""The one rule for loose input (docs/port-decisions.md #20): snake_case name first, then pi's camelCase;
the first present with a value other than ``None`` wins; mappings by key, anything else by attribute."""

from types import SimpleNamespace

from py_agent.ai._interop import camel_to_snake, get_field, snake_to_camel


def test_names_convert_both_ways():
    assert snake_to_camel("stop_reason") == "stopReason"
    assert snake_to_camel("total_tokens") == "totalTokens"
    assert snake_to_camel("name") == "name"
    assert camel_to_snake("stopReason") == "stop_reason"
    assert camel_to_snake("name") == "name"


def test_mappings_snake_case_first_then_camel_case():
    assert get_field({"stopReason": "error"}, "stop_reason") == "error"
    assert get_field({"stop_reason": "length"}, "stop_reason") == "length"
    assert get_field({"stop_reason": "length", "stopReason": "error"}, "stop_reason") == "length"
    assert get_field({"stop_reason": None, "stopReason": "error"}, "stop_reason") == "error"
    assert get_field({}, "stop_reason") is None


def test_false_and_zero_are_values_not_missing():
    assert get_field({"block": False}, "block") is False
    assert get_field({"is_error": False, "isError": True}, "is_error") is False
    assert get_field({"cacheRead": 0}, "cache_read") == 0


def test_objects_by_attribute():
    assert get_field(SimpleNamespace(stop_reason="stop"), "stop_reason") == "stop"
    assert get_field(SimpleNamespace(stopReason="stop"), "stop_reason") == "stop"
    assert get_field(SimpleNamespace(), "stop_reason") is None
    assert get_field(None, "stop_reason") is None


def test_an_explicit_camel_case_name():
    assert get_field({"toolName": "ls"}, "name", "toolName") == "ls"
    assert get_field(SimpleNamespace(toolName="ls"), "name", "toolName") == "ls"
