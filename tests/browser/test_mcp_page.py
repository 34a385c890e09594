"""Settings → MCP servers in Chromium, against the official MCP Python SDK on loopback (another
origin, behind a CORS middleware) and the mock provider: a server added in the page, its tools
listed; the model calls mcp__tools__add and the result reaches the next request; the image reaches
a vision model as an image block; a tool switched off leaves the next request's tools; servers that
refuse the page (no CORS), hide Mcp-Session-Id, or speak the old SSE transport get their named error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mcp_server import McpTestServer
from py_agent.testing.mock_server import MockProviderServer


@pytest.fixture(scope="module")
def mcp() -> Iterator[McpTestServer]:
    with McpTestServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    vision = {"id": "mock-vision", "name": "Mock Vision", "input": ["text", "image"]}
    with open_app(browser, base_url) as app:
        app.add_provider("Mock Vision", mock, [vision], key="sk-mock-vision-key")
        yield app


def open_tab(app: App) -> None:
    page = app.page
    if not page.locator("dialog[open] #mcp-add").count():
        page.locator("#open-settings").click()
        page.locator("[role=tab]", has_text="MCP servers").click()
    page.locator("#mcp-add").wait_for()


def close_settings(app: App) -> None:
    app.page.keyboard.press("Escape")
    app.page.locator("dialog[open]").wait_for(state="detached")


def add_server(app: App, name: str, url: str, token: str = "") -> None:
    page = app.page
    open_tab(app)
    page.locator("#mcp-name").fill(name)
    page.locator("#mcp-url").fill(url)
    page.locator("#mcp-token").fill(token)
    page.locator("#mcp-add").click()
    page.locator(f".mcp-server[data-name='{name}']").wait_for()


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request["body"].get("tools") or []]


def test_a_server_added_in_settings_lists_its_tools(app: App, mcp: McpTestServer) -> None:
    add_server(app, "tools", mcp.url)
    card = app.page.locator(".mcp-server[data-name='tools']")
    card.locator(".mcp-tool[data-tool='add']").wait_for()
    assert card.get_attribute("data-connected") == "true"
    assert "Add two integers and return the sum" in card.locator(".mcp-tool[data-tool='add']").inner_text()
    assert card.locator(".mcp-tool").count() == 6
    close_settings(app)


def test_the_model_calls_an_mcp_tool_and_sees_its_text_and_image(
    app: App, mock: MockProviderServer, mcp: McpTestServer
) -> None:
    app.new_chat()
    app.choose_model("mock vision", "Mock Vision")
    mock.reset()
    mock.script(
        [
            {"tool_calls": [{"id": "call_add", "name": "mcp__tools__add", "arguments": {"a": 2, "b": 3}}]},
            {"tool_calls": [{"id": "call_px", "name": "mcp__tools__pixel", "arguments": {}}]},
            {"text": "The sum is 5 and the pixel is red."},
        ]
    )
    app.type_and_enter("Add 2 and 3, then show me the pixel")
    app.page.locator("#transcript .msg.assistant", has_text="The sum is 5").wait_for(timeout=60_000)
    app.wait_idle()
    requests = mock.requests
    assert "mcp__tools__add" in tool_names(requests[0])
    added = requests[1]["body"]["messages"][-1]["content"][0]
    assert added["type"] == "tool_result" and json.dumps(added["content"]).count('"5"') == 1
    pixel = requests[2]["body"]["messages"][-1]["content"][0]
    images = [block for block in pixel["content"] if block["type"] == "image"]
    assert images and images[0]["source"]["media_type"] == "image/png"
    # The card names the server.
    assert "tools · add" in app.page.locator(".tool-title").all_inner_texts()
    assert "tools/call" in mcp.seen


def test_a_tool_switched_off_leaves_the_next_request(app: App, mock: MockProviderServer) -> None:
    open_tab(app)
    app.page.locator(".mcp-server[data-name='tools'] .mcp-tool-switch[data-tool='add']").uncheck()
    wait_until(lambda: "mcp__tools__add" not in app.page.evaluate("() => window.pyAgentApp.state.tools"))
    close_settings(app)
    mock.reset()
    mock.script([{"text": "No adding today."}])
    app.type_and_enter("Add again")
    app.page.locator("#transcript .msg.assistant", has_text="No adding today.").wait_for()
    app.wait_idle()
    names = tool_names(mock.requests[0])
    assert "mcp__tools__add" not in names and "mcp__tools__weather" in names


@pytest.mark.parametrize(
    ("options", "kind", "words"),
    [
        ({"cors": False}, "cors", "Access-Control-Allow-Origin: http://127.0.0.1"),
        (
            {"expose_session": False, "legacy_only": True},
            "session-header-hidden",
            "Access-Control-Expose-Headers: Mcp-Session-Id",
        ),
        ({"old_sse": True}, "legacy-sse", "old HTTP+SSE transport"),
    ],
)
def test_servers_the_page_cannot_use_get_their_named_error(
    app: App, options: dict[str, Any], kind: str, words: str
) -> None:
    with McpTestServer(**options) as server:
        add_server(app, f"bad-{kind}", server.url)
        problem = app.page.locator(f".mcp-server[data-name='bad-{kind}'] .mcp-problem")
        problem.wait_for()
        assert problem.get_attribute("data-kind") == kind
        assert words in problem.inner_text()
    app.py("mcp_remove", name=f"bad-{kind}")
    close_settings(app)


def test_sign_in_in_a_popup_then_calls_succeed_and_an_expired_token_is_refreshed(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    with McpTestServer(oauth=True) as server:
        assert server.oauth is not None
        add_server(app, "secure", server.url)
        card = page.locator(".mcp-server[data-name='secure']")
        card.locator(".mcp-problem[data-kind='auth']").wait_for()
        with page.expect_popup() as opened:
            card.get_by_role("button", name="Sign in to secure").click()
        opened.value.wait_for_event("close", timeout=60_000)  # the page itself took the answer and closed it
        card.locator(".mcp-tool[data-tool='add']").wait_for()
        assert "signed in on this device" in card.inner_text()
        close_settings(app)
        app.new_chat()
        app.choose_model("mock vision", "Mock Vision")
        server.oauth.expire()  # the next request is refused: the page refreshes the token
        mock.reset()
        mock.script(
            [
                {"tool_calls": [{"id": "call_s", "name": "mcp__secure__add", "arguments": {"a": 20, "b": 22}}]},
                {"text": "It is 42."},
            ]
        )
        app.type_and_enter("Add 20 and 22 on the secure server")
        page.locator("#transcript .msg.assistant", has_text="It is 42.").wait_for(timeout=60_000)
        app.wait_idle()
        assert server.oauth.refreshed == 1
        result = mock.requests[1]["body"]["messages"][-1]["content"][0]
        assert "42" in json.dumps(result["content"]) and not result.get("is_error")
    app.py("mcp_remove", name="secure")
