"""pi-ai's data model: content blocks, messages, usage, models, contexts and stream options.

Attributes are snake_case; the JSON form (``model_dump()`` / ``model_dump_json()``, which dump by
alias) is pi's camelCase wire and session format, so transcripts stay interchangeable with pi.
Optional fields that are unset are left out of the JSON, as ``JSON.stringify`` drops ``undefined``.
Unknown fields are kept (``extra="allow"``) so newer pi messages round-trip unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from .abort import AbortSignal


def now_ms() -> int:
    """Milliseconds since the Unix epoch, as pi's ``Date.now()``."""
    return int(time.time() * 1000)


class PiModel(BaseModel):
    """Base of every wire-format model: camelCase aliases, extra keys kept, ``None`` left out of JSON."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
        arbitrary_types_allowed=True,
        # Build validators and serializers on first use: import time is part of page boot, and
        # hot-path models (partial messages, tool results) are made with shallow_copy and
        # fast_construct, never validated.
        defer_build=True,
    )

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: SerializerFunctionWrapHandler) -> Any:
        # JSON.stringify drops `undefined`; pi never writes `null` for an absent optional field.
        data = handler(self)
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


_new = object.__new__
# Slot setters of BaseModel: calling them directly skips pydantic's __setattr__ (hot path only).
_slots: Any = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__  # what object.__setattr__(model, "__dict__", ...) calls
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
_REQUIRED: Any = object()
# Per model class: its fields in order, each with its default (or _REQUIRED) and default factory;
# and whether extra keys are allowed.
_Plan = tuple[tuple[tuple[str, Any, Callable[[], Any] | None], ...], frozenset[str], bool]
_plans: dict[type[BaseModel], _Plan] = {}
M = TypeVar("M", bound=BaseModel)


def _plan(cls: type[BaseModel]) -> _Plan:
    fields: list[tuple[str, Any, Callable[[], Any] | None]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            fields.append((name, _REQUIRED, cast(Callable[[], Any], info.default_factory)))
        else:
            fields.append((name, _REQUIRED if info.is_required() else info.default, None))
    plan = (tuple(fields), frozenset(cls.model_fields), cls.model_config.get("extra") == "allow")
    _plans[cls] = plan
    return plan


def fast_construct(cls: type[M], **values: Any) -> M:
    """Build a model without validation: ``cls.model_construct(**values)``, several times faster.

    Values are taken as given; missing fields get their defaults. Only for trusted values. The
    result is model_construct's, slot by slot (tests/core/test_fast_construct.py): the fields in
    the class's order (the JSON's key order), unknown keys as extras.
    """
    # Builds the loop's tool results and contexts: keep the per-call work small.
    try:
        fields, names, extra_allowed = _plans[cls]
    except KeyError:
        fields, names, extra_allowed = _plan(cls)
    data: dict[str, Any] = {}
    for name, default, factory in fields:
        if name in values:
            data[name] = values[name]
        elif factory is not None:
            data[name] = factory()
        elif default is not _REQUIRED:
            data[name] = default
    fields_set = set(values)
    extra: dict[str, Any] | None = {} if extra_allowed else None
    if not fields_set <= names:
        unknown = {key: value for key, value in values.items() if key not in names}
        fields_set -= unknown.keys()
        if extra is not None:
            extra.update(unknown)
    model = _new(cls)
    _set_dict(model, data)
    _set_fields_set(model, fields_set)
    _set_extra(model, extra)
    _set_private(model, None)
    return model


def _copy_slots_into(copied: BaseModel, model: BaseModel) -> None:
    _set_dict(copied, model.__dict__.copy())
    _set_fields_set(copied, model.__pydantic_fields_set__.copy())
    # Never shared, not even empty: an attribute set on one copy must not appear on the other.
    extra = model.__pydantic_extra__
    _set_extra(copied, None if extra is None else extra.copy() if extra else {})
    private = model.__pydantic_private__
    _set_private(copied, None if private is None else private.copy())


# Copies of the message classes are built as an instance of a *staging* subclass that stores
# attributes as a plain object does (object's __setattr__, not pydantic's): its four slots are then
# written by plain attribute stores, each one specialised bytecode, where a slot descriptor's
# ``__set__`` is a method wrapper that packs its arguments in a tuple per call. The copy is then
# given its real class (``__class__ = cls``; allowed as the subclass adds no slot, so both have the
# same layout), so it is what ``model_copy`` gives, slot by slot (tests/core/test_fast_construct.py).
# Only the messages of this module get a staging subclass: making a subclass of another model (an
# application's own) could run its class hooks (``__init_subclass__``, registries).
_staging: dict[type[BaseModel], type[BaseModel] | None] = {}


def _make_staging(cls: type[BaseModel]) -> type[BaseModel] | None:
    staging: type[BaseModel] | None = None
    if cls is AssistantMessage or cls is UserMessage or cls is ToolResultMessage:
        namespace = {
            "__slots__": (),
            "__module__": __name__,
            "__qualname__": f"_Staging{cls.__name__}",
            "__setattr__": object.__setattr__,
            # With both, the class's attribute store is object's own C function (not a call of a
            # wrapper per store): CPython takes the C slot only when nothing overrides either.
            "__delattr__": object.__delattr__,
            # `staging()` is then object's creation alone (a cheaper call than object.__new__'s).
            "__init__": object.__init__,
        }
        metaclass: Any = type(cls)
        staging = metaclass(f"_Staging{cls.__name__}", (cls,), namespace)
    _staging[cls] = staging
    return staging


def staging_class(cls: type[BaseModel]) -> type[BaseModel] | None:
    """The staging subclass of ``cls`` (see above), or ``None`` when ``cls`` has none."""
    try:
        return _staging[cls]
    except KeyError:
        return _make_staging(cls)


def shallow_copy(model: M) -> M:
    """``{...message}``: a new model sharing the field values (the content list included)."""
    cls = type(model)
    staging = staging_class(cls)
    if staging is None:
        copied = _new(cls)
        _copy_slots_into(copied, model)
        return copied
    staged: Any = staging()
    staged.__dict__ = model.__dict__.copy()
    staged.__pydantic_fields_set__ = model.__pydantic_fields_set__.copy()
    # Never shared, not even empty: an attribute set on one copy must not appear on the other.
    extra = model.__pydantic_extra__
    staged.__pydantic_extra__ = None if extra is None else extra.copy() if extra else {}
    private = model.__pydantic_private__
    staged.__pydantic_private__ = None if private is None else private.copy()
    staged.__class__ = cls
    return staged  # type: ignore[no-any-return]  # (`cast` would cost a call)


def shallow_copier(model: M) -> Callable[[], M]:
    """A function returning ``shallow_copy(model)`` of the model as it is at each call.

    For a model copied again and again (a provider's partial message, once per delta): its slots
    are read once here. Their contents are copied at each call, so field assignments made in
    between (pydantic writes into the same ``__dict__`` and fields set) are seen; replacing the
    slots themselves (``__dict__`` = ...) is not.
    """
    cls = type(model)
    staging = staging_class(cls)
    values = model.__dict__
    fields_set = model.__pydantic_fields_set__
    extra = model.__pydantic_extra__
    private = model.__pydantic_private__

    if staging is None:

        def copy() -> M:
            copied = _new(cls)
            _set_dict(copied, values.copy())
            _set_fields_set(copied, fields_set.copy())
            # Never shared, not even empty (see shallow_copy).
            _set_extra(copied, None if extra is None else extra.copy() if extra else {})
            _set_private(copied, None if private is None else private.copy())
            return copied

        return copy

    def staged_copy() -> M:
        staged: Any = staging()
        staged.__dict__ = values.copy()
        staged.__pydantic_fields_set__ = fields_set.copy()
        # Never shared, not even empty (see shallow_copy).
        staged.__pydantic_extra__ = None if extra is None else extra.copy() if extra else {}
        staged.__pydantic_private__ = None if private is None else private.copy()
        staged.__class__ = cls
        return staged  # type: ignore[no-any-return]

    return staged_copy


def append_text(block: BaseModel, field: str, delta: str) -> None:
    """``block.<field> += delta`` for streaming text, in amortised constant time.

    The text is taken out of the block first so it has a single reference: CPython then grows it
    in place instead of copying it (copying would make a long reply quadratic). Written straight
    into ``__dict__``: pydantic's ``__setattr__`` costs more than the rest of a delta.
    """
    values = block.__dict__
    text = values.pop(field)
    text += delta
    values[field] = text


# ---------------------------------------------------------------------------------------------
# Content blocks


class TextContent(PiModel):
    """A text content block (``text``; ``text_signature`` is provider data to send back)."""

    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    """A thinking (reasoning) content block; ``redacted`` blocks carry only their provider signature."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    """An image content block: base64 ``data`` (no ``data:`` prefix) and its ``mime_type`` (JSON ``mimeType``)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ToolCall(PiModel):
    """A tool call in an assistant message: ``id``, tool ``name`` and parsed ``arguments`` (a dict)."""

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]
ToolResultContent: TypeAlias = UserContent


