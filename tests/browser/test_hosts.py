"""The site on static hosts as they come, and the page's diagnosis of a host that gets a file wrong.

- Debian's nginx, Apache, lighttpd and Caddy, each started on a free port of 127.0.0.1 with its
  stock MIME settings (/etc/nginx/mime.types; /etc/mime.types through Apache's mime.conf,
  lighttpd's create-mime.conf.pl and Caddy's own table), serve a copy of the built site from a
  sub-path: the page gets ready and the demo model answers. `python3 build.py test` installs the
  servers (buildsys/machine.py).
- A host fault per test (a script with a wrong type, a 404, a 403, an HTML page in place of a
  file, a gzip'd file without its Content-Encoding), served by a small server that injects it:
  the page names the cause and the file.
- A .wasm served as application/octet-stream still works.
- A non-secure origin (http://insecure.test, mapped to 127.0.0.1 by Chromium's resolver: not
  localhost, so no secure context): no service worker, Web Locks or crypto.subtle, and the page
  still starts, chats with the demo and says what needs HTTPS.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_ARGS
from web_app_helpers import App, open_app

from buildsys.machine import STATIC_SERVERS, is_root
from buildsys.serve import QuietServer, QuietStaticHandler

SUB_PATH = "/some/sub/path"
INSECURE_HOST = "insecure.test"
DEMO_PROMPT = "Show me what this app can do"
# HTML's JavaScript MIME types, as a browser accepts them for a module script.
JS_TYPES = {"text/javascript", "application/javascript", "application/x-javascript", "application/ecmascript"}
SERVER_USER = "www-data"  # who a server started as root serves the files as


# Chromium resolves insecure.test to 127.0.0.1: a plain-http origin that is not localhost.
@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: run `python3 build.py test`")
    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {INSECURE_HOST} 127.0.0.1"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=args, headless=True)
        yield browser
        browser.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def media_type(value: str | None) -> str:
    return (value or "").split(";")[0].strip().lower()


def readable_copy(site: Path) -> Path:
    """A copy of the site at SUB_PATH under a new host root that a server's worker (www-data when
    started as root) can read: (host root)."""
    root = Path(tempfile.mkdtemp(prefix="py-agent-host-"))
    dest = root / SUB_PATH.strip("/")
    shutil.copytree(site, dest)
    root.chmod(0o755)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


# ---- The servers, each in its stock MIME settings ----


def nginx_config(root: Path, port: int, run: Path) -> tuple[list[str], str]:
    user = f"user {SERVER_USER};" if is_root() else ""
    temp = " ".join(f"{name}_temp_path {run / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = f"""
{user}
worker_processes 1;
pid {run / "nginx.pid"};
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    gzip on;
    access_log off;
    {temp}
    server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
"""
    path = run / "nginx.conf"
    path.write_text(conf)
    cmd = [STATIC_SERVERS["nginx"], "-e", str(run / "error.log"), "-p", str(run), "-c", str(path), "-g", "daemon off;"]
    return cmd, conf


def apache_config(root: Path, port: int, run: Path) -> tuple[list[str], str]:
    modules = "/usr/lib/apache2/modules"
    user = f"User {SERVER_USER}\nGroup {SERVER_USER}" if is_root() else ""
    conf = f"""
ServerRoot "{run}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{run / "apache.pid"}"
DefaultRuntimeDir "{run}"
Mutex file:{run} default
ErrorLog "{run / "error.log"}"
LogLevel warn
{user}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule dir_module {modules}/mod_dir.so
LoadModule filter_module {modules}/mod_filter.so
LoadModule deflate_module {modules}/mod_deflate.so
Include /etc/apache2/mods-available/mime.load
Include /etc/apache2/mods-available/mime.conf
Include /etc/apache2/mods-available/deflate.conf
DocumentRoot "{root}"
DirectoryIndex index.html
<Directory "{root}">
    Require all granted
