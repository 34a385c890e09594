"""The python tool's sandbox, attacked: each security property is a test.

The code runs in a Pyodide interpreter of its own, in a worker inside an opaque-origin
<iframe sandbox="allow-scripts"> whose CSP blocks the network; never in the agent's interpreter.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_helpers import (
    FAKE_KEY,
    Beacon,
    SandboxPage,
    ToolRun,
    assert_responsive_during_endless_loop,
    open_sandbox_page,
)

FAST = {"python_timeout_ms": 20000}


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    server = Beacon()
    yield server
    server.close()


@pytest.fixture(scope="module")
def sandbox(browser: Any, base_url: str) -> Iterator[SandboxPage]:
    page = open_sandbox_page(browser, base_url)
    warm = page.run_tool("python", "1 + 1", python_timeout_ms=120000)  # the first run starts the interpreter
    assert warm.ok and warm.text == "=> 2", warm.text
    yield page
    page.page.context.close()


ATTEMPTS = """
import json
out = {}
async def attempt(name, fn):
    try:
        value = fn()
        if hasattr(value, "__await__"):
            value = await value
        out[name] = "ok: " + str(value)[:300]
    except BaseException as error:
        out[name] = "blocked: " + (type(error).__name__ + ": " + str(error))[:300]
"""


def corpus(code: str) -> str:
    return ATTEMPTS + code + "\njson.dumps(out)"


def outcomes(run: ToolRun) -> dict[str, str]:
    assert run.ok, run.text
    value = run.text.split("=> ", 1)[1].split("\n[Workspace", 1)[0]
    return dict(json.loads(eval(value)))  # the repr of a str


def test_cannot_reach_the_page_or_the_agents_interpreter(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool(
        "python",
        corpus("""
import js, sys
await attempt("js.document", lambda: js.document.body.dataset.secret)
await attempt("js.window", lambda: js.window.__fakeKey)
await attempt("js.parent", lambda: js.parent.document)
await attempt("js.top", lambda: js.top.location.href)
await attempt("js.eval parent", lambda: js.eval("parent.document.cookie"))
await attempt("js.eval top", lambda: js.eval("top.__fakeKey"))
await attempt("pyAgent global", lambda: js.pyAgent.pyodide)
await attempt("agent module state", lambda: __import__("py_agent")._planted_key)
await attempt("agent modules loaded", lambda: [m for m in sys.modules if m.startswith("py_agent.core")][0])
"""),
        **FAST,
    )
    results = outcomes(run)
    assert all(value.startswith("blocked") for value in results.values()), results
    assert FAKE_KEY not in run.text


def test_cannot_read_or_write_the_app_storage(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool(
        "python",
        corpus("""
import js
from pyodide.ffi import to_js
def open_db():
    request = js.indexedDB.open("py-agent-test-keys")
    return request
await attempt("indexedDB.open", open_db)
await attempt("indexedDB.databases", lambda: js.indexedDB.databases())
await attempt("caches", lambda: js.caches.open("py-agent-test"))
await attempt("localStorage", lambda: js.localStorage.getItem("py-agent.key.openai"))
await attempt("sessionStorage", lambda: js.sessionStorage.getItem("py-agent.key.anthropic"))
await attempt("cookie", lambda: js.document.cookie)
await attempt("storage.getDirectory", lambda: js.navigator.storage.getDirectory())
"""),
        **FAST,
    )
    results = outcomes(run)
    assert all(value.startswith("blocked") for value in results.values()), results
    assert "SecurityError" in results["indexedDB.open"], results
    assert FAKE_KEY not in run.text


NETWORK_ATTEMPTS = """
import js, socket, urllib.request
B = "BEACON"
await attempt("urllib", lambda: urllib.request.urlopen(B + "/urllib", timeout=2).read())
await attempt("js.fetch", lambda: js.fetch(B + "/jsfetch"))
async def pyfetch():
    from pyodide.http import pyfetch
    return await (await pyfetch(B + "/pyfetch")).string()
