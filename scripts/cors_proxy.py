#!/usr/bin/env python3
"""A small CORS proxy for the page, for a provider whose server does not answer browser requests.

    python3 scripts/cors_proxy.py                       # http://127.0.0.1:8787, for the page on 127.0.0.1:8000
    python3 scripts/cors_proxy.py --allow-origin https://me.example.org --port 9000

Then in the page: Settings → Custom providers → "CORS proxy": the proxy's URL (http://127.0.0.1:8787),
and tick "through the proxy" on the providers that need it. The page sends their requests to
`<proxy>/?url=<the request URL, percent-encoded>` (py_agent/transports/proxy.py); this forwards
each one to that URL with its method, body and headers (the key included), streams the answer back
as it arrives (server-sent events stay live) and adds the CORS headers the page needs.

It answers only the page origins given with --allow-origin (a page of another site gets 403),
forwards only http(s) URLs, and listens on 127.0.0.1 unless told otherwise. It sees the keys of the
requests it carries: run it yourself, on your own machine. Standard library only, Python 3.11+.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

DEFAULT_ORIGINS = ("http://127.0.0.1:8000", "http://localhost:8000")
# Not forwarded to the provider: the browser's and the connection's own headers.
DROPPED_REQUEST = {
    "host",
    "origin",
    "referer",
    "cookie",
    "connection",
    "keep-alive",
    "content-length",
    "transfer-encoding",
    "accept-encoding",
    "te",
    "upgrade",
    "proxy-authorization",
}
# Not copied back: the connection's own, and those this proxy sets itself.
DROPPED_RESPONSE = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "set-cookie"}
CHUNK = 64 * 1024


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    allowed_origins: frozenset[str] = frozenset(DEFAULT_ORIGINS)
    timeout_s = 600.0

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"cors_proxy: {format % args}\n")

    # -- CORS --------------------------------------------------------------------------------

    def origin_allowed(self) -> str | None:
        origin = self.headers.get("Origin")
        if origin is None:
            return ""  # not a browser's cross-origin request (curl, a test): no CORS headers needed
        return origin if origin in self.allowed_origins or "*" in self.allowed_origins else None

    def cors_headers(self, origin: str) -> None:
        if origin:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Access-Control-Expose-Headers", "*")
            self.send_header("Vary", "Origin")

    def refuse(self, status: int, message: str, origin: str = "") -> None:
        body = message.encode("utf-8")
        self.send_response(status)
        self.cors_headers(origin)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_OPTIONS(self) -> None:
        origin = self.origin_allowed()
        if origin is None:
            self.refuse(403, "This proxy does not serve that page's origin (see --allow-origin).")
            return
        self.send_response(204)
        self.cors_headers(origin)
        self.send_header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
        self.send_header("Access-Control-Allow-Headers", self.headers.get("Access-Control-Request-Headers") or "*")
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- forwarding ------------------------------------------------------------------------------

    def forward(self) -> None:
        origin = self.origin_allowed()
        if origin is None:
            self.refuse(403, "This proxy does not serve that page's origin (see --allow-origin).")
            return
        target = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("url", [""])[0]
        if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
            self.refuse(400, "Expected /?url=<an http(s) URL, percent-encoded>.", origin)
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in DROPPED_REQUEST}
        request = urllib.request.Request(target, data=body, headers=headers, method=self.command)
        try:
            upstream: Any = urllib.request.urlopen(request, timeout=self.timeout_s)
        except urllib.error.HTTPError as error:
            upstream = error  # the provider's own error status and body go back to the page
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", error)
            self.refuse(502, f"The proxy could not reach {urllib.parse.urlsplit(target).netloc}: {reason}", origin)
            return
        with upstream:
            self.send_response(upstream.status)
            self.cors_headers(origin)
            for name, value in upstream.headers.items():
                if name.lower() not in DROPPED_RESPONSE and not name.lower().startswith("access-control-"):
                    self.send_header(name, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while True:
                data = upstream.read1(CHUNK) if hasattr(upstream, "read1") else upstream.read(CHUNK)
                if not data:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = forward


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


def make_server(host: str, port: int, origins: Sequence[str]) -> ProxyServer:
    handler = type("Handler", (ProxyHandler,), {"allowed_origins": frozenset(o.rstrip("/") for o in origins)})
    return ProxyServer((host, port), handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help=f"the page's origin (repeatable; default: {', '.join(DEFAULT_ORIGINS)}; * for any)",
    )
    options = parser.parse_args(argv)
    origins = options.allow_origin or list(DEFAULT_ORIGINS)
    server = make_server(options.host, options.port, origins)
    print(f"CORS proxy on http://{options.host}:{server.server_address[1]} for {', '.join(origins)}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
