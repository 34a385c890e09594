"""What can go wrong talking to an MCP server, each error with what to do about it.

``McpConnectError`` subclasses name a setup problem and carry ``fix``: the exact server-side
change (CORS headers), or the proxy route of the README ("Providers: direct, or through a
proxy"). The page shows ``str(error)``, which includes the fix.
"""

from __future__ import annotations

import re
from typing import Any

CORS_HEADERS = (
    "Access-Control-Allow-Origin: {origin}\n"
    "Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS\n"
    "Access-Control-Allow-Headers: Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, "
    "Last-Event-ID, Mcp-Method, Mcp-Name\n"
    "Access-Control-Expose-Headers: Mcp-Session-Id, WWW-Authenticate"
)
"""What a streamable HTTP server answers (also to the ``OPTIONS`` preflight) so a page may call it."""

PROXY_ROUTE = (
    "Or reach it through a CORS proxy you run yourself (README, 'Providers: direct, or through a proxy': "
    "python3 scripts/cors_proxy.py) and add the server as <proxy>/?url=<server URL>."
)


class McpException(Exception):
    """Every MCP failure."""


class McpError(McpException):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class McpHttpError(McpException):
    """The server answered with an HTTP error status."""

    def __init__(self, status: int, message: str, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class McpSessionExpiredError(McpHttpError):
    """404 for a request in a session: the server ended it (restart, idle timeout, DELETE)."""

    def __init__(self, body: str = "") -> None:
        super().__init__(404, "MCP session expired", body)


class McpAuthRequiredError(McpHttpError):
    """401 (or 403 asking for more scope): the server wants a token. ``resource_metadata`` is the
    RFC 9728 metadata URL of its ``WWW-Authenticate`` challenge, when it names one."""

    def __init__(self, status: int, www_authenticate: str | None, body: str = "") -> None:
        super().__init__(status, "MCP server requires sign-in", body)
        self.www_authenticate = www_authenticate
        self.resource_metadata = _challenge_param(www_authenticate or "", "resource_metadata")
        self.scope = _challenge_param(www_authenticate or "", "scope")


class McpTimeoutError(McpException):
    def __init__(self, timeout: float, method: str) -> None:
        super().__init__(
            f"MCP request {method} timed out after {timeout:g} s without a reply or progress "
            "(raise the server's timeout if its tools are slow)"
        )
        self.timeout = timeout


class McpClosedError(McpException):
    """The client was closed."""


class McpConnectError(McpException):
    """The server cannot be used as configured; ``fix`` says what to change."""

    kind = "connect"

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(f"{message} {fix}".strip())
        self.summary = message
        self.fix = fix


class McpCorsError(McpConnectError):
    kind = "cors"

    def __init__(self, url: str, origin: str | None) -> None:
        super().__init__(
            f"The browser refused the request to {url}: the server does not allow this page's origin (CORS), "
            "or it is unreachable.",
            "If it is running, have it answer with:\n"
            + CORS_HEADERS.format(origin=origin or "<this page's origin>")
            + "\n"
            + PROXY_ROUTE,
        )


class McpSessionHeaderHiddenError(McpConnectError):
    kind = "session-header-hidden"

    def __init__(self, url: str) -> None:
        super().__init__(
            f"The MCP server at {url} opened a session but hides its Mcp-Session-Id header from the page, "
            "so every later request is refused.",
            "Have it add the header:\nAccess-Control-Expose-Headers: Mcp-Session-Id\n" + PROXY_ROUTE,
        )


class McpMixedContentError(McpConnectError):
    kind = "mixed-content"

    def __init__(self, url: str) -> None:
        super().__init__(
            f"This page is served over https and the browser blocks its requests to http URLs ({url}).",
            "Serve the MCP server over https (or on localhost), or open the page over http on localhost.",
        )


class McpLegacySseError(McpConnectError):
    kind = "legacy-sse"

    def __init__(self, url: str) -> None:
        super().__init__(
            f"{url} speaks the old HTTP+SSE transport (2024-11-05), which pi and this client do not support.",
            "Use the server's streamable HTTP endpoint instead: servers that offer /sse often offer it at /mcp.",
        )


class McpNotFoundError(McpConnectError):
    kind = "not-mcp"

    def __init__(self, url: str, detail: str) -> None:
        super().__init__(
            f"No MCP server answers at {url} ({detail}).",
            "Check the URL: streamable HTTP servers usually listen at a path such as /mcp.",
        )


def _challenge_param(header: str, name: str) -> str | None:
    """A parameter of a ``WWW-Authenticate: Bearer k="v", ...`` challenge."""
    match = re.search(rf'(?:^|[\s,]){name}="([^"]*)"', header) or re.search(rf"(?:^|[\s,]){name}=([^\s,]+)", header)
    return match.group(1) if match else None
