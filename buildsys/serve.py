"""The static servers: `build.py serve`'s, and a quiet one in a thread for the tests and benchmarks."""

from __future__ import annotations

import functools
import http.server
import os
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


def cmd_serve(port: int) -> int:
    build_site()
    handler = functools.partial(StaticHandler, directory=str(STATIC))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise BuildError(f"cannot listen on 127.0.0.1:{port}: {exc}. Try --port with another number.") from exc
    print(f"Serving static/ at http://127.0.0.1:{server.server_address[1]}/  (Ctrl+C to stop)", flush=True)
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
