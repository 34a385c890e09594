"""The ``subagent`` tool: delegate tasks to child agents with isolated context (pi's subagent example).

A port of pi's ``packages/coding-agent/examples/extensions/subagent/`` (index.ts of
``@earendil-works/pi-coding-agent`` 1.6.0) to in-process children: where pi spawns
``pi --mode json -p --no-session`` per task, each task here runs in its own core
:class:`~py_agent.core.Agent` with its own transcript, model, tools and system prompt. The parent
only sees the tool result. Three modes, as in pi::

    {"agent": "scout", "task": "Find the read tool"}                       # single
    {"tasks": [{"agent": "scout", "task": "..."}, ...]}                    # parallel: <= 8 tasks, <= 4 at once
    {"chain": [{"agent": "scout", "task": "..."},
               {"agent": "planner", "task": "Plan from this:\\n{previous}"}]}  # sequential

A child's context is its system prompt (the base prompt plus the definition's body) and one user
message ``"Task: <task>"``; never the parent's transcript. Its tools are the definition's subset of
the session's tools (all of them without a ``tools`` list), never the ``subagent`` tool itself (no
nesting). Children share the session's tools, and so the session's workspace.

Results follow pi: the text for the model is each task's final assistant text (single and chain:
truncated to 2000 lines / 50 KB; parallel: 50 KB per task; truncation is marked), and
``details`` (:class:`SubagentDetails`) holds every child's messages, usage, stop reason and error.
Progress goes through ``on_update`` (``"Parallel: 2/3 done, 1 running, 0 pending..."``). A child's
failure is a failed task (``details.is_error``), never an exception; aborting the parent's signal
aborts every running child and fails the tasks not started yet.

Pure: stdlib, pydantic and py_agent only.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from pydantic import Field

from ..ai._interop import get_field
from ..ai._util import call_flex, error_text, maybe_await
from ..ai.abort import AbortSignal
from ..ai.types import Model, PiModel, TextContent, role_of
from ..ai.validation import TypeBoxSchema
from ..core.agent import Agent
from ..core.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentTool,
    AgentToolResult,
    AgentToolUpdateCallback,
    StreamFn,
    ThinkingLevel,
    ToolExecutionMode,
)
from ._text import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, utf8_len
from ._text import truncate_head as _truncate_head
from .subagent_definitions import AgentDefinition, AgentRegistry, format_agent_list

if TYPE_CHECKING:
    from ..core.types import GetApiKey

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "MAX_CONCURRENCY",
    "MAX_PARALLEL_TASKS",
    "PER_TASK_OUTPUT_CAP",
    "SUBAGENT_PARAMETERS",
    "SUBAGENT_TOOL_NAME",
    "ChildAgentSpec",
    "ChildStatus",
    "DisplayItem",
    "SubagentDetails",
    "SubagentHost",
    "SubagentMode",
    "SubagentResult",
    "SubagentTool",
    "TruncationResult",
    "UsageStats",
    "aggregate_usage",
    "collect_subagent_usage",
    "confirmation_text",
    "create_subagent_tool",
    "default_child_system_prompt",
    "format_tokens",
    "format_usage_stats",
    "get_display_items",
    "get_failure_evidence",
    "get_failure_summary",
    "get_final_output",
    "get_result_output",
    "is_failed_result",
    "map_with_concurrency_limit",
    "parse_subagent_details",
    "resolve_model_name",
    "subagent_after_tool_call",
    "task_excerpt",
    "truncate_head",
    "truncate_model_output",
    "truncate_parallel_output",
]

SUBAGENT_TOOL_NAME = "subagent"
MAX_PARALLEL_TASKS = 8
MAX_CONCURRENCY = 4
PER_TASK_OUTPUT_CAP = 50 * 1024
"""Bytes of one parallel task's output that reach the model."""
TRUNCATION_NOTICE_RESERVE = 256

ChildStatus: TypeAlias = Literal["pending", "running", "completed", "failed", "aborted"]
SubagentMode: TypeAlias = Literal["single", "parallel", "chain"]
AgentSourceOrUnknown: TypeAlias = Literal["builtin", "user", "unknown"]

# ---------------------------------------------------------------------------------------------
# Result and details (pi's SingleResult / SubagentDetails; JSON is camelCase)


