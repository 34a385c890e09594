"""The page's key flows, written once (chat.py over drivers.py) and run in Chromium, Firefox ESR and
WebKitGTK: boot from a sub-path, the offline demo, the key dialog and a streamed reply from the
mock provider, a reload that keeps the session, stop mid-reply, the `javascript` and `python`
tools in their sandboxes (with an escape attempt each), export and import, and the service
worker's offline reload.

One page per engine, booted once; the tests run in order through it, as a user would.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chat import Chat
from conftest import SUB_PATH, Site
from drivers import Driver

from py_agent.testing.mock_server import MockProviderServer


@pytest.fixture(scope="module")
def chat(driver: Driver, site: Site, mock: MockProviderServer) -> Iterator[Chat]:
    chat = Chat(driver, site.url)
    chat.open()
    yield chat


def test_boots_from_a_sub_path_and_the_offline_demo_answers(chat: Chat, site: Site) -> None:
    d = chat.driver
    assert d.attr("html", "data-state") == "ready"
    # Everything the page loaded came from its own folder.
    loaded = d.js("return performance.getEntriesByType('resource').map((e) => e.name);")
    outside = [url for url in loaded if not url.startswith(site.url)]
    assert not outside, outside
    assert "Demo" in d.text("#model-button")
    chat.send("Show me what this app can do")
    d.wait("#transcript .msg.assistant:not(.streaming) h2", "Hello from the offline demo")
    chat.wait_idle()
    assert d.count("#transcript .msg.assistant table") == 1
    assert d.count("#transcript .msg.assistant .code-block code.hljs .hljs-keyword") > 0
    assert d.js("return location.pathname;") == SUB_PATH
    assert str(d.js("return location.hash;")).startswith("#/s/")
