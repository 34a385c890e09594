"""The static servers: `build.py serve`'s, and a quiet one in a thread for the tests and benchmarks."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from .config import STATIC, BuildError
from .site import build_site

# Types that some systems' mime tables lack (a module script needs a JavaScript type).
MIME_TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".webmanifest": "application/manifest+json",
}


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return MIME_TYPES.get(os.path.splitext(str(path))[1].lower()) or super().guess_type(path)


class QuietStaticHandler(StaticHandler):
    """StaticHandler without a log line per request (the tests' and benchmarks' servers)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a browser that drops a connection mid-download is not a failure


def serve_in_background(folder: str | os.PathLike[str]) -> tuple[str, Callable[[], None]]:
    """A plain static server for folder on 127.0.0.1, in a thread, without request logs (the tests'
    and benchmarks' server): (base URL without a trailing slash, stop)."""
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietStaticHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


LOCAL_HOST = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"


def lan_address() -> str | None:
    """This machine's address on its network (the interface of its default route), or None.

    A UDP socket's connect() sends nothing: it only picks the interface a packet would leave from."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))
        address = str(probe.getsockname()[0])
        if not address.startswith("127.") and address != ALL_INTERFACES:
            return address
    return None


def serve_urls(host: str, port: int, lan: str | None) -> list[str]:
    """The URLs to print for a server bound to host:port: on all interfaces, this machine's own and
    its network address (to open from a phone on the same network)."""
    if host in (ALL_INTERFACES, "", "::"):
        return [f"http://{LOCAL_HOST}:{port}/", *([f"http://{lan}:{port}/"] if lan else [])]
    shown = f"[{host}]" if ":" in host else host
    return [f"http://{shown}:{port}/"]


def cmd_serve(port: int, host: str = LOCAL_HOST) -> int:
    build_site()
    handler = functools.partial(StaticHandler, directory=str(STATIC))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise BuildError(f"cannot listen on {host}:{port}: {exc}. Try --port with another number.") from exc
    urls = serve_urls(host, server.server_address[1], lan_address() if host == ALL_INTERFACES else None)
    print(f"Serving static/ at {urls[0]}  (Ctrl+C to stop)", flush=True)
    for url in urls[1:]:
        print(f"On your network: {url}", flush=True)
    if host != LOCAL_HOST:
        # Only https or localhost is a secure context: elsewhere the browser refuses the service
        # worker (no offline use, no install) and the clipboard; the chat itself works.
        print("Over plain http from another device the page works, but offline use and install need https.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


# --------------------------------------------------------------------------------------
# `test` and `bench`: machine set-up
# --------------------------------------------------------------------------------------
