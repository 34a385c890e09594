"""The one I/O seam of the provider layer: an injected HTTP transport.

Providers are pure request builders and stream decoders; they send requests through an
:class:`HttpTransport`. The implementations live in :mod:`py_agent.transports` (the page's
``fetch`` in Pyodide, ``httpx`` in CPython); the package root installs
:func:`py_agent.transports.default_transport` as the factory :func:`get_default_transport` uses,
so this layer never imports the transports nor asks where it runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .abort import AbortSignal


@dataclass
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@runtime_checkable
class HttpResponse(Protocol):
    """A response whose body has not been read yet."""

    status: int
    status_text: str
    headers: Mapping[str, str]
    """Lower-cased header names. Cross-origin, only CORS-exposed headers are visible."""

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk as it arrives (never buffered whole)."""
        ...

    async def aread(self) -> bytes:
        """The whole (remaining) body; for error responses."""
        ...

    async def aclose(self) -> None:
        """Stop reading and release the connection (cancels the body stream)."""
        ...


class TransportError(Exception):
    """The request failed before a response arrived (DNS, refused, reset, CORS, offline).

    ``cors_suspected`` is set by the browser transport: browsers report CORS failures, DNS
    failures and offline alike as a rejected ``fetch``.
    """

    def __init__(self, message: str, *, cors_suspected: bool = False) -> None:
        super().__init__(message)
        self.cors_suspected = cors_suspected


class HttpTransport(Protocol):
    async def send(self, request: HttpRequest, signal: AbortSignal | None = None) -> HttpResponse:
        """Send ``request``; return once the status and headers arrived.

        Raises :class:`TransportError` when no response arrives and
        :class:`~py_agent.ai.abort.AbortError` when ``signal`` aborts; aborting later cancels the
        body stream (its iterator raises ``AbortError``).
        """
        ...


_default: HttpTransport | None = None
_factory: Callable[[], HttpTransport] | None = None


def set_default_transport(transport: HttpTransport | None) -> None:
    """Replace the transport ``stream_simple`` uses when options name none (``None``: automatic)."""
    global _default
    _default = transport


def set_default_transport_factory(factory: Callable[[], HttpTransport] | None) -> None:
    """What "automatic" means: a function making the platform's transport (set by ``py_agent``)."""
    global _factory
    _factory = factory


def get_default_transport() -> HttpTransport:
    if _default is not None:
        return _default
    if _factory is None:
        raise RuntimeError("No HTTP transport: pass one in the options or call set_default_transport()")
    return _factory()
