"""MCP (Model Context Protocol) servers as tool sources: a streamable HTTP client over py_agent's
``HttpTransport`` (so the same code runs in CPython and in the page) and the adapter that makes a
server's tools agent tools named as pi names them. See docs/mcp.md."""

from .client import McpClient
from .errors import (
    McpAuthRequiredError,
    McpConnectError,
    McpCorsError,
    McpError,
    McpException,
    McpHttpError,
    McpLegacySseError,
    McpMixedContentError,
    McpNotFoundError,
    McpSessionExpiredError,
    McpSessionHeaderHiddenError,
    McpTimeoutError,
)
from .tools import McpServer, McpToolError, mcp_tool_name, result_content

__all__ = [
    "McpAuthRequiredError",
    "McpClient",
    "McpConnectError",
    "McpCorsError",
    "McpError",
    "McpException",
    "McpHttpError",
    "McpLegacySseError",
    "McpMixedContentError",
    "McpNotFoundError",
    "McpServer",
    "McpSessionExpiredError",
    "McpSessionHeaderHiddenError",
    "McpTimeoutError",
    "McpToolError",
    "mcp_tool_name",
    "result_content",
]
