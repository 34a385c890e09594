"""How requests of custom providers reach their server: directly, or through a CORS proxy.

A user whose server cannot allow this page's origin (CORS) can send that provider's requests
through a proxy of their own: ``<proxy URL>/?url=<the request URL, percent-encoded>``. The proxy
then sees the requests, including the provider's key, so it is used only for the providers the user
marked (``useProxy`` on the custom provider) and only when a proxy URL is set.

Also: the explanation added to a chat error when the browser refused a custom provider's request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ai.custom import CustomProvider, cors_help, get_custom_provider
from ..ai.transport import HttpTransport
from ..transports.proxy import ProxyTransport

__all__ = ["explain_connection_error", "provider_transport", "uses_proxy"]

# The browser transport's words for a refused or failed fetch (py_agent/transports/fetch.py).
_REFUSED_MARKERS = ("The browser refused or could not complete the request", "Failed to fetch", "NetworkError")


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


def explain_connection_error(provider_name: str, error: str) -> str | None:
    """What to do when the browser refused a custom provider's request (``None``: nothing to add)."""
    provider = get_custom_provider(provider_name)
    if provider is None or not any(marker in error for marker in _REFUSED_MARKERS):
        return None
    return cors_help(provider.kind, provider.base_url)