# ---------------------------------------------------------------------------------------------
# Usage and cost


class UsageCost(PiModel):
    """The cost of a reply in USD, by kind of token, and its ``total``."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(PiModel):
    """Token counts of one reply (``input``, ``output``, ``cache_read``, ``cache_write``, ``total_tokens``)
    and their ``cost`` in USD.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int | None = Field(default=None, alias="cacheWrite1h")
    total_tokens: int = 0
    cost: UsageCost = Field(default_factory=UsageCost)


def empty_usage() -> Usage:
    """A fresh all-zero usage (pi shares one constant; a fresh object cannot be mutated by accident)."""
    return Usage()


StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]


# ---------------------------------------------------------------------------------------------
# Messages


class UserMessage(PiModel):
    """A user message: ``content`` is a string or a list of text and image blocks."""

    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(PiModel):
    """A model's reply (pi's ``AssistantMessage``): content blocks (text, thinking, tool calls), the API,
    provider and model that produced it, usage, ``stop_reason`` (``stop``, ``length``, ``toolUse``, ``error``,
    ``aborted``), ``error_message`` and a millisecond ``timestamp``.
    """

    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    diagnostics: list[Any] | None = None
    usage: Usage = Field(default_factory=empty_usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = Field(default_factory=now_ms)


class ToolResultMessage(PiModel):
    """The result of one tool call, sent back to the model (pi's ``ToolResultMessage``): ``tool_call_id``,
    ``tool_name``, content blocks (text, images), ``details`` for UIs, ``is_error``.
    """

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)


