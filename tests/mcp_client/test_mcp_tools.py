"""MCP results as pi's tool-result content, and tool names as pi makes them (no server needed)."""

from __future__ import annotations

import hashlib

from py_agent.ai.types import ImageContent, TextContent
from py_agent.mcp import mcp_tool_name, result_content


def test_tool_names_replace_every_other_character() -> None:
    assert mcp_tool_name("my-server", "get.weather/now") == "mcp__my_server__get_weather_now"
    assert mcp_tool_name("s", "dé") == "mcp__s__d_"


def test_long_or_colliding_names_get_pis_hash_suffix() -> None:
    digest = hashlib.sha256(b"server\0" + b"t" * 80).hexdigest()[:8]
    long = mcp_tool_name("server", "t" * 80)
    assert len(long) == 64 and long.endswith("_" + digest)
    taken = {"mcp__s__a_b"}
    assert mcp_tool_name("s", "a-b", taken.__contains__).startswith("mcp__s__a_b_")


def test_each_kind_of_block_maps_as_pi_maps_it() -> None:
    content = result_content(
        {
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
                {"type": "resource", "resource": {"uri": "res://t", "text": "embedded"}},
                {"type": "resource", "resource": {"uri": "res://i", "blob": "BBBB", "mimeType": "image/jpeg"}},
                {"type": "resource", "resource": {"uri": "res://b", "blob": "CCCC", "mimeType": "application/zip"}},
            ]
        }
    )
    assert content == [
        TextContent(text="hello"),
        ImageContent(data="AAAA", mime_type="image/png"),
        TextContent(text="[audio audio/wav omitted]"),
        TextContent(text="a.txt: file:///a.txt"),
        TextContent(text="embedded"),
        ImageContent(data="BBBB", mime_type="image/jpeg"),
        TextContent(text="[binary resource res://b (application/zip) omitted]"),
    ]


def test_structured_content_alone_becomes_its_json() -> None:
    assert result_content({"content": [], "structuredContent": {"a": 1}}) == [TextContent(text='{\n  "a": 1\n}')]


def test_text_over_20_kb_keeps_its_start_and_end() -> None:
    text = "a" * 15000 + "b" * 15000
    [block, image] = result_content(
        {"content": [{"type": "text", "text": text}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}
    )
    assert isinstance(block, TextContent) and isinstance(image, ImageContent)
    assert block.text.startswith("Warning: truncated output (original token count: 7500)\nTotal output lines: 1\n\n")
    assert "a" * 10240 + "…9520 chars truncated…" + "b" * 10240 in block.text
