"""scripts/cors_proxy.py, the README's CORS proxy: it carries the page's `/?url=` requests (the format
of py_agent/transports/proxy.py) to a server without CORS, streams the answer back with the CORS
headers the page needs, and serves only the page origins it was given."""

from __future__ import annotations

import importlib.util
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from py_agent.testing.mock_server import MockProviderServer
from py_agent.transports.proxy import ProxyTransport

PAGE = "http://127.0.0.1:8000"


def load_proxy() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "scripts" / "cors_proxy.py"
    spec = importlib.util.spec_from_file_location("cors_proxy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def proxy() -> Iterator[str]:
    server = load_proxy().make_server("127.0.0.1", 0, [PAGE])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def call(url: str, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        return urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as error:
        return error


def test_a_streamed_reply_reaches_the_page_through_the_proxy(proxy: str) -> None:
    with MockProviderServer(cors=False) as mock:
        mock.script([{"text": "Hello through the proxy", "chunk_size": 3}])
        target = ProxyTransport(proxy).target(f"{mock.url}/v1/chat/completions")
        body = b'{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
        headers = {"Origin": PAGE, "Content-Type": "application/json", "Authorization": "Bearer sk-test-1"}
        with call(target, "POST", body, headers) as response:
            assert response.status == 200
            assert response.headers["Access-Control-Allow-Origin"] == PAGE
            assert response.headers["Content-Type"].startswith("text/event-stream")
            text = response.read().decode()
        deltas = "".join(
            part.split('"content":"')[1].split('"')[0] for part in text.split("\n") if '"content":"' in part
        )
        assert deltas == "Hello through the proxy"
        (seen,) = mock.requests
        assert seen["path"] == "/v1/chat/completions" and seen["headers"]["authorization"] == "Bearer sk-test-1"
        assert "origin" not in seen["headers"]  # the provider sees a plain request, not the page's origin


def test_preflight_and_errors(proxy: str) -> None:
    with call(
        f"{proxy}/?url=http%3A%2F%2F127.0.0.1%3A9%2F",
        "OPTIONS",
        headers={"Origin": PAGE, "Access-Control-Request-Headers": "authorization,content-type"},
    ) as preflight:
        assert preflight.status == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == PAGE
        assert preflight.headers["Access-Control-Allow-Headers"] == "authorization,content-type"
    with call(f"{proxy}/?url=http%3A%2F%2F127.0.0.1%3A9%2F", headers={"Origin": "https://other.example"}) as other:
        assert other.status == 403  # another site's page cannot use it
    with call(f"{proxy}/?url=file%3A%2F%2F%2Fetc%2Fpasswd", headers={"Origin": PAGE}) as bad:
        assert bad.status == 400
    with call(f"{proxy}/?url=http%3A%2F%2F127.0.0.1%3A9%2Fv1", headers={"Origin": PAGE}) as down:
        assert down.status == 502 and "127.0.0.1:9" in down.read().decode()
        assert down.headers["Access-Control-Allow-Origin"] == PAGE  # the page can read why
    with MockProviderServer(cors=False) as mock:
        mock.script([{"fault": {"type": "http", "status": 401}}])
        target = ProxyTransport(proxy).target(f"{mock.url}/v1/chat/completions")
        with call(target, "POST", b"{}", {"Origin": PAGE, "Content-Type": "application/json"}) as refused:
            assert refused.status == 401  # the provider's own status and body
            assert refused.read()