Message: TypeAlias = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]
# Built on first use (defer_build), as the models are: not at import, which the page waits for.
MESSAGE_ADAPTER: TypeAdapter[UserMessage | AssistantMessage | ToolResultMessage] = TypeAdapter(
    Message, config=ConfigDict(defer_build=True)
)
CONTENT_ADAPTER: TypeAdapter[list[TextContent | ThinkingContent | ImageContent | ToolCall]] = TypeAdapter(
    list[Annotated[TextContent | ThinkingContent | ImageContent | ToolCall, Field(discriminator="type")]],
    config=ConfigDict(defer_build=True),
)

LLM_ROLES = frozenset({"user", "assistant", "toolResult"})
LLM_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)
"""For ``isinstance`` in loops over a session's messages: ``A | B | C`` there builds a union object
at every message (~0.3 ms per 1,000 messages in CPython, several times that in Pyodide)."""


def role_of(message: Any) -> str | None:
    """The ``role`` of any agent message: a model, an object with ``role``, or a mapping."""
    role = getattr(message, "role", None)
    if role is None and isinstance(message, Mapping):
        role = message.get("role")
    return role if isinstance(role, str) else None


def to_message(message: Any) -> UserMessage | AssistantMessage | ToolResultMessage:
    """Coerce an LLM message given as a model or a pi-JSON/snake_case mapping into its model."""
    if isinstance(message, LLM_MESSAGE_TYPES):
        return message
    if isinstance(message, BaseModel):
        message = message.model_dump()
    return MESSAGE_ADAPTER.validate_python(message)


# ---------------------------------------------------------------------------------------------
# Models


