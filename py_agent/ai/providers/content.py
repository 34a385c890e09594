"""Small helpers the wire mappings share when they convert a ``Context``: text clean-up, ids,
tool schemas, content blocks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..types import (
    TextContent,
    tool_json_schema,
)

_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Remove lone UTF-16 surrogates (they cannot be encoded as UTF-8)."""
    if text.isascii():
        return text
    return _SURROGATES.sub("", text)


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def short_hash(text: str) -> str:
    """pi's ``shortHash``: a deterministic 53-bit hash over UTF-16 code units, in base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def tool_spec(tool: Any) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, JSON schema)`` of a tool given as a ``Tool``, an ``AgentTool`` or a dict."""
    if isinstance(tool, Mapping):
        name, description, parameters = tool.get("name"), tool.get("description"), tool.get("parameters")
    else:
        name = getattr(tool, "name", None)
        description = getattr(tool, "description", None)
        parameters = getattr(tool, "parameters", None)
    schema = tool_json_schema(parameters) if parameters is not None else {"type": "object", "properties": {}}
    return str(name or ""), str(description or ""), schema


def content_blocks(content: Any) -> list[Any]:
    """User/tool-result content as a list of blocks (a string becomes one text block)."""
    if isinstance(content, str):
        return [TextContent(text=content)]
    return list(content or [])
