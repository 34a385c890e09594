"""``on_retry``: every automatic retry of a failed request is announced before the wait (so the
web app can show "retrying in 2 s"), with the status, the delay and whether the server chose it;
a failing hook changes nothing. Over real HTTP (httpx) against the mock server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from py_agent.ai import Model, RetryInfo, stream_simple
from py_agent.ai.providers import ProviderStreamOptions
from py_agent.testing.mock_server import MockProviderServer
from py_agent.transports.httpx import HttpxTransport


@pytest.fixture
def server() -> Iterator[MockProviderServer]:
    with MockProviderServer() as mock:
        yield mock


def model(server: MockProviderServer) -> Model:
    return Model.model_validate(
        {
            "id": "m",
            "api": "anthropic-messages",
            "provider": "anthropic",
            "baseUrl": server.base_url("anthropic-messages"),
        }
    )


async def run(server: MockProviderServer, **options: Any) -> tuple[Any, list[RetryInfo]]:
    seen: list[RetryInfo] = []

    def on_retry(info: RetryInfo, _model: Model) -> None:
        seen.append(info)

    opts = ProviderStreamOptions(api_key="k", http_transport=HttpxTransport(), on_retry=on_retry, **options)
    message = await stream_simple(
        model(server), {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}, opts
    ).result()
    return message, seen


async def test_retries_are_announced_with_status_and_delay(server: MockProviderServer) -> None:
    server.script(
        [
            {"fault": {"type": "http", "status": 429, "retry_after": "0.2"}},
            {"fault": {"type": "http", "status": 503}},
            {"text": "finally"},
        ]
    )
    message, seen = await run(server, max_retries=3)
    assert message.stop_reason == "stop" and message.content[0].text == "finally"
    assert [(i.attempt, i.max_retries, i.status, i.server_delay) for i in seen] == [
        (1, 3, 429, True),
        (2, 3, 503, False),
    ]
    assert seen[0].delay_ms == 200 and 0 < seen[1].delay_ms <= 1000
    assert "rate limit" in seen[0].error


async def test_no_retry_no_announcement_and_capped_retries(server: MockProviderServer) -> None:
    server.script([{"fault": {"type": "http", "status": 500, "retry_after": "0"}, "repeat": 5}])
    message, seen = await run(server, max_retries=2)
    assert message.stop_reason == "error" and message.error_message.startswith("500")
    assert [i.attempt for i in seen] == [1, 2] and len(server.requests) == 3
    server.reset()
    server.script([{"fault": {"type": "http", "status": 429, "retry_after": "3600"}}])
    message, seen = await run(server, max_retries=2, max_retry_delay_ms=60_000)
    assert seen == [] and "Server requested 3600s retry delay (max: 60s)" in (message.error_message or "")


async def test_a_failing_hook_changes_nothing(server: MockProviderServer) -> None:
    server.script([{"fault": {"type": "http", "status": 429, "retry_after": "0"}}, {"text": "ok"}])

    def broken(info: RetryInfo, _model: Model) -> None:
        raise RuntimeError("the hook failed")

    opts = ProviderStreamOptions(api_key="k", http_transport=HttpxTransport(), on_retry=broken)
    message = await stream_simple(
        model(server), {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}, opts
    ).result()
    assert message.stop_reason == "stop"
