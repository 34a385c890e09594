"""MCP tools as agent tools, as pi's MCP extension makes them (``direct`` exposure).

A tool is named ``mcp__<server>__<tool>`` with every character other than letters, digits and
``_`` replaced by ``_`` (longer than 64 characters, or colliding: a hash suffix). Its input schema is
the server's, made an object schema, and validated like every JSON-schema tool
(:mod:`py_agent.ai.validation`). A result becomes pi's tool-result content: text and images as
they are, embedded text resources as text, image resources as images, the rest (audio, resource
links, binary resources) as a short text; a result with only ``structuredContent`` as its JSON;
text over 20 KB keeps its start and end. ``isError`` results fail the call with their text.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..ai.abort import AbortSignal
from ..ai.types import ImageContent, TextContent
from ..core.types import AgentTool, AgentToolResult
from .client import McpClient, Protocol
from .http import TokenSource

MAX_TOOL_NAME_LENGTH = 64
MCP_OUTPUT_MAX_BYTES = 20 * 1024
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")

Content = TextContent | ImageContent


class McpToolError(Exception):
    """An MCP tool answered with ``isError``: the model gets its text as the error."""


def mcp_tool_name(server: str, tool: str, taken: Callable[[str], bool] = lambda name: False) -> str:
    name = _NOT_NAME.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME_LENGTH and not taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def input_schema(schema: Any) -> dict[str, Any]:
    """An object schema (MCP servers may omit ``type``; some providers want ``properties``)."""
    result = dict(schema) if isinstance(schema, Mapping) else {}
    result.setdefault("type", "object")
    result.setdefault("properties", {})
    return result


def _block_content(block: Any) -> Content:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return TextContent(text=str(block.get("text", "")))
    if kind == "image":
        return ImageContent(data=str(block.get("data", "")), mime_type=str(block.get("mimeType", "image/png")))
    if kind == "audio":
        return TextContent(text=f"[audio {block.get('mimeType')} omitted]")
    if kind == "resource_link":
        return TextContent(text=f"{block.get('name')}: {block.get('uri')}")
    if kind == "resource":
        resource = block.get("resource") if isinstance(block.get("resource"), dict) else {}
        mime = resource.get("mimeType")
        if "text" in resource:
            return TextContent(text=str(resource["text"]))
        if isinstance(mime, str) and mime.startswith("image/") and isinstance(resource.get("blob"), str):
            return ImageContent(data=resource["blob"], mime_type=mime)
        return TextContent(text=f"[binary resource {resource.get('uri')} ({mime or 'unknown type'}) omitted]")
    return TextContent(text=f"[unsupported MCP content {kind}]")


def _truncate_middle(text: str, max_bytes: int) -> str | None:
    """Codex's truncation (as pi): the start and the end, half each, around ``…N chars truncated…``."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return None
    head = data[: max_bytes // 2].decode("utf-8", errors="ignore")
    tail = data[len(data) - (max_bytes - max_bytes // 2) :].decode("utf-8", errors="ignore")
    removed = len(text) - len(head) - len(tail)
    lines = text.count("\n") + 1 - (1 if text.endswith("\n") else 0)
    tokens = -(-len(data) // 4)
    return (
        f"Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n"
        f"{head}…{removed} chars truncated…{tail}"
    )


def result_content(result: Mapping[str, Any]) -> list[Content]:
    """pi's model-facing content of a ``CallToolResult``."""
    blocks = result.get("content") or []
    content = [_block_content(block) for block in blocks]
    if not content and result.get("structuredContent") is not None:
        content.append(TextContent(text=json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)))
    text = "\n".join(block.text for block in content if isinstance(block, TextContent))
    truncated = _truncate_middle(text, MCP_OUTPUT_MAX_BYTES)
    if truncated is not None:
        content = [TextContent(text=truncated), *(block for block in content if isinstance(block, ImageContent))]
    return content


class McpServer:
    """A named MCP server and its tools as :class:`AgentTool` s.

    ``enabled_tools``: when given, only these (MCP) tool names become agent tools. ``on_tools``
    is called with the new tool list after the server announced a change
    (``notifications/tools/list_changed``).
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        client: McpClient | None = None,
        token: TokenSource | None = None,
        origin: str | None = None,
        protocol: Protocol = "auto",
        **client_options: Any,
    ) -> None:
        self.name = name
        self.client = client or McpClient(
            url, headers=headers, timeout=timeout, token=token, origin=origin, protocol=protocol, **client_options
        )
        self.definitions: list[dict[str, Any]] = []
        self.tools: list[AgentTool] = []
        self.disabled: set[str] = set()
        self._tool_listeners: list[Callable[[list[AgentTool]], object]] = []
        self.client.on_notification("notifications/tools/list_changed", lambda _: self._schedule_refresh())
        self._refreshing: asyncio.Future[None] | None = None

    @classmethod
    async def connect(cls, name: str, url: str, **options: Any) -> McpServer:
        """Connect and list the tools."""
        server = cls(name, url, **options)
        try:
            await server.refresh()
        except BaseException:
            await server.close()
            raise
        return server

    async def refresh(self, signal: AbortSignal | None = None) -> list[AgentTool]:
        """List the server's tools again (connecting first when needed)."""
        if not self.client.connected:
            await self.client.connect(signal)
        tools_capability = self.client.capabilities.get("tools")
        self.definitions = await self.client.list_tools(signal) if tools_capability is not None else []
        self.rebuild()
        return self.tools

    def _schedule_refresh(self) -> None:
        async def run() -> None:
            await self.refresh()
            for listener in list(self._tool_listeners):
                listener(self.tools)

        self._refreshing = asyncio.ensure_future(run())

    def on_tools(self, listener: Callable[[list[AgentTool]], object]) -> Callable[[], None]:
        self._tool_listeners.append(listener)
        return lambda: self._tool_listeners.remove(listener) if listener in self._tool_listeners else None

    def set_enabled(self, tool: str, enabled: bool) -> None:
        """Switch one of the server's tools (by its MCP name) on or off."""
        (self.disabled.discard if enabled else self.disabled.add)(tool)
        self.rebuild()

    def rebuild(self) -> None:
        """Make the agent tools again (after ``disabled`` changed)."""
        names: set[str] = set()
        tools = []
        for definition in self.definitions:
            tool_name = definition["name"]
            name = mcp_tool_name(self.name, tool_name, names.__contains__)
            names.add(name)
            if tool_name not in self.disabled:
                tools.append(self._agent_tool(name, definition))
        self.tools = tools

    def _agent_tool(self, name: str, definition: Mapping[str, Any]) -> AgentTool:
        server, tool = self.name, str(definition["name"])
        annotations = definition.get("annotations")
        title = definition.get("title") or (annotations.get("title") if isinstance(annotations, dict) else None)
        details = {"server": server, "tool": tool}
        description = (
            str(definition.get("description") or "").strip() or title or f"MCP tool {tool} from server {server}"
        )
        client = self.client

        async def execute(
            tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any
        ) -> AgentToolResult:
            def progress(update: Mapping[str, Any]) -> None:
                if on_update is None:
                    return
                total = f"/{update['total']}" if update.get("total") is not None else ""
                text = update.get("message") or f"Progress {update.get('progress')}{total}"
                on_update(AgentToolResult(content=[TextContent(text=str(text))], details=details))

            result = await client.call_tool(tool, params or {}, signal=signal, on_progress=progress)
            content = result_content(result)
            if result.get("isError"):
                text = "\n".join(block.text for block in content if isinstance(block, TextContent))
                raise McpToolError(text or f"MCP tool {server}/{tool} returned an error")
            return AgentToolResult(content=content, details=details)

        return AgentTool(
            name=name,
            label=f"{server}/{tool}",
            description=description,
            parameters=input_schema(definition.get("inputSchema")),
            execute=execute,
        )

    def attach(self, tools: Sequence[AgentTool]) -> list[AgentTool]:
        """``tools`` without this server's old tools, plus its current ones (for ``agent.state.tools``)."""
        prefix = mcp_tool_name(self.name, "")
        return [tool for tool in tools if not tool.name.startswith(prefix)] + self.tools

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> McpServer:
        await self.refresh()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
