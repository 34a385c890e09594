"""Settings → MCP servers: the user's MCP servers (streamable HTTP) and their tools in every session.

A server is ``{name, url, headers, enabled, disabledTools}``, kept in the settings store under
``mcpServers`` (never with a secret in it). Its bearer token is kept like an API key: in the key
ring (this device or this tab) under ``mcp:<name>``, so exports, errors and logs are scrubbed of
it, and it goes only into requests to that server. Each session gets the tools of the enabled
servers (``mcp__<server>__<tool>``, pi's ``direct`` exposure), connected once and shared; tool
calls and results are ordinary entries, so sessions stay pi's.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from ..ai.transport import get_default_transport
from ..core.types import AgentTool
from ..mcp import McpAuthRequiredError, McpConnectError, McpException, McpServer, mcp_tool_name
from ..mcp.oauth import McpOAuth, OAuthState
from .commands import method_command
from .network import page_origin
from .plugin_contract import Plugin, ToolHost

STORE = "settings"
RECORD = "mcpServers"
TOKEN_PREFIX = "mcp:"
CONNECT_WAIT = 10.0
"""A session waits this long for a server's tools (pi's first prompt waits 10 s for ``direct`` servers)."""
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def token_key(name: str) -> str:
    """The key ring's name for a server's bearer token (or its OAuth access token)."""
    return f"{TOKEN_PREFIX}{name}"


def refresh_key(name: str) -> str:
    """The key ring's name for a server's OAuth refresh token."""
    return f"{TOKEN_PREFIX}{name}:refresh"


OAUTH_PUBLIC: tuple[str, ...] = ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint")
OAUTH_PUBLIC += ("client_id", "redirect_uri", "scope", "expires_at", "pending")
"""What of a sign-in is kept with the server's entry; the tokens (and a client secret) go to the key ring."""


def describe_error(error: BaseException) -> dict[str, Any]:
    """An error as the page shows it: the message, and for setup problems their kind and fix."""
    info: dict[str, Any] = {"error": str(error) or type(error).__name__}
    if isinstance(error, McpConnectError):
        info.update(kind=error.kind, summary=error.summary, fix=error.fix)
    elif isinstance(error, McpAuthRequiredError):
        info.update(kind="auth", summary="This server needs you to sign in.", fix="Sign in with the button below.")
    return info


async def _refresh_session(app: Any) -> None:
    chat = app.chat
    if chat is not None and not chat.streaming:
        await chat.install_tools()
        app.emit("session_state", chat.state())


def _check_url(url: str) -> str:
    url = url.strip()
    if not url.lower().startswith(("http://", "https://")):
        raise ValueError("The server's URL must start with http:// or https://")
    return url