class UsageStats(PiModel):
    """A child's summed usage: tokens, cost (USD), the last context size and the number of turns."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0
    context_tokens: int = 0
    turns: int = 0


class SubagentResult(PiModel):
    """One task: the child's messages (its own transcript), usage, stop reason and error."""

    agent: str
    agent_source: AgentSourceOrUnknown = "unknown"
    task: str
    status: ChildStatus = "pending"
    messages: list[Any] = Field(default_factory=list)
    """The child's transcript: the ``Task: ...`` user message, assistant and tool-result messages."""
    usage: UsageStats = Field(default_factory=UsageStats)
    model: str | None = None
    """``provider/id`` of the child's model."""
    stop_reason: str | None = None
    error_message: str | None = None
    step: int | None = None
    """1-based step number in a chain."""
    system_prompt: str | None = None
    """The child's whole system prompt (for the expanded view)."""
    tools: list[str] | None = None
    """The names of the tools the child had."""


class SubagentDetails(PiModel):
    mode: SubagentMode
    results: list[SubagentResult] = Field(default_factory=list)
    is_error: bool = False


def parse_subagent_details(details: Any) -> SubagentDetails | None:
    """``details`` of a subagent tool result, as a model (it is a dict after a JSON round trip)."""
    if isinstance(details, SubagentDetails):
        return details
    if isinstance(details, Mapping):
        try:
            return SubagentDetails.model_validate(dict(details))
        except ValueError:
            return None
    return None


# ---------------------------------------------------------------------------------------------
# Output helpers (pi's getFinalOutput, isFailedResult, getFailureEvidence, truncation, ...)


def get_final_output(messages: Sequence[Any]) -> str:
    """pi's ``getFinalOutput``: the first text block of the last assistant message that has one
    (``""`` when there is none)."""
    for message in reversed(messages):
        if role_of(message) == "assistant":
            for part in get_field(message, "content") or []:
                if get_field(part, "type") == "text":
                    return str(get_field(part, "text") or "")
    return ""


def is_failed_result(result: SubagentResult) -> bool:
    return result.status in ("failed", "aborted")


def get_failure_evidence(result: SubagentResult) -> str:
    """What went wrong: the error message, then the assistant's output (pi also lists stderr and
    the signal of the child process, which in-process children do not have)."""
    evidence: list[str] = []
    seen: set[str] = set()

    def add(label: str, value: str | None) -> None:
        text = (value or "").strip()
        if not text or text in seen:
            return
        seen.add(text)
        evidence.append(f"{label}: {text}")

    add("Error", result.error_message)
    add("Assistant output", get_final_output(result.messages))
    return "\n\n".join(evidence) or "(no output)"


def get_failure_summary(result: SubagentResult) -> str:
    """One line for a UI: the error message, else the assistant's output."""
    return (result.error_message or "").strip() or get_final_output(result.messages) or "(no output)"


def get_result_output(result: SubagentResult) -> str:
    if is_failed_result(result):
        return get_failure_evidence(result)
    return get_final_output(result.messages) or "(no output)"


TASK_EXCERPT_CHARS = 60


def task_excerpt(task: str) -> str:
    """The start of a task's text, quoted: its first line, cut to ``TASK_EXCERPT_CHARS`` with an ellipsis."""
    stripped = task.strip()
    line = stripped.split("\n", 1)[0].strip()
    cut = line[:TASK_EXCERPT_CHARS].rstrip()
    if cut != stripped:
        cut += "…"
    return f'"{cut}"'


def _cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 form fits ``max_bytes`` (whole characters)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore")


def truncate_parallel_output(output: str) -> str:
    """pi's ``truncateParallelOutput``: at most :data:`PER_TASK_OUTPUT_CAP` bytes, then a notice."""
    byte_length = utf8_len(output)
    if byte_length <= PER_TASK_OUTPUT_CAP:
        return output
    truncated = _cut_utf8(output, PER_TASK_OUTPUT_CAP)
    omitted = byte_length - utf8_len(truncated)
    return f"{truncated}\n\n[Output truncated: {omitted} bytes omitted. Full output preserved in tool details.]"


TruncationResult = Truncation
"""pi's ``TruncationResult``; the workspace tools' :class:`~py_agent.tools._text.Truncation`."""