</Directory>
"""
    path = run / "apache2.conf"
    path.write_text(conf)
    return [STATIC_SERVERS["apache2"], "-f", str(path), "-DFOREGROUND"], conf


def lighttpd_config(root: Path, port: int, run: Path) -> tuple[list[str], str]:
    user = f'server.username = "{SERVER_USER}"\nserver.groupname = "{SERVER_USER}"' if is_root() else ""
    conf = f"""
server.modules = ("mod_indexfile", "mod_staticfile")
server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{run / "error.log"}"
{user}
index-file.names = ("index.html")
include_shell "/usr/share/lighttpd/create-mime.conf.pl"
"""
    path = run / "lighttpd.conf"
    path.write_text(conf)
    return [STATIC_SERVERS["lighttpd"], "-D", "-f", str(path)], conf


def caddy_config(root: Path, port: int, run: Path) -> tuple[list[str], str]:
    conf = f"""{{
    admin off
    auto_https off
    storage file_system {{
        root {run / "data"}
    }}
}}
http://127.0.0.1:{port} {{
    root * {root}
    file_server
}}
"""
    path = run / "Caddyfile"
    path.write_text(conf)
    return [STATIC_SERVERS["caddy"], "run", "--config", str(path), "--adapter", "caddyfile"], conf


SERVERS: dict[str, Callable[[Path, int, Path], tuple[list[str], str]]] = {
    "nginx": nginx_config,
    "apache2": apache_config,
    "lighttpd": lighttpd_config,
    "caddy": caddy_config,
}


@dataclass
class Host:
    base: str  # the site's folder, without a trailing slash
    root: Path


def server_folder(server: str) -> Path:
    """A folder for the server's configuration, logs and temporary files, writable by its worker."""
    run = Path(tempfile.mkdtemp(prefix=f"py-agent-{server}-"))
    run.chmod(0o755)
    if is_root():
        shutil.chown(run, SERVER_USER, SERVER_USER)
    return run


def wait_until_served(url: str, process: subprocess.Popen[bytes], run: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    logs = "\n".join(f"{p.name}:\n{p.read_text(errors='replace')}" for p in sorted(run.glob("*.log")))
    pytest.fail(f"the server did not serve {url} (exit {process.poll()}):\n{logs}")


@pytest.fixture
def stock_host(built_site: Path) -> Iterator[Callable[[str], Host]]:
    """stock_host(server): that server, in its stock MIME settings, serving a copy of the site at SUB_PATH."""
    processes: list[subprocess.Popen[bytes]] = []
    folders: list[Path] = []

    def start(server: str) -> Host:
        binary = STATIC_SERVERS[server]
        if not Path(binary).exists():
            pytest.fail(f"{binary} is missing: `python3 build.py test` installs it (apt-get install {server})")
        root = readable_copy(built_site)
        run = server_folder(server)
        folders.extend((root, run))
        port = free_port()
        cmd, _ = SERVERS[server](root, port, run)
        env = {**os.environ, "HOME": str(run), "XDG_DATA_HOME": str(run), "XDG_CONFIG_HOME": str(run)}
        with (run / "output.log").open("wb") as output:
            processes.append(subprocess.Popen(cmd, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=run))
        base = f"http://127.0.0.1:{port}{SUB_PATH}"
        wait_until_served(base + "/", processes[-1], run)
        return Host(base, root)

    yield start
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def chat_with_the_demo(app: App) -> None:
    page = app.page
    app.type_and_enter(DEMO_PROMPT)
    page.locator("#transcript .msg.assistant:not(.streaming) table").wait_for(timeout=60_000)
    app.wait_idle()
    reply = page.locator("#transcript .msg.assistant").last
    assert reply.locator("h2", has_text="Hello from the offline demo").count() == 1


def head(url: str) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}