class McpRegistry:
    """The configured servers, their live connections, and what went wrong with each."""

    def __init__(self) -> None:
        self.configs: dict[str, dict[str, Any]] = {}
        self.servers: dict[str, McpServer] = {}
        self.errors: dict[str, dict[str, Any]] = {}
        self.backend: Any = None
        self.get_key: Any = lambda name: None
        self.set_key: Any = None
        """``async set_key(name, value, remember)``: the key ring's, once the app gave it."""
        self.challenges: dict[str, McpAuthRequiredError] = {}
        self.app: Any = None
        """The app, once a command ran: a server's changed tool list then reaches the open session."""
        self._connecting: dict[str, asyncio.Future[McpServer]] = {}
        self._refreshes: set[asyncio.Future[None]] = set()

    async def load(self, backend: Any) -> list[str]:
        self.backend = backend
        stored = (await backend.kv_all(STORE)).get(RECORD)
        problems = []
        for entry in stored if isinstance(stored, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("url"), str):
                self.configs[entry["name"]] = entry
            else:
                problems.append(f"An MCP server entry could not be read: {entry!r}")
        return problems

    async def save(self) -> None:
        if self.backend is not None:
            await self.backend.kv_put(STORE, RECORD, list(self.configs.values()))

    async def server(self, name: str) -> McpServer:
        """The connected server (connecting once; concurrent callers share the attempt)."""
        if name in self.servers and self.servers[name].client.connected:
            return self.servers[name]
        if name not in self._connecting:
            self._connecting[name] = asyncio.ensure_future(self._connect(name))
        try:
            return await asyncio.shield(self._connecting[name])
        finally:
            if self._connecting.get(name) is not None and self._connecting[name].done():
                self._connecting.pop(name, None)

    async def _connect(self, name: str) -> McpServer:
        config = self.configs[name]
        old = self.servers.pop(name, None)
        if old is not None:
            await old.close()

        async def token() -> str | None:
            value = self.get_key(token_key(name))
            return value if isinstance(value, str) and value else None

        oauth = self.oauth(name) if isinstance(config.get("oauth"), dict) else None
        server = McpServer(
            name,
            config["url"],
            headers=config.get("headers") or {},
            token=oauth.token if oauth is not None else token,
            on_unauthorized=oauth.on_unauthorized if oauth is not None else None,
            origin=page_origin() or None,
            timeout=float(config.get("timeout") or 60),
        )
        try:
            await server.refresh()
        except BaseException as error:
            self.errors[name] = describe_error(error)
            if isinstance(error, McpAuthRequiredError):
                self.challenges[name] = error
            await server.close()
            raise
        self.errors.pop(name, None)
        server.disabled = set(config.get("disabledTools") or [])
        server.rebuild()
        server.on_tools(lambda _tools: self._tools_changed())
        self.servers[name] = server
        return server

    def _tools_changed(self) -> None:
        """A server announced new tools (``notifications/tools/list_changed``): the open session gets them."""
        if self.app is not None:
            task = asyncio.ensure_future(_refresh_session(self.app))
            self._refreshes.add(task)
            task.add_done_callback(self._refreshes.discard)

    def oauth(self, name: str) -> McpOAuth:
        """The server's sign-in: its kept state, tokens from the key ring, saved back after a change."""
        config = self.configs[name]
        kept = config.get("oauth")
        public = {k: v for k, v in (kept if isinstance(kept, dict) else {}).items() if k in OAUTH_PUBLIC}
        state = OAuthState(resource=config["url"], **public)
        state.access_token = self.get_key(token_key(name)) or ""
        state.refresh_token = self.get_key(refresh_key(name)) or ""

        async def save(changed: OAuthState) -> None:
            config["oauth"] = {k: getattr(changed, k) for k in OAUTH_PUBLIC}
            await self.save()
            if self.set_key is not None:
                if changed.access_token:
                    await self.set_key(token_key(name), changed.access_token, True)
                if changed.refresh_token:
                    await self.set_key(refresh_key(name), changed.refresh_token, True)

        return McpOAuth(state, get_default_transport(), save)

    async def drop(self, name: str) -> None:
        server = self.servers.pop(name, None)
        if server is not None:
            await server.close()

    def listing(self, keys: Any) -> dict[str, Any]:
        servers = []
        for name, config in self.configs.items():
            live = self.servers.get(name)
            disabled = set(config.get("disabledTools") or [])
            tools = [
                {
                    "name": definition["name"],
                    "toolName": mcp_tool_name(name, definition["name"]),
                    "description": str(definition.get("description") or ""),
                    "enabled": definition["name"] not in disabled,
                }
                for definition in (live.definitions if live is not None else [])
            ]
            servers.append(
                {
                    "name": name,
                    "url": config["url"],
                    "enabled": config.get("enabled", True) is not False,
                    "headers": sorted(config.get("headers") or {}),
                    "token": keys.place(token_key(name)),
                    "signedIn": isinstance(config.get("oauth"), dict) and keys.place(token_key(name)) is not None,
                    "connected": live is not None and live.client.connected,
                    "tools": tools,
                    **({"problem": self.errors[name]} if name in self.errors else {}),
                }
            )
        return {"servers": servers}

    async def tools(self, host: ToolHost) -> list[AgentTool]:
        """The tools of every enabled server (a server that cannot be reached is left out and its error kept)."""
        self.get_key = host.get_api_key
        self.set_key = host.extras.get("set_secret", self.set_key)
        names = [name for name, config in self.configs.items() if config.get("enabled", True) is not False]

        async def one(name: str) -> list[AgentTool]:
            try:
                return list((await asyncio.wait_for(self.server(name), CONNECT_WAIT)).tools)
            except (McpException, TimeoutError) as error:
                self.errors[name] = describe_error(error)
                return []

        results = await asyncio.gather(*(one(name) for name in names))
        return [tool for tools in results for tool in tools]

    # -- the page's commands (Settings → MCP servers) --------------------------------------------

    async def mcp_servers(self, app: Any) -> dict[str, Any]:
        self.get_key, self.set_key, self.app = app.keys.get, app.keys.set, app
        return self.listing(app.keys)

    async def mcp_add(
        self,
        app: Any,
        name: str,
        url: str,
        token: str = "",
        remember: bool = True,
        headers: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add (or replace) a server, store its token like a key, connect and list its tools."""
        name = name.strip()
        if not _NAME.match(name):
            raise ValueError("A server name may contain only letters, digits, '_' and '-' (at most 40).")
        plain = {str(k): str(v) for k, v in (headers or {}).items() if str(k).strip()}
        if any(k.lower() == "authorization" for k in plain):
            raise ValueError("Put the token in the token box: it is kept like a key, headers are not.")
        self.configs[name] = {"name": name, "url": _check_url(url), "headers": plain, "enabled": True}
        await self.save()
        if token.strip():
            await app.keys.set(token_key(name), token.strip(), remember)
        return await self.mcp_test(app, name)

    async def mcp_test(self, app: Any, name: str) -> dict[str, Any]:
        """Connect again and list the tools: ``{ok, servers}`` or ``{ok: false, problem, servers}``."""
        if name not in self.configs:
            raise ValueError(f"No MCP server named {name!r}")
        self.get_key, self.set_key, self.app = app.keys.get, app.keys.set, app
        await self.drop(name)
        try:
            await asyncio.wait_for(self.server(name), 30)
            outcome: dict[str, Any] = {"ok": True}
        except (McpException, TimeoutError) as error:
            problem = self.errors.get(name) or describe_error(error)
            problem = {k: app.keys.redact(v) if isinstance(v, str) else v for k, v in problem.items()}
            self.errors[name] = problem
            outcome = {"ok": False, "problem": problem}
        await _refresh_session(app)
        return {**outcome, **self.listing(app.keys)}

    async def mcp_switch(self, app: Any, name: str, enabled: bool, tool: str | None = None) -> dict[str, Any]:
        """Switch a server, or one of its tools (by its MCP name), on or off."""
        config = self.configs.get(name)
        if config is None:
            raise ValueError(f"No MCP server named {name!r}")
        if tool is None:
            config["enabled"] = enabled
        else:
            disabled = set(config.get("disabledTools") or [])
            (disabled.discard if enabled else disabled.add)(tool)
            config["disabledTools"] = sorted(disabled)
            if name in self.servers:
                self.servers[name].disabled = disabled
                self.servers[name].set_enabled(tool, enabled)
        await self.save()
        await _refresh_session(app)
        return self.listing(app.keys)

    async def mcp_remove(self, app: Any, name: str) -> dict[str, Any]:
        self.configs.pop(name, None)
        self.errors.pop(name, None)
        await self.drop(name)
        await self.save()
        await app.keys.delete(token_key(name))
        await app.keys.delete(refresh_key(name))
        await _refresh_session(app)
        return self.listing(app.keys)

    async def mcp_sign_in(self, app: Any, name: str, redirect_uri: str) -> dict[str, Any]:
        """Start a sign-in: ``{url}`` to open in a popup, which comes back to ``redirect_uri`` (the page)."""
        if name not in self.configs:
            raise ValueError(f"No MCP server named {name!r}")
        self.get_key, self.set_key, self.app = app.keys.get, app.keys.set, app
        self.configs[name].setdefault("oauth", {})
        try:
            url = await self.oauth(name).begin(_check_url(redirect_uri), self.challenges.get(name))
        except McpException as error:
            return {"ok": False, "problem": describe_error(error)}
        return {"ok": True, "url": url}

    async def mcp_sign_in_finish(self, app: Any, code: str, state: str) -> dict[str, Any]:
        """The popup came back with ``code`` and ``state``: get the tokens, connect, list the tools."""
        self.get_key, self.set_key, self.app = app.keys.get, app.keys.set, app
        for name, config in self.configs.items():
            oauth = config.get("oauth")
            if isinstance(oauth, dict) and (oauth.get("pending") or {}).get("state") == state:
                try:
                    await self.oauth(name).finish(code, state)
                except McpException as error:
                    return {"ok": False, "problem": describe_error(error), **self.listing(app.keys)}
                self.challenges.pop(name, None)
                return await self.mcp_test(app, name)
        raise ValueError("This sign-in answer matches no sign-in in progress.")

    async def mcp_import(self, app: Any, text: str, remember: bool = True) -> dict[str, Any]:
        """Add the HTTP servers of an ``mcpServers`` JSON; list the others with why they are left out."""
        usable, skipped = parse_mcp_servers(text)
        added = []
        for entry in usable:
            result = await self.mcp_add(app, entry["name"], entry["url"], entry["token"], remember, entry["headers"])
            added.append({"name": entry["name"], "ok": result["ok"]})
        return {"added": added, "skipped": skipped, **self.listing(app.keys)}


def parse_mcp_servers(text: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The HTTP entries of an ``mcpServers`` JSON (Claude Desktop, Cursor, pi), and the entries a
    page cannot use with the reason (stdio servers, the old SSE transport, invalid entries)."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(f"This is not JSON: {error}") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError('Expected {"mcpServers": {"name": {"url": ...}}}')
    usable: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            skipped.append({"name": str(name), "reason": "not an object"})
        elif "command" in entry or entry.get("type") == "stdio":
            skipped.append(
                {"name": str(name), "reason": "a stdio server (a program to start): not possible in a browser"}
            )
        elif entry.get("type") == "sse":
            skipped.append({"name": str(name), "reason": "the old SSE transport: use its streamable HTTP URL"})
        elif not isinstance(entry.get("url"), str) or not _NAME.match(str(name)):
            skipped.append({"name": str(name), "reason": "no url, or a name with characters other than A-Z 0-9 _ -"})
        else:
            headers = entry.get("headers")
            token = ""
            plain: dict[str, str] = {}
            for key, value in (headers if isinstance(headers, Mapping) else {}).items():
                if str(key).lower() == "authorization" and str(value).lower().startswith("bearer "):
                    token = str(value)[7:].strip()
                else:
                    plain[str(key)] = str(value)
            usable.append({"name": str(name), "url": entry["url"], "headers": plain, "token": token})
    return usable, skipped


def mcp_plugin() -> Plugin:
    """MCP servers: their tools in every session, and the commands of Settings → MCP servers."""
    registry = McpRegistry()
    return Plugin(
        name="mcp",
        tool_factories={"mcp": registry.tools},
        commands=tuple(
            method_command(name, getattr(registry, name))
            for name in (
                "mcp_servers",
                "mcp_add",
                "mcp_test",
                "mcp_switch",
                "mcp_remove",
                "mcp_import",
                "mcp_sign_in",
                "mcp_sign_in_finish",
            )
        ),
        on_storage_open=registry.load,
    )