def truncate_head(content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> Truncation:
    """pi's ``truncateHead``: keep the first whole lines within both limits."""
    return _truncate_head(content, max_lines, max_bytes, final_newline_ends_line=True)


def truncate_model_output(output: str) -> str:
    """pi's ``truncateModelOutput``: 2000 lines / 50 KB, the notice included."""
    initial = truncate_head(output)
    if not initial.truncated:
        return output
    body = truncate_head(output, DEFAULT_MAX_LINES - 2, DEFAULT_MAX_BYTES - TRUNCATION_NOTICE_RESERVE)
    omitted = initial.total_bytes - body.output_bytes
    notice = f"[Output truncated: {omitted} bytes omitted. Full output preserved in tool details.]"
    return f"{body.content}\n\n{notice}" if body.content else notice


def format_tokens(count: int) -> str:
    """pi's ``formatTokens``: ``999``, ``1.2k``, ``45k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 10000:
        return f"{count / 1000:.1f}k"
    if count < 1000000:
        return f"{_js_round(count / 1000)}k"
    return f"{count / 1000000:.1f}M"


def _js_round(value: float) -> int:
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def format_usage_stats(usage: UsageStats, model: str | None = None) -> str:
    """pi's ``formatUsageStats``: ``"3 turns ↑1.2k ↓340 R5k W1k $0.0123 ctx:4.5k model"``."""
    parts: list[str] = []
    if usage.turns:
        parts.append(f"{usage.turns} turn{'s' if usage.turns > 1 else ''}")
    if usage.input:
        parts.append(f"↑{format_tokens(usage.input)}")
    if usage.output:
        parts.append(f"↓{format_tokens(usage.output)}")
    if usage.cache_read:
        parts.append(f"R{format_tokens(usage.cache_read)}")
    if usage.cache_write:
        parts.append(f"W{format_tokens(usage.cache_write)}")
    if usage.cost:
        parts.append(f"${usage.cost:.4f}")
    if usage.context_tokens > 0:
        parts.append(f"ctx:{format_tokens(usage.context_tokens)}")
    if model:
        parts.append(model)
    return " ".join(parts)


def aggregate_usage(results: Sequence[SubagentResult]) -> UsageStats:
    """Summed usage of several children (``context_tokens`` stays 0, as pi's total)."""
    total = UsageStats()
    for result in results:
        total.input += result.usage.input
        total.output += result.usage.output
        total.cache_read += result.usage.cache_read
        total.cache_write += result.usage.cache_write
        total.cost += result.usage.cost
        total.turns += result.usage.turns
    return total


def collect_subagent_usage(messages: Sequence[Any]) -> UsageStats:
    """Children's usage in a transcript: summed over its ``subagent`` tool results' details, so a
    session can add it to its own totals (the parent's assistant messages do not include it)."""
    results: list[SubagentResult] = []
    for message in messages:
        if role_of(message) != "toolResult" or get_field(message, "tool_name") != SUBAGENT_TOOL_NAME:
            continue
        details = parse_subagent_details(get_field(message, "details"))
        if details is not None:
            results.extend(details.results)
    return aggregate_usage(results)


@dataclass
class DisplayItem:
    """pi's ``DisplayItem``: an assistant text or tool call, for the collapsed/expanded views."""

    type: Literal["text", "toolCall"]
    text: str = ""
    name: str = ""
    args: Any = None


def get_display_items(messages: Sequence[Any]) -> list[DisplayItem]:
    items: list[DisplayItem] = []
    for message in messages:
        if role_of(message) != "assistant":
            continue
        for part in get_field(message, "content") or []:
            kind = get_field(part, "type")
            if kind == "text":
                items.append(DisplayItem("text", text=str(get_field(part, "text") or "")))
            elif kind == "toolCall":
                items.append(
                    DisplayItem("toolCall", name=str(get_field(part, "name") or ""), args=get_field(part, "arguments"))
                )
    return items


# ---------------------------------------------------------------------------------------------
# Concurrency

In = TypeVar("In")
Out = TypeVar("Out")


async def map_with_concurrency_limit(
    items: Sequence[In], concurrency: int, fn: Callable[[In, int], Awaitable[Out]]
) -> list[Out]:
    """pi's ``mapWithConcurrencyLimit``: at most ``concurrency`` calls of ``fn`` at once, items
    taken in order by ``min(concurrency, len(items))`` workers; results in item order."""
    if not items:
        return []
    limit = max(1, min(concurrency, len(items)))
    results: list[Any] = [None] * len(items)
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while True:
            current = next_index
            next_index += 1
            if current >= len(items):
                return
            results[current] = await fn(items[current], current)

    await asyncio.gather(*(worker() for _ in range(limit)))
    return results


# ---------------------------------------------------------------------------------------------
# The host: what the session provides to the children


@dataclass
class ChildAgentSpec:
    """Everything a child agent is made of (given to :attr:`SubagentHost.agent_factory`)."""

    definition: AgentDefinition
    task: str
    system_prompt: str
    model: Model
    thinking_level: ThinkingLevel
    tools: list[Any]
    step: int | None = None


def _tool_name(tool: Any) -> str:
    name = get_field(tool, "name")
    return name if isinstance(name, str) else ""


def _first_line(text: str) -> str:
    for line in text.strip().split("\n"):
        if line.strip():
            return line.strip()
    return ""


def default_child_system_prompt(tools: Sequence[Any]) -> str:
    """The base of a child's system prompt (the definition's body is appended after it)."""
    listed = [f"- {_tool_name(tool)}: {_first_line(str(get_field(tool, 'description') or ''))}" for tool in tools]
    return "\n".join(
        [
            "You are a subagent inside py-agent, an AI agent running in a web page. Another agent "
            "delegated one task to you and runs you in an isolated context: you see only this system "
            "prompt and the task, not that agent's conversation.",
            "",
            "Available tools:",
            *(listed or ["(none)"]),
            "",
            "Files you read and write are in the workspace shared with the agent that delegated the task "
            "(and with other subagents). Work autonomously until the task is done. Your final message is "
            "returned to that agent as the result: make it complete and self-contained, and be concise.",
        ]
    )


def resolve_model_name(name: str, parent: Model) -> Model | None:
    """A definition's ``model``: ``"provider/id"``, or an id looked up in the parent's provider
    first, then in every provider of the catalogue (and registered models)."""
    from ..ai.models import get_model, get_providers

    if name in (parent.id, f"{parent.provider}/{parent.id}"):
        return parent
    if "/" in name:
        provider, model_id = name.split("/", 1)
        found = get_model(provider, model_id)
        if found is not None:
            return found
    found = get_model(parent.provider, name)
    if found is not None:
        return found
    for provider in get_providers():
        found = get_model(provider, name)
        if found is not None:
            return found
    return None


T = TypeVar("T")


def _value(source: T | Callable[[], T]) -> T:
    return source() if callable(source) else source


@dataclass
class SubagentHost:
    """What children are built from: the session's model, thinking level and tools (values or
    callables read at each run), how to reach the provider, and how to build the system prompt.

    :meth:`from_agent` reads them from the parent :class:`Agent`. ``agent_factory`` replaces the
    default construction (``Agent(initial_state=..., get_api_key=..., stream_fn=...)``), e.g. to
    add hooks; it must return a fresh, idle agent with the spec's state.
    """

    model: Model | Callable[[], Model]
    tools: Sequence[Any] | Callable[[], Sequence[Any]] = ()
    thinking_level: ThinkingLevel | Callable[[], ThinkingLevel] = "off"
    get_api_key: GetApiKey | None = None
    stream_fn: StreamFn | None = None
    base_system_prompt: str | Callable[[Sequence[Any]], str] | None = None
    """A string, or a function of the child's tools; ``None``: :func:`default_child_system_prompt`."""
    resolve_model: Callable[[str, Model], Model | None] = resolve_model_name
    agent_factory: Callable[[ChildAgentSpec], Agent] | None = None
    tool_execution: ToolExecutionMode = "parallel"
    transport: str = "auto"
    max_retry_delay_ms: int | None = None
    thinking_budgets: Any = None

    @classmethod
    def from_agent(
        cls,
        parent: Agent,
        *,
        tools: Sequence[Any] | Callable[[], Sequence[Any]] | None = None,
        base_system_prompt: str | Callable[[Sequence[Any]], str] | None = None,
        agent_factory: Callable[[ChildAgentSpec], Agent] | None = None,
    ) -> SubagentHost:
        """Children get the parent's current model, thinking level, tools (without ``subagent``),
        API keys, stream function and transport settings."""

        def get_api_key(provider: str) -> Any:
            hook = parent.get_api_key
            return hook(provider) if hook is not None else None

        return cls(
            model=lambda: parent.state.model,
            tools=tools if tools is not None else (lambda: parent.state.tools),
            thinking_level=lambda: parent.state.thinking_level,
            get_api_key=get_api_key,
            stream_fn=parent.stream_fn,
            base_system_prompt=base_system_prompt,
            agent_factory=agent_factory,
            tool_execution=parent.tool_execution,
            transport=parent.transport,
            max_retry_delay_ms=parent.max_retry_delay_ms,
            thinking_budgets=parent.thinking_budgets,
        )

    def session_tools(self) -> list[Any]:
        return [tool for tool in _value(self.tools) if _tool_name(tool) != SUBAGENT_TOOL_NAME]

    def system_prompt_for(self, definition: AgentDefinition, tools: Sequence[Any]) -> str:
        base = self.base_system_prompt
        if base is None:
            text = default_child_system_prompt(tools)
        elif isinstance(base, str):
            text = base
        else:
            text = base(tools)
        body = definition.system_prompt.strip()
        if not body:
            return text
        return f"{text}\n\n{body}" if text else body

    def create_agent(self, spec: ChildAgentSpec) -> Agent:
        if self.agent_factory is not None:
            return self.agent_factory(spec)
        return Agent(
            initial_state={
                "system_prompt": spec.system_prompt,
                "model": spec.model,
                "thinking_level": spec.thinking_level,
                "tools": spec.tools,
            },
            get_api_key=self.get_api_key,
            stream_fn=self.stream_fn,
            tool_execution=self.tool_execution,
            transport=self.transport,
            max_retry_delay_ms=self.max_retry_delay_ms,
            thinking_budgets=self.thinking_budgets,
        )


# ---------------------------------------------------------------------------------------------
# Parameters (pi's TypeBox schema, without agentScope / confirmProjectAgents / cwd)


def _item_schema(task_description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Name of the agent to invoke"},
            "task": {"type": "string", "description": task_description},
        },
        "required": ["agent", "task"],
    }