def test_the_site_ships_every_script_as_js(built_site: Path) -> None:
    assert not list(built_site.rglob("*.mjs"))
    loader = (built_site / "pyodide/pyodide.js").read_text(encoding="utf-8")
    # Pyodide's loader imports the Emscripten module by its new name.
    assert "pyodide.asm.js" in loader and "pyodide.asm.mjs" not in loader
    assert "sourceMappingURL" not in loader
    runtime = [f["file"] for f in json.loads((built_site / "manifest.json").read_text(encoding="utf-8"))["runtime"]]
    assert {"pyodide/pyodide.js", "pyodide/pyodide.asm.js", "pyodide/pyodide.asm.wasm"} <= set(runtime)


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_stock_server_serves_the_site_from_a_sub_path(
    server: str, stock_host: Callable[[str], Host], browser: Any
) -> None:
    host = stock_host(server)
    manifest = json.loads((host.root / SUB_PATH.strip("/") / "manifest.json").read_text(encoding="utf-8"))
    # Every script of the site is served as JavaScript, as the server comes (no .mjs anywhere).
    scripts = [f["path"] for f in manifest["files"] if f["path"].endswith((".js", ".mjs"))]
    assert "pyodide/pyodide.js" in scripts and "pyodide/pyodide.asm.js" in scripts
    for path in scripts:
        status, headers = head(f"{host.base}/{path}")
        assert status == 200, f"{server}: {path}: HTTP {status}"
        assert media_type(headers.get("content-type")) in JS_TYPES, f"{server}: {path}: {headers.get('content-type')}"

    app = open_app(browser, host.base)
    try:
        assert app.page.get_attribute("html", "data-state") == "ready"
        chat_with_the_demo(app)
        outside = [r.url for r in app.requests if not r.url.startswith(f"{host.base}/")]
        assert not outside, f"requests outside the sub-path: {outside}"
        assert not app.page_errors, app.page_errors
    finally:
        app.page.context.close()


def test_nginx_names_a_file_it_may_not_read(stock_host: Callable[[str], Host], visit: Any) -> None:
    # A real server's 403: a file its worker may not read (copied with the wrong permissions).
    host = stock_host("nginx")
    site = host.root / SUB_PATH.strip("/")
    file = stdlib_file(site)
    (site / file).chmod(0)
    run = visit(host.base + "/")
    assert run.state == "error"
    message = run.page.locator("#boot-error").inner_text()
    for word in [file, "403 Forbidden", "may not read", "chmod"]:
        assert word in message, f"{word!r} not in the error shown:\n{message}"


# ---- Host faults, injected by a small server ----


def fault_server(site: Path, faults: dict[str, str]) -> tuple[str, Callable[[], None]]:
    """A static server for site (127.0.0.1, a thread) that answers for the files in `faults` (path
    in the site -> fault) as a broken host would: "wrong-type" (a script as
    application/octet-stream), "missing" (404), "forbidden" (403), "html-fallback" (index.html,
    as text/html), "gzip" (the file gzip'd, without Content-Encoding), "octet-stream" (the file,
    as application/octet-stream). (base URL, stop)."""
    index = (site / "index.html").read_bytes()

    class Handler(QuietStaticHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(site), **kwargs)

        def send_head(self) -> Any:
            path = self.path.split("?")[0].lstrip("/")
            fault = faults.get(path)
            if fault is None:
                return super().send_head()
            if fault in ("missing", "forbidden"):
                self.send_error(404 if fault == "missing" else 403)
                return None
            data = (site / path).read_bytes()
            content_type = self.guess_type(path)
            if fault == "html-fallback":
                data, content_type = index, "text/html"
            elif fault == "gzip":
                data = gzip.compress(data, mtime=0)
            elif fault in ("wrong-type", "octet-stream"):
                content_type = "application/octet-stream"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return io.BytesIO(data)

    server = QuietServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


@pytest.fixture
def faulty_host(built_site: Path) -> Iterator[Callable[[dict[str, str]], str]]:
    stops: list[Callable[[], None]] = []

    def start(faults: dict[str, str]) -> str:
        base, stop = fault_server(built_site, faults)
        stops.append(stop)
        return base

    yield start
    for stop in stops:
        stop()


