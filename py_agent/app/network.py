"""How requests of custom providers reach their server, and what to do when they cannot.

A user whose server cannot allow this page's origin (CORS) can send that provider's requests
through a proxy of their own: ``<proxy URL>/?url=<the request URL, percent-encoded>``. The proxy
then sees the requests, including the provider's key, so it is used only for the providers the user
marked (``useProxy`` on the custom provider) and only when a proxy URL is set.

Also: the checks of a base URL typed in the custom-provider form (:func:`check_base_url`), and the
advice for a request that never reached its server (:func:`unreachable_advice`), which names this
page's real origin (:func:`set_page_origin`, told by the page at start).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..ai.abort import AbortSignal
from ..ai.custom import KIND_LABELS, CustomProvider, DiscoveryError, get_custom_provider
from ..ai.eager import start_eagerly
from ..ai.transport import HttpRequest, HttpResponse, HttpTransport
from ..transports.proxy import ProxyTransport
from .errors import clean_text

__all__ = [
    "BROWSER_CALLS",
    "SentSignalTransport",
    "check_base_url",
    "discovery_problem",
    "is_loopback_host",
    "page_origin",
    "provider_transport",
    "set_page_origin",
    "unreachable_advice",
    "uses_proxy",
]

BROWSER_CALLS: dict[str, bool] = {
    "anthropic": True,  # with its anthropic-dangerous-direct-browser-access header
    "openai": True,
    "google": True,
    "openrouter": True,
    "groq": True,
    "demo": True,
}
"""Built-in providers known to answer requests made by a web page (CORS). The others are not known
to: a request of theirs that the browser refuses gets the proxy advice. Keep README.md's provider
table ("Providers: direct, or through a proxy") in step with it."""

_LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]")
_page_origin = ""


def set_page_origin(origin: str) -> None:
    """The origin of the page the app runs in (``location.origin``), for advice that names it."""
    global _page_origin
    _page_origin = origin.strip().rstrip("/") if origin.strip().lower().startswith(("http://", "https://")) else ""


def page_origin() -> str:
    return _page_origin


def uses_proxy(provider: CustomProvider | None) -> bool:
    extra: Mapping[str, Any] = (provider.model_extra or {}) if provider is not None else {}
    return bool(extra.get("useProxy"))


def provider_transport(provider_name: str, proxy_url: str | None) -> HttpTransport | None:
    """The transport for a provider's requests: the proxy when the provider asks for it and a
    proxy URL is set; ``None`` (the default transport) otherwise."""
    provider = get_custom_provider(provider_name)
    if proxy_url and uses_proxy(provider):
        return ProxyTransport(proxy_url)
    return None


class SentSignalTransport:
    """A transport that calls ``on_sent`` as soon as its request has been handed to the network
    (the inner transport run up to its first wait: the page's ``fetch()`` called), in that same
    turn, before the response is awaited. The chat starts saving the user's message there
    (py_agent/app/chat.py ``_release``)."""

    def __init__(self, inner: HttpTransport, on_sent: Callable[[], None]) -> None:
        self.inner = inner
        self.on_sent = on_sent

    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpResponse:
        response = start_eagerly(self.inner.send(request, signal))
        try:
            self.on_sent()
        except Exception as error:  # the request is on its way: reported as a callback's failure is
            loop = asyncio.get_running_loop()
            loop.call_exception_handler({"message": "on_sent failed", "exception": error})
        return await response


def is_loopback_host(host: str) -> bool:
    host = host.lower()
    return host in _LOOPBACK or host.startswith("127.") or host.endswith(".localhost")


def check_base_url(url: str, origin: str | None = None) -> str:
    """A base URL typed by the user, checked: an ``http(s)`` URL with a host, nothing else.

    Returns the URL (trimmed); raises ``ValueError`` with the reason and what to type instead.
    ``origin`` (default: the page's) decides whether a plain-http address is blocked as mixed content.
    """
    text = url.strip()
    if not text:
        raise ValueError("Enter the server's base URL, e.g. http://localhost:11434.")
    if any(c.isspace() for c in text):
        raise ValueError(f"“{text}” is not a URL: it contains spaces (a URL looks like http://localhost:11434).")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if "://" not in text or not scheme:
        raise ValueError(f"“{text}” is not a URL: it must start with http:// or https://, e.g. http://localhost:11434.")
    if scheme not in ("http", "https"):
        raise ValueError(
            f"“{text}” uses {scheme}:, which this app cannot call: a base URL starts with http:// or https://."
        )
    try:
        host = parts.hostname or ""
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        raise ValueError(f"“{text}” is not a valid URL: check the port after the host name.") from None
    if not host or text.lower().startswith(f"{scheme}:///"):
        raise ValueError(f"“{text}” has no host name: write it as {scheme}://host:port.")
    page = page_origin() if origin is None else origin
    if scheme == "http" and page.lower().startswith("https://") and not is_loopback_host(host):
        raise ValueError(
            f"This page is served over https, and browsers block its requests to plain-http addresses other "
            f"than localhost (mixed content): use an https URL for {host}, or open the app over http."
        )
    return text


def _origin_words() -> str:
    return page_origin() or "this page's origin"


def _local_server_fix(kind: str) -> str:
    origin = _origin_words()
    if kind == "ollama":
        return (
            f"Ollama only answers pages from the origins in OLLAMA_ORIGINS: start it with "
            f"OLLAMA_ORIGINS={origin} ollama serve (or set OLLAMA_ORIGINS in its service's environment) "
            "and restart it."
        )
    if kind == "lmstudio":
        return (
            'LM Studio refuses pages by default: turn on "Enable CORS" in its server settings (Developer tab), '
            "or start it with lms server start --cors."
        )
    if kind == "llama.cpp":
        return f"llama-server must allow this page: start it with --cors-origins {origin}."
    if kind == "vllm":
        return f"vLLM must allow this page: start it with --allowed-origins '[\"{origin}\"]'."
    return (
        f"The server must allow requests from {origin} (CORS: Access-Control-Allow-Origin, and the "
        "Authorization header)."
    )


def unreachable_advice(
    provider_name: str, base_url: str = "", *, browser: bool = True, custom: CustomProvider | None = None
) -> str:
    """What to do when a request to ``provider_name`` got no response at all.

    ``browser``: a browser reported it (CORS, an unreachable host and being offline look alike).
    The proxy advice is given only where the provider is not known to answer web pages.
    """
    custom = custom if custom is not None else get_custom_provider(provider_name)
    url = custom.base_url if custom is not None else base_url
    parts = urlsplit(url) if "://" in url else None
    host = (parts.hostname or "") if parts is not None else ""
    where = f" at {parts.scheme}://{parts.netloc}" if parts is not None and parts.netloc else ""
    if custom is None:
        if not browser or BROWSER_CALLS.get(provider_name):
            return "Check your internet connection, then retry."
        return (
            "Check your internet connection. If it works, the provider may not accept requests from web pages "
            "(CORS): set a CORS proxy in Settings → Custom providers."
        )
    label = KIND_LABELS.get(custom.kind, "the server")
    running = f"Check that {label} is running{where}." if custom.kind != "openai-compatible" else ""
    if not browser:
        return running or f"Check the base URL{where} and your network connection."
    parts_out = [
        running or f"Check the base URL{where} and your connection.",
        "A browser reports a server that is down and one that does not allow this page (CORS) the same way.",
        _local_server_fix(custom.kind),
    ]
    page = page_origin()
    if parts is not None and parts.scheme == "http" and page.startswith("https://") and not is_loopback_host(host):
        parts_out.append(
            "This page is served over https, so the browser blocks plain-http addresses other than localhost "
            "(mixed content): serve the API over https."
        )
    if uses_proxy(custom):
        parts_out.append("This provider's requests go through your CORS proxy: check that it is running.")
    else:
        parts_out.append(
            "If you cannot change the server, send this provider's requests through a CORS proxy "
            "(Settings → Custom providers)."
        )
    return " ".join(parts_out)


def discovery_problem(error: DiscoveryError, custom: CustomProvider) -> str:
    """The form's words for a failed model discovery (the library's message names no origin)."""
    if error.cors_suspected:
        return f"Could not reach {error.url} from this page. {unreachable_advice(custom.name, custom=custom)}"
    if error.status == 403 and custom.kind == "ollama":
        return (
            f"Ollama refused the request (HTTP 403): it answers only pages from the origins in OLLAMA_ORIGINS. "
            f"{_local_server_fix('ollama')}"
        )
    return clean_text(str(error))