SUBAGENT_PARAMETERS = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Name of the agent to invoke (for single mode)"},
            "task": {"type": "string", "description": "Task to delegate (for single mode)"},
            "tasks": {
                "type": "array",
                "items": _item_schema("Task to delegate to the agent"),
                "description": "Array of {agent, task} for parallel execution",
            },
            "chain": {
                "type": "array",
                "items": _item_schema("Task with optional {previous} placeholder for prior output"),
                "description": "Array of {agent, task} for sequential execution",
            },
        },
    }
)

MAX_LISTED_AGENTS = 20


def _description(agents: Sequence[AgentDefinition]) -> str:
    listed, remaining = format_agent_list(agents, MAX_LISTED_AGENTS)
    more = f"; ... and {remaining} more" if remaining else ""
    return " ".join(
        [
            "Delegate tasks to specialized subagents with isolated context.",
            "Modes: single (agent + task), parallel (tasks array), chain (sequential with {previous} placeholder).",
            f"Parallel runs at most {MAX_PARALLEL_TASKS} tasks, {MAX_CONCURRENCY} at a time.",
            f"Available agents: {listed}{more}.",
        ]
    )


# ---------------------------------------------------------------------------------------------
# The tool

ConfirmCallback: TypeAlias = Callable[[list[AgentDefinition]], "bool | Awaitable[bool]"]
ChildEndCallback: TypeAlias = Callable[[SubagentResult], Any]