await attempt("pyodide.http.pyfetch", pyfetch)
def xhr():
    request = js.XMLHttpRequest.new()
    request.open("GET", B + "/xhr", False)
    request.send()
    return request.status
await attempt("XMLHttpRequest", xhr)
await attempt("WebSocket", lambda: js.WebSocket.new(B.replace("http", "ws") + "/ws"))
await attempt("importScripts", lambda: js.importScripts(B + "/import.js"))
await attempt("socket", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
await attempt("restore fetch from the prototype", lambda: js.Object.getPrototypeOf(js.self).fetch.call(js.self, B + "/proto"))
await attempt("fetch from a nested worker", lambda: js.eval(
    "new Promise((resolve) => { const w = new Worker(URL.createObjectURL(new Blob(["
    "`fetch('" + B + "/nested').then(() => postMessage('ok'), (e) => postMessage('blocked: ' + e))`]))); "
    "w.onmessage = (e) => resolve(e.data); })"))
await attempt("dynamic import", lambda: js.eval("import('" + B + "/module.js')"))
import asyncio
await asyncio.sleep(0.3)
"""


def test_cannot_reach_the_network(sandbox: SandboxPage, beacon: Beacon) -> None:
    beacon.reset()
    code = corpus(NETWORK_ATTEMPTS.replace("BEACON", beacon.url).replace("PORT", str(beacon.port)))
    run = sandbox.run_tool("python", code, **FAST)
    results = outcomes(run)
    sandbox.page.wait_for_timeout(500)
    assert beacon.snapshot() == [], (beacon.snapshot(), results)
    assert results["fetch from a nested worker"].startswith("ok: blocked"), results
    others = {k: v for k, v in results.items() if k != "fetch from a nested worker"}
    assert all(value.startswith("blocked") for value in others.values()), results


def test_network_works_only_when_the_user_allowed_it(sandbox: SandboxPage, beacon: Beacon) -> None:
    """The positive control (a separate interpreter: the network setting is part of the frame)."""
    beacon.reset()
    code = (
        "import urllib.request\nfrom pyodide.http import pyfetch\n"
        f"fetched = await (await pyfetch({beacon.url + '/allowed'!r})).string()\n"
        f"opened = urllib.request.urlopen({beacon.url + '/urllib-allowed'!r}).read().decode()\n"
        "(fetched, opened)"
    )
    run = sandbox.run_tool("python", code, python_network=True, python_timeout_ms=120000)
    assert run.ok and run.text == "=> ('beacon', 'beacon')", run.text  # urllib through pyodide-http
    assert any("/allowed" in hit for hit in beacon.snapshot())
    assert any("/urllib-allowed" in hit for hit in beacon.snapshot())
    # Back to the default: a new interpreter without network access.
    beacon.reset()
    again = sandbox.run_tool("python", code, python_timeout_ms=120000)
    assert not again.ok and "network access is off" in again.text, again.text
    assert beacon.snapshot() == []


def test_micropip_installs_what_the_site_bundles(sandbox: SandboxPage) -> None:
    run = sandbox.run_tool(
        "python",
        "import micropip\nawait micropip.install('typing-extensions')\nimport typing_extensions\n"
        "try:\n    await micropip.install('requests')\nexcept ValueError as error:\n    print('not bundled:', error)\n"
        "micropip.list()['typing-extensions'].version",
        **FAST,
    )
    assert run.ok, run.text
    assert run.text.startswith("not bundled: Can't fetch metadata for 'requests'"), run.text
    assert re.search(r"=> '\d+\.\d+\.\d+'$", run.text), run.text


def test_files_go_in_and_come_back(sandbox: SandboxPage) -> None:
    sandbox.py("await _ws.write('data/in.csv', 'a,b\\n1,2\\n')")
    run = sandbox.run_tool(
        "python",
        "import csv, os\n"
        "rows = list(csv.reader(open('data/in.csv')))\n"
        "open('data/out.txt', 'w').write(str(sum(int(x) for x in rows[1])))\n"
        "open('raw.bin', 'wb').write(bytes([0, 255]))\n"
        "print(os.getcwd())\n"
        "rows",
        **FAST,
    )
    assert run.ok, run.text
    assert run.text.startswith("/workspace\n=> [['a', 'b'], ['1', '2']]")
    assert sandbox.py("_ws.get('data/out.txt').data") == "3"
    assert sandbox.py("_ws.get('raw.bin').data == bytes([0, 255])") is True
    gone = sandbox.run_tool("python", "import os\nos.remove('raw.bin')", **FAST)
    assert gone.ok and "deleted raw.bin" in gone.text
    assert sandbox.py("_ws.get('raw.bin') is None") is True
    outside = sandbox.run_tool(
        "python",
        "import os\nos.makedirs('/tmp/elsewhere', exist_ok=True)\nopen('/tmp/elsewhere/y.txt', 'w').write('y')\n"
        "open('/workspace/../outside.txt', 'w').write('x')",
        **FAST,
    )
    assert outside.ok, outside.text
    assert json.loads(sandbox.py("json.dumps([p for p in _ws.paths() if 'y.txt' in p or 'outside' in p])")) == []


def test_tracebacks_and_syntax_errors(sandbox: SandboxPage) -> None:
    failed = sandbox.run_tool("python", "print('before')\ndef f():\n    return 1 / 0\nf()", **FAST)
    assert not failed.ok
    assert failed.text.startswith('before\nTraceback (most recent call last):\n  File "<python>", line 4')
    assert failed.text.rstrip().endswith("ZeroDivisionError: division by zero")
    started = time.monotonic()
    syntax = sandbox.run_tool("python", "def broken(:\n    pass", python_timeout_ms=60000)
    assert not syntax.ok and "SyntaxError" in syntax.text
    assert time.monotonic() - started < 3


def test_endless_loop_ends_at_the_timeout_and_the_page_stays_responsive(sandbox: SandboxPage) -> None:
    sandbox.py("await _ws.write('before-timeout.txt', 'kept')")
    measure = assert_responsive_during_endless_loop(
        sandbox, "python", "while True: pass", warm_up="0", python_timeout_ms=4000
    )
    run = measure.run
    assert not run.ok and "Execution timed out after 4 s" in run.text, run.text
    assert 3.9 <= run.seconds < 8, run.seconds
    after = sandbox.run_tool("python", "sum(range(10))", python_timeout_ms=120000)
    assert after.ok and after.text == "=> 45", after.text
    # The new interpreter got the workspace again.
    assert sandbox.run_tool("python", "open('before-timeout.txt').read()", **FAST).text == "=> 'kept'"


def test_output_streams_while_the_code_runs(sandbox: SandboxPage) -> None:
    sandbox.py("_updates.clear()")
    run = sandbox.run_tool(
        "python", "import time\nfor i in range(4):\n    print('step', i)\n    time.sleep(0.35)\n'end'", **FAST
    )
    assert run.ok and run.text == "step 0\nstep 1\nstep 2\nstep 3\n=> 'end'", run.text
    updates = json.loads(sandbox.py("json.dumps([[u.content[0].text, u.details['status']] for u in _updates])"))
    assert len(updates) >= 2, updates
    assert updates[0][0].startswith("step 0") and all(status == "running" for _, status in updates)
    assert [len(text) for text, _ in updates] == sorted(len(text) for text, _ in updates)


def test_abort_stops_a_run(sandbox: SandboxPage) -> None:
    sandbox.start_tool("python", "import time\nwhile True: time.sleep(0.01)", python_timeout_ms=60000)
    sandbox.page.wait_for_timeout(1000)
    started = time.monotonic()
    sandbox.abort()
    run = sandbox.finish_tool()
    assert not run.ok and run.text == "Execution aborted"
    assert time.monotonic() - started < 1.5
    after = sandbox.run_tool("python", "'next'", python_timeout_ms=120000)
    assert after.ok and after.text == "=> 'next'"