class ModelCost(PiModel):
    """Prices in USD per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class Model(PiModel):
    """A model and how to reach it (pi's ``Model``): ``id``, ``name``, the wire ``api``, ``provider``,
    ``base_url``, ``reasoning``, ``input`` kinds (``text``, ``image``), ``cost`` per million tokens,
    ``context_window``, ``max_tokens``, optional ``headers`` and ``compat`` flags. Look one up with
    :func:`py_agent.ai.models.get_model`.
    """

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: list[Literal["text", "image"]](["text"]))
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 0
    max_tokens: int = 0
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    thinking_level_map: dict[str, str | None] | None = None


ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh"]
"""pi-ai's reasoning level (the agent's thinking level without ``"off"``)."""

Transport: TypeAlias = Literal["sse", "websocket", "websocket-cached", "auto"]
CacheRetention: TypeAlias = Literal["none", "short", "long"]


class ThinkingBudgets(PiModel):
    """Token budgets per thinking level, for providers that take a budget instead of an effort."""

    minimal: int | None = None
    low: int | None = None
    medium: int | None = None
    high: int | None = None


# ---------------------------------------------------------------------------------------------
# Tools and contexts


class Tool(PiModel):
    """What a provider sees of a tool. ``parameters`` is a JSON Schema dict or a pydantic model class."""

    name: str
    description: str = ""
    parameters: Any = Field(default_factory=lambda: {"type": "object", "properties": {}})


def tool_json_schema(parameters: Any) -> dict[str, Any]:
    """The JSON Schema of a tool's ``parameters`` (a schema dict or a pydantic model class)."""
    if isinstance(parameters, type) and issubclass(parameters, BaseModel):
        return parameters.model_json_schema()
    if isinstance(parameters, Mapping):
        return dict(parameters)
    raise TypeError(f"Tool parameters must be a JSON Schema dict or a pydantic model class, got {parameters!r}")


class Context(PiModel):
    """What a stream function receives: system prompt, LLM messages and tools.

    ``messages`` and ``tools`` are taken as given (no copies, no validation), so the objects the
    agent holds are the objects the provider sees.
    """

    system_prompt: str | None = None
    messages: list[Any] = Field(default_factory=list)
    tools: list[Any] | None = None


# ---------------------------------------------------------------------------------------------
# Stream options


@dataclass(kw_only=True)
class ProviderResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class RetryInfo:
    """A provider request failed and is about to be sent again (py-agent's addition to pi-ai's
    options, so an app can show that it is waiting: see ``SimpleStreamOptions.on_retry``)."""

    attempt: int
    """The retry about to be made: 1 for the first."""
    max_retries: int
    delay_ms: int
    """How long it waits before sending again."""
    status: int | None
    """The HTTP status that failed, or ``None`` for a connection error or timeout."""
    server_delay: bool
    """True when the delay is the one the server asked for (``Retry-After`` or a body hint)."""
    error: str
    """The failure, as the stream's error message would have said it."""


OnPayload: TypeAlias = Callable[[Any, Model], Any | Awaitable[Any]]
OnResponse: TypeAlias = Callable[[ProviderResponse, Model], Awaitable[None] | None]
OnRetry: TypeAlias = Callable[[RetryInfo, Model], Awaitable[None] | None]


@dataclass(kw_only=True)
class SimpleStreamOptions:
    """Options of ``stream_simple`` (pi-ai's ``SimpleStreamOptions``)."""

    temperature: float | None = None
    max_tokens: int | None = None
    signal: AbortSignal | None = None
    api_key: str | None = None
    transport: Transport | str | None = None
    cache_retention: CacheRetention | None = None
    session_id: str | None = None
    on_payload: OnPayload | None = None
    on_response: OnResponse | None = None
    headers: dict[str, str] | None = None
    timeout_ms: int | None = None
    idle_timeout_ms: int | None = None
    max_retries: int | None = None
    max_retry_delay_ms: int | None = None
    metadata: dict[str, Any] | None = None
    reasoning: ThinkingLevel | None = None
    thinking_budgets: ThinkingBudgets | dict[str, int] | None = None
    http_transport: Any = None
    """An ``HttpTransport`` (see ``py_agent.ai.transport``); the environment's default when ``None``."""
    on_retry: OnRetry | None = None
    """py-agent only: called before each automatic retry of a failed request (its errors are ignored)."""


StreamOptions = SimpleStreamOptions
_OPTION_FIELDS = {f.name for f in fields(SimpleStreamOptions)}
_CAMEL_OPTION_FIELDS = {to_camel(name): name for name in _OPTION_FIELDS}


def to_stream_options(options: SimpleStreamOptions | Mapping[str, Any] | None) -> SimpleStreamOptions:
    """Accept options as the dataclass, a snake_case or camelCase mapping, or ``None``."""
    if options is None:
        return SimpleStreamOptions()
    if isinstance(options, SimpleStreamOptions):
        return options
    values: dict[str, Any] = {}
    for key, value in options.items():
        name = key if key in _OPTION_FIELDS else _CAMEL_OPTION_FIELDS.get(key)
        if name is not None:
            values[name] = value
    return SimpleStreamOptions(**values)
