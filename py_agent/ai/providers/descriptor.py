"""What the rest of py-agent needs to know about a wire API, without importing its provider module.

A :class:`WireApi` is plain data: the provider registry (lazy loading), the model catalogue, custom
providers (base URLs, discovery, the settings form) and the mock server all read it. The list of
them is :data:`~py_agent.ai.providers.wire_apis.WIRE_APIS`; ``docs/providers.md`` describes the
contract. This module imports nothing but the standard library: page boot pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_MAX_TOKENS = 16384
"""Limits of a model whose server does not say (pi coding-agent's custom-model defaults)."""

CUSTOM_FORM_FIELDS: tuple[str, ...] = ("name", "baseUrl", "apiKey", "models", "useProxy")
"""Every field the custom-provider form can show (``web/ui/settings.js`` knows how to draw each)."""


@dataclass(frozen=True)
class ModelFacts:
    """What a model list entry says about one model (``None``: use the caller's default)."""

    name: str | None
    context_window: int
    max_tokens: int


@dataclass(frozen=True)
class ModelDiscovery:
    """How a server of this API lists its models: ``GET <model base URL><path>`` with ``headers``
    (plus the API key in the API's key header), answering an OpenAI-style ``{"data": [...]}`` list
    whose entries ``read_entry`` turns into :class:`ModelFacts`."""

    path: str
    read_entry: Callable[[dict[str, Any]], ModelFacts]
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CustomProviderForm:
    """How the custom-provider form offers this API (``None`` on a :class:`WireApi`: not offered)."""

    value: str
    """The form's option value (stable: saved forms and tests select it)."""
    label: str
    """What the option says, e.g. ``"OpenAI-compatible API"``."""
    placeholder: str
    """An example base URL for the URL field."""
    fields: tuple[str, ...] = CUSTOM_FORM_FIELDS
    """The form fields shown for it, a subset of :data:`CUSTOM_FORM_FIELDS`."""


@dataclass(frozen=True)
class WireApi:
    """One wire API: its id, how it is reached and what the app shows for it."""

    id: str
    """``Model.api`` of its models, e.g. ``"openai-completions"``."""
    label: str
    """A human name, e.g. ``"OpenAI Chat Completions"``."""
    module: str
    """The provider module under ``py_agent.ai.providers`` (imported on the first request)."""
    stream_function: str
    """The name of the module's stream function."""
    default_base_url: str
    """The reference server's ``Model.base_url``."""
    version_path: str
    """The API's version segment (``/v1``, ``/v1beta``)."""
    version_in_base_url: bool
    """True: ``Model.base_url`` ends with :attr:`version_path` and the request path follows it
    (OpenAI, Gemini); False: the base URL is the server root and the request path starts with the
    version (Anthropic)."""
    request_path: str
    """Appended to ``Model.base_url`` for a streaming request; ``{model}`` stands for the model id."""
    key_header: str
    """The header that carries the API key."""
    key_prefix: str = ""
    """Put before the key in :attr:`key_header` (``"Bearer "``)."""
    discovery: ModelDiscovery | None = None
    """How a custom provider's models are listed; ``None``: they are configured by hand."""
    custom_form: CustomProviderForm | None = None
    """How the custom-provider form offers this API; ``None``: only built-in providers use it."""

    @property
    def route(self) -> str:
        """:attr:`request_path` without its query: the path suffix the mock server
        (``py_agent/testing/mock_server.py``) answers for this API."""
        return self.request_path.split("?", 1)[0]

    @property
    def mock_base_path(self) -> str:
        """The path of ``Model.base_url`` on a server that serves the API at its root."""
        return self.version_path if self.version_in_base_url else ""

    def key_headers(self, api_key: str | None) -> dict[str, str]:
        return {self.key_header: f"{self.key_prefix}{api_key}"} if api_key else {}


# ---------------------------------------------------------------------------------------------
# Reading numbers out of model lists (servers disagree on types: ints, floats, numeric strings)


def json_number(value: Any) -> int | None:
    """A positive integer from a JSON value (numbers and numeric strings); ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return int(value)
    if isinstance(value, str):
        try:
            number = int(float(value.strip()))
        except ValueError:
            return None
        return number if number > 0 else None
    return None


def first_number(*values: Any) -> int | None:
    for value in values:
        number = json_number(value)
        if number is not None:
            return number
    return None


def dig(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, ``None`` where a level is missing or not an object."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


__all__ = [
    "CUSTOM_FORM_FIELDS",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_TOKENS",
    "CustomProviderForm",
    "ModelDiscovery",
    "ModelFacts",
    "WireApi",
    "dig",
    "first_number",
    "json_number",
]
