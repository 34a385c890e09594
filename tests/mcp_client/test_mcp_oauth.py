"""OAuth sign-in against the SDK's authorization server (an in-memory provider): the 401 names the
metadata, the client discovers, registers, signs in with PKCE, calls, and refreshes an expired token."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from py_agent.mcp import McpAuthRequiredError, McpClient
from py_agent.mcp.oauth import McpOAuth, McpOAuthError, OAuthState
from py_agent.testing.mcp_server import McpTestServer
from py_agent.transports.httpx import HttpxTransport

REDIRECT = "http://127.0.0.1:8000/"


async def approve(url: str) -> dict[str, str]:
    """The user approves in the browser: the authorization endpoint redirects to the page."""
    async with httpx.AsyncClient() as browser:
        response = await browser.get(url)
    assert response.status_code in (302, 303, 307), response.text
    location = response.headers["location"]
    assert location.startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def test_sign_in_call_and_refresh() -> None:
    with McpTestServer(oauth=True) as server:
        assert server.oauth is not None
        client = McpClient(server.url)
        with pytest.raises(McpAuthRequiredError) as caught:
            await client.connect()
        assert (
            caught.value.resource_metadata == f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp"
        )

        saved: list[str] = []

        async def save(state: OAuthState) -> None:
            saved.append(state.to_json())

        oauth = McpOAuth(OAuthState(resource=server.url), HttpxTransport(), save)
        url = await oauth.begin(REDIRECT, caught.value)
        query = parse_qs(urlsplit(url).query)
        assert query["code_challenge_method"] == ["S256"] and query["resource"] == [server.url]
        assert oauth.state.client_id in server.oauth.clients  # registered dynamically
        answer = await approve(url)
        with pytest.raises(McpOAuthError, match="does not belong"):
            await oauth.finish(answer["code"], "forged-state")
        await oauth.finish(answer["code"], answer["state"])
        assert oauth.signed_in and oauth.state.refresh_token

        signed = McpClient(server.url, token=oauth.token, on_unauthorized=oauth.on_unauthorized)
        async with signed:
            assert (await signed.call_tool("add", {"a": 1, "b": 1}))["content"][0]["text"] == "2"
            first = oauth.state.access_token
            server.oauth.expire()  # every access token is refused from now on
            assert (await signed.call_tool("add", {"a": 2, "b": 2}))["content"][0]["text"] == "4"
        assert server.oauth.refreshed == 1 and oauth.state.access_token != first
        assert OAuthState.from_json(saved[-1]).access_token == oauth.state.access_token


async def test_an_expired_token_is_refreshed_before_it_is_sent() -> None:
    with McpTestServer(oauth=True) as server:
        assert server.oauth is not None
        oauth = McpOAuth(OAuthState(resource=server.url), HttpxTransport())
        with pytest.raises(McpAuthRequiredError) as caught:
            await McpClient(server.url).connect()
        answer = await approve(await oauth.begin(REDIRECT, caught.value))
        await oauth.finish(answer["code"], answer["state"])
        oauth.state.expires_at = 1.0  # long past
        async with McpClient(server.url, token=oauth.token) as client:
            assert client.server_info["name"] == "test-tools"
        assert server.oauth.refreshed == 1