def stdlib_file(site: Path) -> str:
    return str(json.loads((site / "manifest.json").read_text(encoding="utf-8"))["stdlib"])


HOST_FAULTS: dict[str, tuple[Callable[[Path], str], str, list[str]]] = {
    # fault: (the file it hits, words the page's error must show besides the file's name)
    "wrong-type": (
        lambda s: "pyodide/pyodide.js",
        "wrong-type",
        [
            "application/octet-stream",
            "text/javascript",
            "nginx",
            "types { text/javascript js; }",
            "AddType text/javascript .js",
        ],
    ),
    "missing": (lambda s: "pyodide/pyodide.asm.js", "missing", ["404", "not copied"]),
    "forbidden": (stdlib_file, "forbidden", ["403", "may not read"]),
    "html-fallback": (lambda s: "pyodide/pyodide.asm.wasm", "html-fallback", ["HTML page", "text/html", "fallback"]),
    "gzip": (lambda s: "pyodide/pyodide.asm.js", "gzip", ["gzip", "Content-Encoding"]),
}


@pytest.mark.parametrize("fault", list(HOST_FAULTS))
def test_a_host_fault_is_named_with_its_file_and_fix(
    fault: str, built_site: Path, faulty_host: Callable[[dict[str, str]], str], visit: Any
) -> None:
    file_of, injected, words = HOST_FAULTS[fault]
    file = file_of(built_site)
    run = visit(faulty_host({file: injected}) + "/")
    assert run.state == "error"
    box = run.page.locator("#boot-error")
    assert box.is_visible()
    message = box.inner_text()
    for word in [file, *words]:
        assert word in message, f"{word!r} not in the error shown:\n{message}"
    assert "incomplete or damaged" not in message, message
    causes = run.page.evaluate("() => (window.pyAgent.error.faults ?? []).map((f) => f.cause)")
    assert causes == [{"gzip": "compressed"}.get(injected, injected)], message
    assert run.page.locator("#boot-steps li[data-status='failed']").count() == 1, message


def test_an_app_script_of_the_wrong_type_is_named(
    built_site: Path, faulty_host: Callable[[dict[str, str]], str], browser: Any
) -> None:
    # A module of app.js's own: app.js's module graph stops without it. In a bundled site
    # (buildsys/bundle.py), the bundle's entry for app.js; else one of the modules app.js imports.
    bundle = json.loads((built_site / "manifest.json").read_text(encoding="utf-8"))["bundle"]
    file = bundle["entries"]["app.js"] if bundle else "ui/composer.js"
    base = faulty_host({file: "wrong-type"})
    page = browser.new_page()
    try:
        page.goto(base + "/")
        page.locator("html[data-state='error']").wait_for(state="attached", timeout=120_000)
        message = page.locator("#boot-error").inner_text()
        for word in [file, "application/octet-stream", "text/javascript", "AddType text/javascript .js"]:
            assert word in message, f"{word!r} not in the error shown:\n{message}"
        assert page.get_attribute("html", "data-app") == "loading"
        assert page.locator("#boot-ready").is_hidden()
    finally:
        page.context.close()


def test_a_markdown_library_of_the_wrong_type_is_named_and_the_app_works(
    faulty_host: Callable[[dict[str, str]], str], browser: Any
) -> None:
    # The sanitizer's library (an .mjs file upstream), loaded once the app is ready
    # (web/ui/markdown-deferred.js): the app works, messages stay plain text, and the page says why.
    file = "vendor/purify.es.js"
    base = faulty_host({file: "wrong-type"})
    page = browser.new_page()
    try:
        page.goto(base + "/?demo-tps=0")
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        alert = page.get_by_role("alert").filter(has_text="Markdown renderer")
        alert.wait_for(timeout=60_000)
        message = alert.inner_text()
        for word in [file, "application/octet-stream", "text/javascript", "AddType text/javascript .js"]:
            assert word in message, f"{word!r} not in the notice shown:\n{message}"
        page.locator("#input").fill("Hello **there**")
        page.locator("#input").press("Enter")
        reply = page.locator("#transcript .msg.assistant:not(.streaming) .md").first
        reply.wait_for(timeout=60_000)
        assert reply.inner_text().strip() and reply.evaluate("el => el.classList.contains('md-plain')")
    finally:
        page.context.close()