def confirmation_text(definitions: Sequence[AgentDefinition]) -> tuple[str, str]:
    """Title and message of the question asked before running imported definitions (pi's
    "Run project-local agents?" prompt, for definitions imported from files)."""
    sources = "\n".join(f"- {d.name}: {d.origin or 'imported'}" for d in definitions)
    return (
        "Run imported agents?",
        f"Sources:\n{sources}\n\nImported agents carry prompts written outside this app. "
        "Only continue if you trust them.",
    )


def _text(text: str) -> list[TextContent | Any]:
    return [TextContent(text=text)]


def _snapshot(result: SubagentResult) -> SubagentResult:
    return result.model_copy(update={"messages": list(result.messages), "usage": result.usage.model_copy()})


def _make_details(mode: SubagentMode, results: Sequence[SubagentResult], force_error: bool = False) -> SubagentDetails:
    return SubagentDetails(
        mode=mode, results=list(results), is_error=force_error or any(is_failed_result(r) for r in results)
    )


def _unstarted(
    agent: str, task: str, step: int | None, status: ChildStatus, error_message: str | None = None
) -> SubagentResult:
    return SubagentResult(agent=agent, task=task, status=status, error_message=error_message, step=step)


class SubagentTool(AgentTool):
    """The ``subagent`` tool (build it with :func:`create_subagent_tool`).

    ``registry`` supplies the definitions (its changes update the tool description); ``confirm``
    is asked before running imported definitions that are still pending (pi's "Run project-local
    agents?" prompt): without it they fail. ``on_child_end`` is called with each finished task's
    result (usage included), e.g. to add the children's cost to the session's totals as they go.
    """

    def __init__(
        self,
        host: SubagentHost,
        registry: AgentRegistry | None = None,
        *,
        confirm: ConfirmCallback | None = None,
        on_child_end: ChildEndCallback | None = None,
    ) -> None:
        self.host = host
        self.registry = registry if registry is not None else AgentRegistry()
        self.confirm = confirm
        self.on_child_end = on_child_end
        super().__init__(
            name=SUBAGENT_TOOL_NAME,
            label="Subagent",
            description=_description(self.registry.all()),
            parameters=SUBAGENT_PARAMETERS,
            execute=self._execute,
        )
        # The registry may outlive the tool (one registry for every session of the page): follow
        # it through a weak reference, so a dropped tool does not stay subscribed.
        tool_ref = weakref.ref(self)
        unsubscribe: Callable[[], None] | None = None

        def refresh(registry: AgentRegistry) -> None:
            tool = tool_ref()
            if tool is None:
                if unsubscribe is not None:
                    unsubscribe()
                return
            tool.description = _description(registry.all())

        unsubscribe = self.registry.subscribe(refresh)
        self._unsubscribe = unsubscribe

    def close(self) -> None:
        """Stop following the registry's changes."""
        self._unsubscribe()

    # -- one child ---------------------------------------------------------------------------------

    async def _run_single(
        self,
        agents: Mapping[str, AgentDefinition],
        approved: set[str],
        agent_name: str,
        task: str,
        step: int | None,
        signal: AbortSignal | None,
        report: Callable[[SubagentResult], None] | None,
    ) -> SubagentResult:
        if signal is not None and signal.aborted:
            return _unstarted(agent_name, task, step, "aborted", "Subagent was aborted before starting")
        definition = agents.get(agent_name)
        if definition is None:
            available = ", ".join(f'"{name}"' for name in agents) or "none"
            return _unstarted(
                agent_name, task, step, "failed", f'Unknown agent: "{agent_name}". Available agents: {available}.'
            )
        if definition.status != "active" and definition.name not in approved:
            return _unstarted(
                agent_name,
                task,
                step,
                "failed",
                f'Agent "{agent_name}" was imported and needs confirmation before it can run.',
            )
        host = self.host
        result = SubagentResult(
            agent=agent_name, agent_source=definition.source, task=task, status="running", step=step
        )
        try:
            parent_model = _value(host.model)
            thinking_level: ThinkingLevel = _value(host.thinking_level)
            model = parent_model
            if definition.model:
                resolved = host.resolve_model(definition.model, parent_model)
                if resolved is None:
                    result.status = "failed"
                    result.error_message = f'Unknown model: "{definition.model}"'
                    return self._finish(result)
                if resolved is not parent_model:
                    model = resolved
                    thinking_level = _clamp_thinking(model, thinking_level)
            session_tools = host.session_tools()
            if definition.tools is not None:
                by_name = {_tool_name(tool): tool for tool in session_tools}
                tools = [by_name[name] for name in dict.fromkeys(definition.tools) if name in by_name]
            else:
                tools = session_tools
            system_prompt = host.system_prompt_for(definition, tools)
            spec = ChildAgentSpec(definition, task, system_prompt, model, thinking_level, tools, step)
            child = host.create_agent(spec)
        except Exception as error:
            result.status = "failed"
            result.error_message = f"Failed to start subagent: {error_text(error)}"
            return self._finish(result)
        result.model = f"{model.provider}/{model.id}"
        result.system_prompt = system_prompt
        result.tools = [_tool_name(tool) for tool in tools]

        def emit() -> None:
            if report is not None:
                report(result)

        def on_event(event: Any) -> None:
            if get_field(event, "type") != "message_end":
                return
            message = get_field(event, "message")
            role = role_of(message)
            if role not in ("user", "assistant", "toolResult"):
                return
            result.messages.append(message)
            if role == "assistant":
                _add_usage(result, message)
            emit()

        was_aborted = False

        def on_abort() -> None:
            nonlocal was_aborted
            was_aborted = True
            child.abort()

        unsubscribe = child.subscribe(on_event)
        remove_abort = signal.add_listener(on_abort) if signal is not None else None
        try:
            if was_aborted:
                result.status = "aborted"
                result.error_message = "Subagent was aborted before starting"
                return self._finish(result)
            emit()
            await child.prompt(f"Task: {task}")
        except Exception as error:
            result.status = "failed"
            result.error_message = f"Subagent failed: {error_text(error)}"
            return self._finish(result)
        finally:
            if remove_abort is not None:
                remove_abort()
            unsubscribe()
        if was_aborted:
            result.status = "aborted"
            result.error_message = result.error_message or "Subagent was aborted"
        elif result.stop_reason == "aborted":
            result.status = "aborted"
        elif result.stop_reason == "error":
            result.status = "failed"
        elif not any(role_of(m) == "assistant" for m in result.messages):
            result.status = "failed"
            result.error_message = result.error_message or "Subagent produced no response"
        else:
            result.status = "completed"
        return self._finish(result)

    def _finish(self, result: SubagentResult) -> SubagentResult:
        if self.on_child_end is not None:
            # A UI callback must not turn a finished task into a crash.
            with contextlib.suppress(Exception):
                self.on_child_end(result)
        return result

    # -- the modes ---------------------------------------------------------------------------------

    async def _execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal | None = None,
        on_update: AgentToolUpdateCallback | None = None,
    ) -> AgentToolResult:
        params = dict(params) if isinstance(params, Mapping) else params.model_dump()
        chain = [dict(item) for item in params.get("chain") or []]
        tasks = [dict(item) for item in params.get("tasks") or []]
        agent = params.get("agent")
        task = params.get("task")
        has_chain, has_tasks, has_single = bool(chain), bool(tasks), bool(agent and task)
        definitions = self.registry.all()
        agents = {definition.name: definition for definition in definitions}

        if has_chain + has_tasks + has_single != 1:
            available = ", ".join(f"{d.name} ({d.source})" for d in definitions) or "none"
            return AgentToolResult(
                content=_text(f"Invalid parameters. Provide exactly one mode.\nAvailable agents: {available}"),
                details=_make_details("single", [], True),
            )
        mode: SubagentMode = "chain" if has_chain else "parallel" if has_tasks else "single"
        if has_tasks and len(tasks) > MAX_PARALLEL_TASKS:
            return AgentToolResult(
                content=_text(f"Too many parallel tasks ({len(tasks)}). Max is {MAX_PARALLEL_TASKS}."),
                details=_make_details("parallel", [], True),
            )

        requested = [step["agent"] for step in chain] or [t["agent"] for t in tasks] or [str(agent)]
        pending = [agents[n] for n in dict.fromkeys(requested) if n in agents and agents[n].status != "active"]
        approved: set[str] = set()
        if pending and self.confirm is not None:
            ok = await maybe_await(call_flex(self.confirm, pending))
            if not ok:
                return AgentToolResult(
                    content=_text("Canceled: imported agents not approved."), details=_make_details(mode, [])
                )
            for definition in pending:
                approved.add(definition.name)
                if definition.source == "user":
                    self.registry.confirm(definition.name)

        def update(text: str, results: Sequence[SubagentResult]) -> None:
            if on_update is not None:
                on_update(AgentToolResult(content=_text(text), details=_make_details(mode, results)))

        if has_chain:
            return await self._run_chain(chain, agents, approved, signal, update)
        if has_tasks:
            return await self._run_parallel(tasks, agents, approved, signal, update)
        return await self._run_single_mode(str(agent), str(task), agents, approved, signal, update)

    async def _run_single_mode(
        self,
        agent: str,
        task: str,
        agents: Mapping[str, AgentDefinition],
        approved: set[str],
        signal: AbortSignal | None,
        update: Callable[[str, Sequence[SubagentResult]], None],
    ) -> AgentToolResult:
        def report(current: SubagentResult) -> None:
            update(get_final_output(current.messages) or "(running...)", [_snapshot(current)])

        result = await self._run_single(agents, approved, agent, task, None, signal, report)
        details = _make_details("single", [result])
        if is_failed_result(result):
            text = f"Agent {result.stop_reason or result.status}: {get_result_output(result)}"
            return AgentToolResult(content=_text(truncate_model_output(text)), details=details)
        return AgentToolResult(
            content=_text(truncate_model_output(get_final_output(result.messages) or "(no output)")), details=details
        )

    async def _run_chain(
        self,
        chain: list[dict[str, Any]],
        agents: Mapping[str, AgentDefinition],
        approved: set[str],
        signal: AbortSignal | None,
        update: Callable[[str, Sequence[SubagentResult]], None],
    ) -> AgentToolResult:
        results: list[SubagentResult] = []
        previous_output = ""
        for index, step in enumerate(chain):
            task = str(step["task"]).replace("{previous}", previous_output)

            def report(current: SubagentResult) -> None:
                update(
                    get_final_output(current.messages) or "(running...)",
                    [*(_snapshot(r) for r in results), _snapshot(current)],
                )

            result = await self._run_single(agents, approved, str(step["agent"]), task, index + 1, signal, report)
            results.append(result)
            if is_failed_result(result):
                label = f"{step['agent']}: {task_excerpt(str(step['task']))}"
                text = f"Chain stopped at step {index + 1} ({label}): {get_result_output(result)}"
                return AgentToolResult(
                    content=_text(truncate_model_output(text)), details=_make_details("chain", results)
                )
            previous_output = get_final_output(result.messages)
        return AgentToolResult(
            content=_text(truncate_model_output(get_final_output(results[-1].messages) or "(no output)")),
            details=_make_details("chain", results),
        )

    async def _run_parallel(
        self,
        tasks: list[dict[str, Any]],
        agents: Mapping[str, AgentDefinition],
        approved: set[str],
        signal: AbortSignal | None,
        update: Callable[[str, Sequence[SubagentResult]], None],
    ) -> AgentToolResult:
        all_results = [_unstarted(str(t["agent"]), str(t["task"]), None, "pending") for t in tasks]

        def emit_parallel() -> None:
            running = sum(1 for r in all_results if r.status == "running")
            pending = sum(1 for r in all_results if r.status == "pending")
            done = len(all_results) - running - pending
            update(
                f"Parallel: {done}/{len(all_results)} done, {running} running, {pending} pending...",
                [_snapshot(r) for r in all_results],
            )

        async def run(item: dict[str, Any], index: int) -> SubagentResult:
            def report(current: SubagentResult) -> None:
                all_results[index] = current
                emit_parallel()

            result = await self._run_single(
                agents, approved, str(item["agent"]), str(item["task"]), None, signal, report
            )
            all_results[index] = result
            emit_parallel()
            return result

        results = await map_with_concurrency_limit(tasks, MAX_CONCURRENCY, run)
        success_count = sum(1 for r in results if not is_failed_result(r))
        summaries = []
        for number, r in enumerate(results, 1):
            output = truncate_parallel_output(get_result_output(r))
            status = (
                f"{r.status} ({r.stop_reason})"
                if is_failed_result(r) and r.stop_reason and r.stop_reason != "end"
                else r.status
            )
            # Several tasks may go to one agent: the number and the task's start tell them apart.
            summaries.append(f"### Task {number} [{r.agent}] {status}: {task_excerpt(r.task)}\n\n{output}")
        return AgentToolResult(
            content=_text(f"Parallel: {success_count}/{len(results)} succeeded\n\n" + "\n\n---\n\n".join(summaries)),
            details=_make_details("parallel", results),
        )


