"""OAuth sign-in for MCP servers (the MCP authorization spec): the server's 401 names its protected
resource metadata (RFC 9728), which names the authorization server, whose metadata (RFC 8414) gives
the endpoints; the client registers itself (RFC 7591 dynamic client registration), sends the user to
the authorization endpoint with PKCE (S256) and the resource indicator (RFC 8707), and exchanges the
code for tokens, which it refreshes when they expire or the server refuses them.

Pure Python over ``HttpTransport``: the page opens the authorization URL in a popup whose redirect
target is the page itself, and hands the ``code`` and ``state`` back (py_agent/app/mcp_servers.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from ..ai.transport import HttpRequest, HttpTransport, TransportError
from .errors import McpAuthRequiredError, McpException

REFRESH_MARGIN = 60.0
"""A token this close to its expiry (seconds) is refreshed before it is sent."""


class McpOAuthError(McpException):
    """Sign-in could not be done (discovery, registration, the token endpoint)."""


@dataclass
class OAuthState:
    """Everything a server's sign-in keeps: endpoints, the registered client, the tokens. Stored
    like a key (it holds secrets): ``to_json`` / ``from_json``."""

    resource: str
    issuer: str = ""
    authorization_endpoint: str = ""
    token_endpoint: str = ""
    registration_endpoint: str = ""
    client_id: str = ""
    client_secret: str = ""
    redirect_uri: str = ""
    scope: str = ""
    access_token: str = ""
    refresh_token: str = ""
    expires_at: float = 0.0
    pending: dict[str, str] = field(default_factory=dict)
    """``{state, verifier}`` of a sign-in in progress."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> OAuthState:
        data = json.loads(text)
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _well_known(url: str, name: str) -> str:
    """RFC 8414 / RFC 9728: the well-known segment goes between the host and the path."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{name}{path}", "", ""))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class McpOAuth:
    """Sign-in and tokens of one server; ``token`` is the client's token source, ``on_unauthorized``
    refreshes after a 401 (``True``: try again)."""

    def __init__(
        self,
        state: OAuthState,
        transport: HttpTransport,
        save: Callable[[OAuthState], Awaitable[None]] | None = None,
        client_name: str = "py-agent",
    ) -> None:
        self.state = state
        self.transport = transport
        self.save = save
        self.client_name = client_name

    async def _json(self, method: str, url: str, body: bytes | None = None, form: bool = False) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded" if form else "application/json"
        try:
            response = await self.transport.send(HttpRequest(method, url, headers, body))
        except TransportError as error:
            raise McpOAuthError(f"Cannot reach {url}: {error}") from None
        try:
            text = (await response.aread()).decode("utf-8", errors="replace")
        finally:
            await response.aclose()
        if not 200 <= response.status < 300:
            raise McpOAuthError(f"{method} {url} failed with status {response.status}: {text[:300]}")
        try:
            return json.loads(text)
        except ValueError:
            raise McpOAuthError(f"{url} did not answer with JSON") from None

    async def discover(self, challenge: McpAuthRequiredError | None = None) -> None:
        """Find the authorization server (RFC 9728, then RFC 8414) and check its issuer."""
        state = self.state
        candidates = [challenge.resource_metadata] if challenge and challenge.resource_metadata else []
        candidates += [_well_known(state.resource, "oauth-protected-resource")]
        root = urlunsplit((*urlsplit(state.resource)[:2], "", "", ""))
        candidates.append(root + "/.well-known/oauth-protected-resource")
        metadata: Any = None
        for url in candidates:
            try:
                metadata = await self._json("GET", url)
                break
            except McpOAuthError:
                continue
        servers = metadata.get("authorization_servers") if isinstance(metadata, dict) else None
        issuer = servers[0] if isinstance(servers, list) and servers and isinstance(servers[0], str) else root
        if challenge is not None and challenge.scope and not state.scope:
            state.scope = challenge.scope
        elif isinstance(metadata, dict) and isinstance(metadata.get("scopes_supported"), list) and not state.scope:
            state.scope = " ".join(str(s) for s in metadata["scopes_supported"])
        auth: Any = None
        for url in (_well_known(issuer, "oauth-authorization-server"), _well_known(issuer, "openid-configuration")):
            try:
                auth = await self._json("GET", url)
                break
            except McpOAuthError:
                continue
        if not isinstance(auth, dict) or not isinstance(auth.get("token_endpoint"), str):
            raise McpOAuthError(f"No OAuth authorization server metadata found for {issuer}")
        if str(auth.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
            raise McpOAuthError(
                f"The authorization server's metadata names the issuer {auth.get('issuer')!r}, not {issuer!r}"
            )
        state.issuer = issuer
        state.authorization_endpoint = str(auth.get("authorization_endpoint") or "")
        state.token_endpoint = auth["token_endpoint"]
        state.registration_endpoint = str(auth.get("registration_endpoint") or "")

    async def register(self, redirect_uri: str) -> None:
        """Dynamic client registration (RFC 7591), unless a client for this redirect URI exists."""
        state = self.state
        if state.client_id and state.redirect_uri == redirect_uri:
            return
        if not state.registration_endpoint:
            raise McpOAuthError("The authorization server offers no dynamic client registration")
        body = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **({"scope": state.scope} if state.scope else {}),
        }
        client = await self._json("POST", state.registration_endpoint, json.dumps(body).encode())
        if not isinstance(client, dict) or not isinstance(client.get("client_id"), str):
            raise McpOAuthError("The client registration returned no client_id")
        state.client_id = client["client_id"]
        state.client_secret = str(client.get("client_secret") or "")
        state.redirect_uri = redirect_uri

    async def begin(self, redirect_uri: str, challenge: McpAuthRequiredError | None = None) -> str:
        """Discover, register, and return the URL to open (PKCE S256; ``state`` against forgery)."""
        await self.discover(challenge)
        await self.register(redirect_uri)
        verifier = _b64url(secrets.token_bytes(32))
        nonce = _b64url(secrets.token_bytes(16))
        self.state.pending = {"state": nonce, "verifier": verifier}
        query = {
            "response_type": "code",
            "client_id": self.state.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": _b64url(hashlib.sha256(verifier.encode()).digest()),
            "code_challenge_method": "S256",
            "state": nonce,
            "resource": self.state.resource,
            **({"scope": self.state.scope} if self.state.scope else {}),
        }
        await self._save()
        return f"{self.state.authorization_endpoint}?{urlencode(query)}"

    async def finish(self, code: str, state: str) -> None:
        """The redirect came back: exchange the code for tokens."""
        pending = self.state.pending
        if not pending or not secrets.compare_digest(pending.get("state", ""), state):
            raise McpOAuthError("This sign-in answer does not belong to the sign-in in progress")
        await self._token(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.state.redirect_uri,
                "code_verifier": pending["verifier"],
            }
        )
        self.state.pending = {}
        await self._save()

    async def refresh(self) -> bool:
        if not self.state.refresh_token or not self.state.token_endpoint:
            return False
        try:
            await self._token({"grant_type": "refresh_token", "refresh_token": self.state.refresh_token})
        except McpOAuthError:
            return False
        await self._save()
        return True

    async def _token(self, grant: Mapping[str, str]) -> None:
        form = {**grant, "client_id": self.state.client_id, "resource": self.state.resource}
        if self.state.client_secret:
            form["client_secret"] = self.state.client_secret
        tokens = await self._json("POST", self.state.token_endpoint, urlencode(form).encode(), form=True)
        if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
            raise McpOAuthError("The token endpoint returned no access_token")
        self.state.access_token = tokens["access_token"]
        self.state.refresh_token = str(tokens.get("refresh_token") or self.state.refresh_token)
        expires = tokens.get("expires_in")
        self.state.expires_at = time.time() + float(expires) if isinstance(expires, int | float) else 0.0

    async def _save(self) -> None:
        if self.save is not None:
            await self.save(self.state)

    @property
    def signed_in(self) -> bool:
        return bool(self.state.access_token)

    async def token(self) -> str | None:
        """The access token for a request, refreshed first when it is about to expire."""
        state = self.state
        if state.access_token and state.expires_at and state.expires_at - time.time() < REFRESH_MARGIN:
            await self.refresh()
        return state.access_token or None

    async def on_unauthorized(self, error: McpAuthRequiredError) -> bool:
        """A 401 with a token: refresh once (``True``: send the request again)."""
        return await self.refresh()
