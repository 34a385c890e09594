"""Custom endpoints: local servers (Ollama, LM Studio, llama.cpp, vLLM) and any OpenAI-compatible API.

A :class:`CustomProvider` is what a user configures (name, base URL, optional key, models). It
yields :class:`~py_agent.ai.types.Model` objects with the compat flags its server needs, and can
discover the server's models through the injected HTTP transport (so the same code runs over
``fetch`` in a page and over ``httpx`` in CPython)::

    provider = CustomProvider(name="My Ollama", kind="ollama", base_url="http://localhost:11434")
    models = await provider.discover_models()
    register_custom_provider(provider, models)      # get_model("My Ollama", "qwen3:8b") now works

Every model gets ``provider = <provider name>``. The provider's ``api_key`` is not copied into the
models (they end up in saved sessions); :func:`custom_provider_api_key` returns it for a model's
provider. Local servers need no key: their models carry ``requiresApiKey: false``
(:func:`~py_agent.ai.models.model_requires_api_key`).

Discovery follows pi's web-ui (``model-discovery.ts``) where it is right, with these differences:
LM Studio is read over HTTP (``/api/v0/models``, falling back to ``/v1/models``) instead of its
WebSocket SDK, and ``reasoning`` is not taken from "trained for tool use"; Ollama models without
``/api/show`` details are kept with defaults, use the Modelfile's ``num_ctx`` when set, get
``image`` input when they have the ``vision`` capability, and ``max_tokens`` = context window
(pi: ten times it); llama.cpp reads the runtime context size from ``/props``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator, model_validator

from . import models as _models
from ._util import json_too_deep
from .abort import AbortSignal
from .providers.descriptor import CUSTOM_FORM_FIELDS, DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOKENS, WireApi
from .providers.descriptor import dig as _dig
from .providers.descriptor import first_number as _first_number
from .providers.descriptor import json_number as _number
from .providers.wire_apis import OPENAI_COMPLETIONS, custom_wire_apis, wire_api
from .transport import HttpRequest, HttpTransport, TransportError, get_default_transport
from .types import Model, ModelCost, PiModel

CustomProviderKind: TypeAlias = Literal["ollama", "lmstudio", "llama.cpp", "vllm", "openai-compatible"]

LOCAL_SERVER_KINDS: tuple[CustomProviderKind, ...] = ("ollama", "lmstudio", "llama.cpp", "vllm")
"""Server kinds with model discovery and no API key by default (pi web-ui's auto-discovery types)."""

DEFAULT_BASE_URLS: dict[str, str] = {
    "ollama": "http://localhost:11434",
    "lmstudio": "http://localhost:1234",
    "llama.cpp": "http://localhost:8080",
    "vllm": "http://localhost:8000",
}
"""Where each local server listens by default (the server root, without ``/v1``)."""

KIND_LABELS: dict[str, str] = {
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llama.cpp": "llama.cpp",
    "vllm": "vLLM",
    "openai-compatible": "the server",
}

LOCAL_SERVER_COMPAT: dict[str, Any] = {
    "supportsStore": False,
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": False,
    "maxTokensField": "max_tokens",
    "supportsStrictMode": False,
}
"""pi web-ui's ``LOCAL_LLM_COMPAT``: local servers speak Chat Completions without OpenAI's newer
fields (``store``, the ``developer`` role, ``reasoning_effort``, ``max_completion_tokens``,
strict tool schemas)."""

KIND_COMPAT: dict[str, dict[str, Any]] = {
    "ollama": LOCAL_SERVER_COMPAT,
    "lmstudio": LOCAL_SERVER_COMPAT,
    "llama.cpp": LOCAL_SERVER_COMPAT,
    "vllm": LOCAL_SERVER_COMPAT,
    # Anything else: the Chat Completions provider detects flags from the base URL
    # (``detect_compat`` in py_agent/ai/providers/openai_completions.py);
    # the provider's and the models' own ``compat`` override them.
    "openai-compatible": {},
}

# What pi's web-ui assumes for a local server that does not report its context size.
LOCAL_DEFAULT_CONTEXT_WINDOW = 8192
LOCAL_DEFAULT_MAX_TOKENS = 4096

# Endpoint paths people paste with the base URL. The wire APIs' own come first: "/chat/completions"
# must go before "/completions" gets a chance to leave "/chat" behind.
_ENDPOINT_SUFFIXES = (
    *(api.route.removeprefix("" if api.version_in_base_url else api.version_path) for api in custom_wire_apis()),
    "/completions",
    "/models",
    "/api/tags",
    "/api/show",
    "/props",
)
_LOCAL_PREFIXES = ("/api/v0", "/api/v1", "/api", "/v1")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")
_SNIPPET = 200


class DiscoveryError(Exception):
    """Model discovery failed; the message says why and what to do."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        url: str,
        status: int | None = None,
        cors_suspected: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.url = url
        self.status = status
        self.cors_suspected = cors_suspected


# ---------------------------------------------------------------------------------------------
# Base URLs


def _split(url: str) -> tuple[str, str, str]:
    """``(scheme, netloc, path)`` of a user-typed URL, with endpoint paths and slashes removed."""
    text = url.strip()
    if not text:
        raise ValueError("The base URL is empty")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"Not an http(s) URL: {url!r}")
    path = parts.path.rstrip("/")
    stripped = True
    while stripped:
        stripped = False
        for suffix in _ENDPOINT_SUFFIXES:
            if path.lower().endswith(suffix):
                path = path[: -len(suffix)].rstrip("/")
                stripped = True
    return parts.scheme.lower(), parts.netloc, path


def _wire_api(api: str) -> WireApi:
    descriptor = wire_api(api)
    if descriptor is None:
        raise ValueError(f"Unknown wire API: {api!r}")
    return descriptor


def server_url(base_url: str, kind: str = "openai-compatible", api: str = "openai-completions") -> str:
    """The URL discovery starts from.

    Local servers: the server root (``http://localhost:11434/v1/`` -> ``http://localhost:11434``).
    OpenAI-compatible: the API base (as :func:`api_base_url`). Anthropic-compatible: the root,
    without ``/v1``.
    """
    scheme, netloc, path = _split(base_url)
    if kind in LOCAL_SERVER_KINDS:
        for prefix in _LOCAL_PREFIXES:
            if path.lower().endswith(prefix):
                path = path[: -len(prefix)].rstrip("/")
                break
        return f"{scheme}://{netloc}{path}"
    descriptor = _wire_api(api)
    if not descriptor.version_in_base_url:
        version = descriptor.version_path
        if path.lower().endswith(version.lower()):
            path = path[: -len(version)].rstrip("/")
        return f"{scheme}://{netloc}{path}"
    return api_base_url(base_url, kind, api)


def api_base_url(base_url: str, kind: str = "openai-compatible", api: str = "openai-completions") -> str:
    """The ``Model.base_url`` for a user-typed server URL.

    Trailing slashes and pasted endpoint paths (``/chat/completions``, ``/models`` …) are removed.
    Local servers: root + ``/v1``. OpenAI-compatible: the URL as given, plus ``/v1`` when it has
    no path at all (``https://host`` -> ``https://host/v1``; ``https://host/api/v4`` stays).
    Anthropic-compatible: without ``/v1`` (the provider appends ``/v1/messages``).
    """
    if kind in LOCAL_SERVER_KINDS:
        return server_url(base_url, kind, api) + OPENAI_COMPLETIONS.version_path
    descriptor = _wire_api(api)
    if not descriptor.version_in_base_url:
        return server_url(base_url, kind, api)
    scheme, netloc, path = _split(base_url)
    return f"{scheme}://{netloc}{path or descriptor.version_path}"


# ---------------------------------------------------------------------------------------------
# Configuration


def _text_only() -> list[Literal["text", "image"]]:
    return ["text"]


class CustomModelSpec(PiModel):
    """A model of a custom provider, as configured by hand (or overriding a discovered one)."""

    # Validators are built on first use, not at import (page boot).
    model_config = ConfigDict(**PiModel.model_config)

    id: str
    name: str | None = None
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=_text_only)
    context_window: int | None = None
    max_tokens: int | None = None
    cost: ModelCost | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    thinking_level_map: dict[str, str | None] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_id(cls, data: Any) -> Any:
        return {"id": data} if isinstance(data, str) else data


class CustomProvider(PiModel):
    """A user-configured endpoint. JSON form (camelCase) is what an app stores.

    ``kind`` picks the compat flags and the discovery method; local kinds only speak
    ``openai-completions``. ``requires_api_key`` defaults to False for local kinds and True for
    ``openai-compatible``. pi web-ui records (``type`` instead of ``kind``/``api``) are accepted.
    """

    model_config = ConfigDict(**PiModel.model_config)

    name: str
    base_url: str
    kind: CustomProviderKind = "openai-compatible"
    api: str = "openai-completions"
    """A wire API of :func:`~py_agent.ai.providers.wire_apis.custom_wire_apis`."""
    api_key: str | None = None
    requires_api_key: bool | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    models: list[CustomModelSpec] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _from_web_ui_record(cls, data: Any) -> Any:
        # pi web-ui's CustomProvider: {id, name, type, baseUrl, apiKey?, models?}
        if isinstance(data, Mapping) and "type" in data and "kind" not in data:
            data = dict(data)
            kind = data.pop("type")
            if kind in LOCAL_SERVER_KINDS:
                data["kind"] = kind
            else:
                data["kind"] = "openai-compatible"
                data.setdefault("api", kind)
        return data

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("A custom provider needs a name")
        return value

    @field_validator("api")
    @classmethod
    def _check_wire_api(cls, value: str) -> str:
        allowed = [api.id for api in custom_wire_apis()]
        if value not in allowed:
            raise ValueError(f"A custom provider uses one of the APIs {', '.join(allowed)}, not {value!r}")
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str) -> str:
        _split(value)  # raises ValueError with a readable message
        return value.strip()

    @model_validator(mode="after")
    def _check_api(self) -> CustomProvider:
        if self.kind in LOCAL_SERVER_KINDS and self.api != "openai-completions":
            raise ValueError(f"{KIND_LABELS[self.kind]} providers use the openai-completions API, not {self.api}")
        return self

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]

    @property
    def server_url(self) -> str:
        """Where discovery requests go (local servers: the root, without ``/v1``)."""
        return server_url(self.base_url, self.kind, self.api)

    @property
    def api_base_url(self) -> str:
        """The ``base_url`` of this provider's models."""
        return api_base_url(self.base_url, self.kind, self.api)

    @property
    def needs_api_key(self) -> bool:
        if self.requires_api_key is not None:
            return self.requires_api_key
        return self.kind not in LOCAL_SERVER_KINDS

    def model_compat(self, model_compat: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """Compat flags for a model: the kind's, then the provider's, then the model's own."""
        if self.api != "openai-completions":
            merged = {**(self.compat or {}), **(model_compat or {})}
        else:
            merged = {**KIND_COMPAT[self.kind], **(self.compat or {}), **(model_compat or {})}
        return merged or None

    def make_model(
        self,
        model_id: str,
        *,
        name: str | None = None,
        reasoning: bool = False,
        input: Sequence[str] = ("text",),
        context_window: int | None = None,
        max_tokens: int | None = None,
        cost: ModelCost | None = None,
        headers: Mapping[str, str] | None = None,
        compat: Mapping[str, Any] | None = None,
        thinking_level_map: Mapping[str, str | None] | None = None,
    ) -> Model:
        """A ``Model`` of this provider (defaults: zero cost, 128k context, 16k output)."""
        context = context_window or DEFAULT_CONTEXT_WINDOW
        merged_headers = {**(self.headers or {}), **(headers or {})}
        data: dict[str, Any] = {
            "id": model_id,
            "name": name or model_id,
            "api": self.api,
            "provider": self.name,
            "baseUrl": self.api_base_url,
            "reasoning": reasoning,
            "input": list(input),
            "cost": (cost or ModelCost()).model_dump(),
            "contextWindow": context,
            "maxTokens": max_tokens or min(context, DEFAULT_MAX_TOKENS),
        }
        if merged_headers:
            data["headers"] = merged_headers
        model_compat = self.model_compat(compat)
        if model_compat:
            data["compat"] = model_compat
        if thinking_level_map is not None:
            data["thinkingLevelMap"] = dict(thinking_level_map)
        if not self.needs_api_key:
            data[_models.REQUIRES_API_KEY_FIELD] = False
        return Model.model_validate(data)

    def model_from_spec(self, spec: CustomModelSpec, discovered: Model | None = None) -> Model:
        """``spec`` as a ``Model``; fields the spec leaves unset come from ``discovered``."""
        fields = spec.model_fields_set
        base = discovered
        context = spec.context_window or (base.context_window if base else None)
        max_tokens = spec.max_tokens
        if max_tokens is None and base is not None:
            max_tokens = min(base.max_tokens, context or base.max_tokens)
        return self.make_model(
            spec.id,
            name=spec.name or (base.name if base else None),
            reasoning=spec.reasoning if "reasoning" in fields or base is None else base.reasoning,
            input=spec.input if "input" in fields or base is None else base.input,
            context_window=context,
            max_tokens=max_tokens,
            cost=spec.cost,
            headers=spec.headers,
            compat=spec.compat,
            thinking_level_map=spec.thinking_level_map
            if spec.thinking_level_map is not None or base is None
            else base.thinking_level_map,
        )

    def to_models(self) -> list[Model]:
        """The configured (``models``) entries as ``Model`` objects."""
        return [self.model_from_spec(spec) for spec in self.models]

    async def discover_models(
        self, transport: HttpTransport | None = None, signal: AbortSignal | None = None
    ) -> list[Model]:
        """Ask the server for its models (see :func:`discover_models`)."""
        return await discover_models(self, transport, signal)


# ---------------------------------------------------------------------------------------------
# Error messages


def _is_loopback(netloc: str) -> bool:
    host = netloc.rsplit("@", 1)[-1]
    host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]
    return host.lower() in _LOOPBACK_HOSTS or host.startswith("127.")


def cors_help(kind: str, url: str) -> str:
    """What to change when a page cannot reach ``url`` (a server of ``kind``) for CORS reasons."""
    label = KIND_LABELS.get(kind, "the server")
    if kind == "ollama":
        fix = (
            "Ollama only answers pages from the origins in OLLAMA_ORIGINS (by default localhost and "
            "127.0.0.1): set OLLAMA_ORIGINS to this page's origin (or *) in the environment of the "
            "Ollama server, e.g. `OLLAMA_ORIGINS=https://app.example ollama serve`, and restart Ollama."
        )
    elif kind == "lmstudio":
        fix = (
            'LM Studio\'s server refuses cross-origin requests by default: turn on "Enable CORS" in '
            "LM Studio's server settings (Developer tab), or start it with `lms server start --cors`."
        )
    elif kind == "llama.cpp":
        fix = (
            "llama-server must allow this page's origin: start it with `--cors-origins <page origin>` "
            "(or `*`); recent builds allow only localhost when server tools are enabled."
        )
    elif kind == "vllm":
        fix = (
            "vLLM must allow this page's origin: start it with "
            "`--allowed-origins '[\"<page origin>\"]'` (the default allows every origin)."
        )
    else:
        fix = (
            "The server must answer cross-origin requests from this page "
            "(Access-Control-Allow-Origin, and allow the Authorization header)."
        )
    parts = [fix]
    try:
        scheme, netloc, _ = _split(url)
    except ValueError:
        scheme, netloc = "", ""
    if scheme == "http" and netloc and not _is_loopback(netloc):
        parts.append(
            "A page served over https cannot call plain-http addresses other than localhost (mixed "
            "content): serve the API over https or open the app from http://localhost."
        )
    parts.append(
        "If you cannot change the server's settings, set a CORS proxy in the proxy settings "
        "(requests then go to <proxy-url>/?url=<target-url>)."
    )
    parts.append(f"Browsers report a stopped or unreachable server the same way: check that {label} is running.")
    return " ".join(parts)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


def _error_detail(text: str) -> str:
    """The message of an error body (``{"error": "…"}``, ``{"error": {"message": …}}``, ``{"message": …}``)."""
    try:
        if json_too_deep(text):
            raise ValueError("nested too deeply")
        data = json.loads(text)
    except ValueError:
        return _snippet(text)
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, str) and error:
            return error
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        for key in ("message", "detail"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key])
    return _snippet(text)


# ---------------------------------------------------------------------------------------------
# Discovery


class _Discovery:
    def __init__(self, provider: CustomProvider, transport: HttpTransport, signal: AbortSignal | None) -> None:
        self.provider = provider
        self.transport = transport
        self.signal = signal
        self.kind = provider.kind
        self.label = provider.label

    def fail(self, message: str, url: str, status: int | None = None, cors: bool = False) -> DiscoveryError:
        prefix = (
            f"{self.label} model discovery failed"
            if self.kind != "openai-compatible"
            else f"Model discovery for {self.provider.name} failed"
        )
        return DiscoveryError(f"{prefix}: {message}", kind=self.kind, url=url, status=status, cors_suspected=cors)

    def check_url_hint(self) -> str:
        if self.kind == "openai-compatible":
            return f"Check the base URL ({self.provider.base_url})."
        return f"Check that {self.label} is what runs at {self.provider.server_url}."

    def auth_headers(self) -> dict[str, str]:
        return _wire_api(self.provider.api).key_headers(self.provider.api_key)

    async def request_json(self, url: str, *, body: Any = None, headers: Mapping[str, str] | None = None) -> Any:
        # A GET with no extra headers is a "simple" request: no CORS preflight.
        request_headers: dict[str, str] = {"Accept": "application/json", **self.auth_headers(), **(headers or {})}
        payload: bytes | None = None
        if body is not None:
            request_headers["Content-Type"] = "application/json"
            payload = json.dumps(body).encode()
        request = HttpRequest("POST" if payload is not None else "GET", url, request_headers, payload)
        try:
            response = await self.transport.send(request, self.signal)
        except TransportError as error:
            if error.cors_suspected:
                raise self.fail(
                    f"could not reach {url} from this page ({error}). {cors_help(self.kind, url)}",
                    url,
                    cors=True,
                ) from error
            raise self.fail(
                f"could not connect to {url} ({error}). Is {self.label} running at {self.provider.server_url}?",
                url,
            ) from error
        try:
            raw = await response.aread()
        finally:
            await response.aclose()
        text = raw.decode("utf-8", errors="replace")
        status = response.status
        if not 200 <= status < 300:
            detail = _error_detail(text) if text.strip() else (response.status_text or "no body")
            hint = ""
            if status in (401, 403):
                hint = (
                    " Check the API key."
                    if self.kind == "openai-compatible" or self.provider.api_key
                    else " The server wants an API key: set one for this provider."
                )
                if self.kind == "ollama" and status == 403:
                    hint += f" {cors_help('ollama', url)}"
            elif status == 404:
                hint = f" {self.check_url_hint()}"
            raise self.fail(f"{url} answered HTTP {status}: {detail.rstrip('.')}.{hint}", url, status=status)
        try:
            if json_too_deep(text):
                raise ValueError("nested too deeply")
            return json.loads(text)
        except ValueError:
            raise self.fail(
                f"{url} did not answer with JSON (got: {_snippet(text)!r}). {self.check_url_hint()}",
                url,
                status=status,
            ) from None

    def model_list(self, data: Any, url: str, *, key: str = "data") -> list[dict[str, Any]]:
        """The entries of an OpenAI-style ``{"data": [{"id": …}, …]}`` list."""
        entries = data.get(key) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            got = f"an object with keys {sorted(data)[:8]}" if isinstance(data, dict) else type(data).__name__
            raise self.fail(f"unexpected answer from {url}: expected an object with a {key!r} list, got {got}", url)
        result: list[dict[str, Any]] = []
        for entry in entries:
            if isinstance(entry, dict):
                ident = entry.get("id")
                if isinstance(ident, str) and ident:
                    result.append(entry)
        if entries and not result:
            raise self.fail(f'unexpected answer from {url}: no entry of {key!r} has a string "id"', url)
        return result

    # -- per server --------------------------------------------------------------------------------

    async def ollama(self) -> list[Model]:
        root = self.provider.server_url
        url = f"{root}/api/tags"
        data = await self.request_json(url)
        entries = data.get("models") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise self.fail(f"unexpected answer from {url}: expected an object with a 'models' list", url)
        names: list[str] = []
        for entry in entries:
            name = (entry.get("name") or entry.get("model")) if isinstance(entry, dict) else None
            if isinstance(name, str) and name:
                names.append(name)
        details = await asyncio.gather(*(self.ollama_show(root, name) for name in names))
        models: list[Model] = []
        for name, show in zip(names, details, strict=True):
            model = self.ollama_model(name, show)
            if model is not None:
                models.append(model)
        return models

    async def ollama_show(self, root: str, name: str) -> dict[str, Any] | None:
        try:
            data = await self.request_json(f"{root}/api/show", body={"model": name})
        except DiscoveryError:
            return None  # keep the model, with defaults
        return data if isinstance(data, dict) else None

    def ollama_model(self, name: str, show: dict[str, Any] | None) -> Model | None:
        capabilities = show.get("capabilities") if show else None
        if isinstance(capabilities, list) and "tools" not in capabilities:
            return None  # pi: the agent needs tool calling (this also drops embedding models)
        caps = capabilities if isinstance(capabilities, list) else []
        info = show.get("model_info") if show else None
        info = info if isinstance(info, dict) else {}
        arch = info.get("general.architecture")
        trained = _number(info.get(f"{arch}.context_length")) if isinstance(arch, str) else None
        num_ctx = None
        parameters = show.get("parameters") if show else None
        if isinstance(parameters, str):
            for line in parameters.splitlines():
                words = line.split()
                if len(words) >= 2 and words[0] == "num_ctx":
                    num_ctx = _number(words[1])
        context = num_ctx or trained or LOCAL_DEFAULT_CONTEXT_WINDOW
        return self.provider.make_model(
            name,
            reasoning="thinking" in caps,
            input=("text", "image") if "vision" in caps else ("text",),
            context_window=context,
            max_tokens=context,
        )

    async def lmstudio(self) -> list[Model]:
        root = self.provider.server_url
        url = f"{root}/api/v0/models"
        try:
            data = await self.request_json(url)
        except DiscoveryError as error:
            if error.status not in (404, 405):
                raise
            return self.lmstudio_openai_list(await self.request_json(f"{root}/v1/models"), f"{root}/v1/models")
        if isinstance(data, dict) and isinstance(data.get("models"), list) and "data" not in data:
            return self.lmstudio_v1(data, url)  # LM Studio's /api/v1 shape
        models: list[Model] = []
        for entry in self.model_list(data, url):
            model_type = entry.get("type")
            if model_type not in (None, "llm", "vlm"):
                continue  # embeddings
            context = (
                _first_number(entry.get("loaded_context_length"), entry.get("max_context_length"))
                or LOCAL_DEFAULT_CONTEXT_WINDOW
            )
            capabilities = entry.get("capabilities")
            caps = capabilities if isinstance(capabilities, list) else []
            vision = model_type == "vlm" or "vision" in caps
            models.append(
                self.provider.make_model(
                    entry["id"],
                    reasoning="reasoning" in caps or "thinking" in caps,
                    input=("text", "image") if vision else ("text",),
                    context_window=context,
                    max_tokens=context,
                )
            )
        return models

    def lmstudio_v1(self, data: dict[str, Any], url: str) -> list[Model]:
        models: list[Model] = []
        for entry in data["models"]:
            if not isinstance(entry, dict) or entry.get("type") not in (None, "llm", "vlm"):
                continue
            key = entry.get("key") or entry.get("id")
            if not isinstance(key, str) or not key:
                continue
            instances = entry.get("loaded_instances")
            first = instances[0] if isinstance(instances, list) and instances else None
            loaded = _dig(first, "config", "context_length")
            context = _first_number(loaded, entry.get("max_context_length")) or LOCAL_DEFAULT_CONTEXT_WINDOW
            capabilities = entry.get("capabilities")
            caps: dict[str, Any] = capabilities if isinstance(capabilities, dict) else {}
            display = entry.get("display_name")
            models.append(
                self.provider.make_model(
                    key,
                    name=display if isinstance(display, str) else None,
                    reasoning=bool(caps.get("thinking") or caps.get("reasoning")),
                    input=("text", "image") if caps.get("vision") or entry.get("type") == "vlm" else ("text",),
                    context_window=context,
                    max_tokens=context,
                )
            )
        return models

    def lmstudio_openai_list(self, data: Any, url: str) -> list[Model]:
        models = []
        for entry in self.model_list(data, url):
            if "embed" in entry["id"].lower():
                continue
            models.append(
                self.provider.make_model(
                    entry["id"], context_window=LOCAL_DEFAULT_CONTEXT_WINDOW, max_tokens=LOCAL_DEFAULT_CONTEXT_WINDOW
                )
            )
        return models

    async def llama_cpp(self) -> list[Model]:
        root = self.provider.server_url
        url = f"{root}/v1/models"
        entries = self.model_list(await self.request_json(url), url)
        props: Any = None
        if len(entries) == 1:
            try:
                props = await self.request_json(f"{root}/props")
            except DiscoveryError:
                props = None
        runtime_context = _number(_dig(props, "default_generation_settings", "n_ctx"))
        vision = bool(_dig(props, "modalities", "vision"))
        models = []
        for entry in entries:
            context = (
                runtime_context
                or _first_number(entry.get("context_length"), _dig(entry, "meta", "n_ctx_train"))
                or LOCAL_DEFAULT_CONTEXT_WINDOW
            )
            max_tokens = _number(entry.get("max_tokens")) or min(context, LOCAL_DEFAULT_MAX_TOKENS)
            models.append(
                self.provider.make_model(
                    entry["id"],
                    input=("text", "image") if vision else ("text",),
                    context_window=context,
                    max_tokens=max_tokens,
                )
            )
        return models

    async def vllm(self) -> list[Model]:
        url = f"{self.provider.server_url}/v1/models"
        models = []
        for entry in self.model_list(await self.request_json(url), url):
            context = _number(entry.get("max_model_len")) or LOCAL_DEFAULT_CONTEXT_WINDOW
            # vLLM rejects prompt + max_tokens > max_model_len, hence pi's small output cap.
            models.append(
                self.provider.make_model(
                    entry["id"], context_window=context, max_tokens=min(context, LOCAL_DEFAULT_MAX_TOKENS)
                )
            )
        return models

    async def by_wire_api(self) -> list[Model]:
        """A remote server, through the model list of its wire API (``WireApi.discovery``)."""
        descriptor = _wire_api(self.provider.api)
        discovery = descriptor.discovery
        if discovery is None:
            raise self.fail(
                f"the {descriptor.label} API has no model list: enter the model ids by hand", self.provider.base_url
            )
        url = f"{self.provider.api_base_url}{discovery.path}"
        models = []
        for entry in self.model_list(await self.request_json(url, headers=dict(discovery.headers)), url):
            facts = discovery.read_entry(entry)
            models.append(
                self.provider.make_model(
                    entry["id"], name=facts.name, context_window=facts.context_window, max_tokens=facts.max_tokens
                )
            )
        return models


async def discover_models(
    provider: CustomProvider,
    transport: HttpTransport | None = None,
    signal: AbortSignal | None = None,
) -> list[Model]:
    """Ask ``provider``'s server which models it serves.

    Ollama: ``GET /api/tags`` and ``POST /api/show`` per model (models without tool calling are
    left out). LM Studio: ``GET /api/v0/models``, or ``GET /v1/models`` on older servers.
    llama.cpp: ``GET /v1/models`` and ``GET /props``. vLLM and OpenAI-compatible servers:
    ``GET {api base}/models``; other remote servers: their wire API's model list
    (``WireApi.discovery`` in py_agent/ai/providers/wire_apis.py).

    Models the provider configures by hand (``models``) override what the server reports for the
    same id. Raises :class:`DiscoveryError` with a readable message (including how to fix CORS in a
    browser), and ``AbortError`` when ``signal`` aborts.
    """
    discovery = _Discovery(provider, transport or get_default_transport(), signal)
    if provider.kind == "ollama":
        models = await discovery.ollama()
    elif provider.kind == "lmstudio":
        models = await discovery.lmstudio()
    elif provider.kind == "llama.cpp":
        models = await discovery.llama_cpp()
    elif provider.kind == "vllm":
        models = await discovery.vllm()
    else:
        models = await discovery.by_wire_api()
    specs = {spec.id: spec for spec in provider.models}
    return [provider.model_from_spec(specs[m.id], m) if m.id in specs else m for m in models]


# ---------------------------------------------------------------------------------------------
# The custom-provider form


def custom_provider_types() -> list[dict[str, Any]]:
    """The server types the custom-provider form offers (``web/ui/settings.js`` draws it from this):
    the local servers, then one entry per wire API with a form entry in ``WIRE_APIS``.

    Each: ``value`` (the option), ``label``, ``kind`` and ``api`` (what a saved provider gets),
    ``defaultBaseUrl`` (filled in when chosen; ``""``: none), ``placeholder`` and ``fields`` (the
    form fields shown)."""
    types: list[dict[str, Any]] = [
        {
            "value": kind,
            "label": KIND_LABELS[kind],
            "kind": kind,
            "api": OPENAI_COMPLETIONS.id,
            "defaultBaseUrl": DEFAULT_BASE_URLS[kind],
            "placeholder": DEFAULT_BASE_URLS[kind],
            "fields": list(CUSTOM_FORM_FIELDS),
        }
        for kind in LOCAL_SERVER_KINDS
    ]
    for api in custom_wire_apis():
        form = api.custom_form
        assert form is not None
        types.append(
            {
                "value": form.value,
                "label": form.label,
                "kind": "openai-compatible",
                "api": api.id,
                "defaultBaseUrl": "",
                "placeholder": form.placeholder,
                "fields": list(form.fields),
            }
        )
    return types


# ---------------------------------------------------------------------------------------------
# Registry of configured providers

_providers: dict[str, CustomProvider] = {}


def register_custom_provider(provider: CustomProvider, models: Sequence[Model] | None = None) -> list[Model]:
    """Make ``provider``'s models available through :func:`~py_agent.ai.models.get_model`.

    ``models``: e.g. the result of discovery (default: the provider's configured ``models``). Any
    models registered before under the provider's name are replaced. Returns the registered models.
    """
    if provider.name in _models.get_builtin_providers():
        raise ValueError(f"{provider.name!r} is a built-in provider; give the custom provider another name")
    chosen = list(models) if models is not None else provider.to_models()
    for model in chosen:
        if model.provider != provider.name:
            raise ValueError(f"Model {model.id!r} belongs to provider {model.provider!r}, not {provider.name!r}")
    _models.unregister_models(provider.name)
    _providers[provider.name] = provider
    return _models.register_models(chosen)


def unregister_custom_provider(name: str) -> bool:
    """Forget a custom provider and its models. True if it was registered."""
    _models.unregister_models(name)
    return _providers.pop(name, None) is not None


def get_custom_provider(name: str) -> CustomProvider | None:
    return _providers.get(name)


def get_custom_providers() -> list[CustomProvider]:
    return list(_providers.values())


def custom_provider_api_key(provider_name: str) -> str | None:
    """The API key configured on the custom provider called ``provider_name`` (None if none)."""
    provider = _providers.get(provider_name)
    return provider.api_key if provider is not None and provider.api_key else None