def _add_usage(result: SubagentResult, message: Any) -> None:
    usage = result.usage
    usage.turns += 1
    message_usage = get_field(message, "usage")
    if message_usage is not None:
        usage.input += int(get_field(message_usage, "input") or 0)
        usage.output += int(get_field(message_usage, "output") or 0)
        usage.cache_read += int(get_field(message_usage, "cache_read") or 0)
        usage.cache_write += int(get_field(message_usage, "cache_write") or 0)
        cost = get_field(message_usage, "cost")
        usage.cost += float(get_field(cost, "total") or 0) if cost is not None else 0
        usage.context_tokens = int(get_field(message_usage, "total_tokens") or 0)
    result.stop_reason = get_field(message, "stop_reason")
    result.error_message = get_field(message, "error_message")


def _clamp_thinking(model: Model, level: ThinkingLevel) -> ThinkingLevel:
    from ..ai.models import clamp_thinking_level

    clamped: ThinkingLevel = clamp_thinking_level(model, level)
    return clamped


def create_subagent_tool(
    host: SubagentHost | Agent,
    registry: AgentRegistry | None = None,
    *,
    confirm: ConfirmCallback | None = None,
    on_child_end: ChildEndCallback | None = None,
) -> SubagentTool:
    """The ``subagent`` tool for a session: ``host`` is a :class:`SubagentHost` or the parent
    :class:`Agent` itself (:meth:`SubagentHost.from_agent`); ``registry`` defaults to the
    built-in definitions only."""
    if isinstance(host, Agent):
        host = SubagentHost.from_agent(host)
    return SubagentTool(host, registry, confirm=confirm, on_child_end=on_child_end)


def subagent_after_tool_call(context: AfterToolCallContext, signal: AbortSignal | None = None) -> Any:
    """An ``after_tool_call`` hook marking a failed subagent run as an error tool result.

    pi's example does the same with a ``tool_result`` handler (an ``execute`` that returns cannot
    set ``isError``); compose it into the session's own hook. Returns ``None`` for other tools.
    """
    if context.tool_call.name != SUBAGENT_TOOL_NAME:
        return None
    details = parse_subagent_details(context.result.details)
    if details is not None and details.is_error and not context.is_error:
        return AfterToolCallResult(is_error=True)
    return None
