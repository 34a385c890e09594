"""The API registry and ``stream_simple``, pi-ai's dispatch from ``model.api`` to a provider.

Providers register a ``stream`` and a ``stream_simple`` function under their API id; the faux
provider and the real wire formats all go through here. ``stream_simple`` is the ``Agent``'s
default stream function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .event_stream import AssistantMessageEventStream
from .types import Context, Model, SimpleStreamOptions, to_stream_options

StreamResult: TypeAlias = AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]
StreamFunction: TypeAlias = Callable[[Model, Context, SimpleStreamOptions], AssistantMessageEventStream]


@dataclass(frozen=True)
class ApiProvider:
    api: str
    stream: StreamFunction
    stream_simple: StreamFunction


_registry: dict[str, tuple[ApiProvider, str | None]] = {}


def register_api_provider(provider: ApiProvider, source_id: str | None = None) -> None:
    """Register (or replace) the provider for ``provider.api``; ``source_id`` groups registrations."""
    _registry[provider.api] = (provider, source_id)


def get_api_provider(api: str) -> ApiProvider | None:
    """The provider registered for a wire ``api`` (e.g. ``"anthropic-messages"``), or ``None``."""
    entry = _registry.get(api)
    return entry[0] if entry else None


def get_api_providers() -> list[ApiProvider]:
    """Every registered API provider."""
    return [provider for provider, _ in _registry.values()]


def unregister_api_providers(source_id: str) -> None:
    """Remove the API providers registered with ``source_id``."""
    for api in [api for api, (_, source) in _registry.items() if source == source_id]:
        del _registry[api]


def clear_api_providers() -> None:
    """Remove every registered API provider (tests)."""
    _registry.clear()


def _resolve(model: Model) -> ApiProvider:
    provider = get_api_provider(model.api)
    if provider is None:
        raise ValueError(f"No API provider registered for api: {model.api}")
    return provider


def _prepare(
    model: Model | Mapping[str, Any], context: Context | Mapping[str, Any], options: Any
) -> tuple[Model, Context, SimpleStreamOptions]:
    if not isinstance(model, Model):
        model = Model.model_validate(model)
    if not isinstance(context, Context):
        context = Context.model_validate(context)
    return model, context, to_stream_options(options)


def stream(
    model: Model | Mapping[str, Any],
    context: Context | Mapping[str, Any],
    options: SimpleStreamOptions | Mapping[str, Any] | None = None,
) -> AssistantMessageEventStream:
    """Stream a reply with the provider's own options. Raises only if no provider is registered."""
    model, context, opts = _prepare(model, context, options)
    return _resolve(model).stream(model, context, opts)


def stream_simple(
    model: Model | Mapping[str, Any],
    context: Context | Mapping[str, Any],
    options: SimpleStreamOptions | Mapping[str, Any] | None = None,
) -> AssistantMessageEventStream:
    """Stream a reply with the unified options (``reasoning``, ``thinking_budgets``, ...).

    Request, model and network failures never raise: they end the stream with an ``error``
    event whose message has ``stop_reason`` ``"error"`` or ``"aborted"``.
    """
    model, context, opts = _prepare(model, context, options)
    return _resolve(model).stream_simple(model, context, opts)


async def complete(
    model: Model | Mapping[str, Any],
    context: Context | Mapping[str, Any],
    options: SimpleStreamOptions | Mapping[str, Any] | None = None,
) -> Any:
    """Stream a reply with :func:`stream` and return the final assistant message."""
    return await stream(model, context, options).result()


async def complete_simple(
    model: Model | Mapping[str, Any],
    context: Context | Mapping[str, Any],
    options: SimpleStreamOptions | Mapping[str, Any] | None = None,
) -> Any:
    """Stream a reply with :func:`stream_simple` and return the final assistant message."""
    return await stream_simple(model, context, options).result()