@pytest.mark.parametrize("injected", ["wrong-type", "missing", "html-fallback"])
def test_a_start_up_script_the_browser_refused_is_named(
    injected: str, faulty_host: Callable[[dict[str, str]], str], browser: Any
) -> None:
    # boot.js itself: none of the page's modules can run, so web/boot/boot-watchdog.js (a classic script) explains it.
    base = faulty_host({"boot/boot.js": injected})
    page = browser.new_page()
    try:
        page.goto(base + "/")
        page.locator("html[data-state='error']").wait_for(state="attached", timeout=60_000)
        message = page.locator("#boot-error").inner_text()
        words = {
            "wrong-type": [
                "boot/boot.js",
                "application/octet-stream",
                "text/javascript",
                "AddType text/javascript .js",
            ],
            "missing": ["boot/boot.js", "404"],
            "html-fallback": ["boot/boot.js", "text/html", "fallback"],
        }[injected]
        for word in words:
            assert word in message, f"{word!r} not in the error shown:\n{message}"
        assert page.locator("#boot-error").is_visible()
    finally:
        page.context.close()


def test_wasm_served_as_octet_stream_still_boots(
    built_site: Path, faulty_host: Callable[[dict[str, str]], str], browser: Any
) -> None:
    wasm = {"pyodide/pyodide.asm.wasm": "octet-stream"}
    app = open_app(browser, faulty_host(wasm))
    try:
        assert app.page.get_attribute("html", "data-state") == "ready"
        # The shipped memory snapshot is restored into the runtime compiled from those bytes.
        assert app.page.evaluate("() => window.pyAgent.boot.from") == "shipped"
        assert not app.page_errors, app.page_errors
    finally:
        app.page.context.close()
    # Without it (not copied to the host): Python starts normally, and the snapshot's worker
    # compiles the same runtime, typed the same way.
    shipped = json.loads((built_site / "manifest.json").read_text(encoding="utf-8"))["snapshot"]["file"]
    app = open_app(browser, faulty_host({**wasm, shipped: "missing"}))
    try:
        assert app.page.get_attribute("html", "data-state") == "ready"
        assert app.page.evaluate("() => window.pyAgent.boot.from") is None
        assert app.page.evaluate("() => window.pyAgent.boot.stored") == "made"
        assert not app.page_errors, app.page_errors
    finally:
        app.page.context.close()


def test_a_non_secure_origin_starts_chats_and_names_what_needs_https(
    built_site: Path, faulty_host: Callable[[dict[str, str]], str], browser: Any
) -> None:
    base = faulty_host({}).replace("127.0.0.1", INSECURE_HOST)
    app = open_app(browser, base)
    page = app.page
    try:
        secure = page.evaluate(
            "() => [isSecureContext, 'serviceWorker' in navigator, !!navigator.locks, !!globalThis.crypto?.subtle]"
        )
        assert secure == [False, False, False, False]
        assert page.get_attribute("html", "data-state") == "ready"
        needs = page.evaluate("() => window.pyAgent.needsHttps")
        assert any("offline" in n for n in needs) and any("Web Locks" in n for n in needs), needs
        notice = page.locator("#https-notice")
        notice.wait_for()
        assert "HTTPS" in notice.inner_text() and "offline" in notice.inner_text()
        assert page.evaluate("() => window.pyAgent.offline") == "unsupported"
        chat_with_the_demo(app)
        assert page.locator("#transcript .msg.user").count() == 1
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()
