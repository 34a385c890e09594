"""Runs the parity scenarios with py_agent and prints one normalized JSON trace per scenario.

    python run_python.py <scenario dir or file>... [--only name,name]

This is run_reference.mjs for py_agent; tests/test_reference_parity.py compares the two. Keep the
two files in step: the tool and hook libraries, the trace format and the normalization must be
identical. The format is described in scenarios/README.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import heapq
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from py_agent.ai import (
    ImageContent,
    TextContent,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
    stream_simple,
)
from py_agent.ai.types import to_message
from py_agent.core import (
    AfterToolCallResult,
    Agent,
    AgentLoopTurnUpdate,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
)

SCENARIO_TIMEOUT_S = 10.0

# ---------------------------------------------------------------------------------------------
# Normalization: timestamps and random ids become placeholders.

RANDOM_ID = re.compile(r"^(tool|faux|faux-provider):\d{10,}:[0-9a-z]+$")


def to_json(value: Any) -> Any:
    """The JSON value pi would write for ``value`` (models by alias, ``None`` fields left out)."""
    if isinstance(value, BaseModel):
        return to_json(value.model_dump(mode="json", by_alias=True))
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def norm(value: Any) -> Any:
    return _normalize(to_json(value))


def _normalize(value: Any, key: str | None = None) -> Any:
    if isinstance(value, list):
        return [_normalize(item) for item in value]
    if isinstance(value, dict):
        return {k: _normalize(v, k) for k, v in value.items()}
    if key == "timestamp" and isinstance(value, int | float) and not isinstance(value, bool):
        return "<ts>"
    if isinstance(value, str):
        match = RANDOM_ID.match(value)
        if match:
            return f"<{match.group(1)}-id>"
    return value


def js_stringify(value: Any) -> str:
    return json.dumps(to_json(value), separators=(",", ":"), ensure_ascii=False)


def error_text(error: BaseException) -> str:
    return str(error)


class Timers:
    """Node's timer phase: due timers fire one at a time, earliest first, and each one's wake-up
    runs to its next wait before the next fires (Node drains the microtasks after every timer
    callback). asyncio would wake every overdue timer in one turn and interleave them, so on a
    busy machine the order of events would depend on how late the process ran."""

    DRAIN_TURNS = 64  # more event-loop turns than any wake-up in the scenarios takes

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self.count = 0
        self.changed = asyncio.Event()
        self.driver: asyncio.Task[None] | None = None

    def add(self, ms: float) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.count += 1
        heapq.heappush(self.heap, (loop.time() + ms / 1000, self.count, done))
        self.changed.set()
        if self.driver is None:
            self.driver = loop.create_task(self.run())
        return done

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while self.heap and self.heap[0][2].done():
                heapq.heappop(self.heap)  # settled by an abort
            if not self.heap:
                self.changed.clear()
                await self.changed.wait()
                continue
            delay = self.heap[0][0] - loop.time()
            if delay > 0:
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), delay)
                continue
            _, _, done = heapq.heappop(self.heap)
            if not done.done():
                done.set_result(None)
                for _ in range(self.DRAIN_TURNS):
                    await asyncio.sleep(0)


TIMERS: Timers | None = None


async def sleep(ms: float, signal: Any = None) -> None:
    """run_reference.mjs's sleep: settled by its timer or the abort, whichever comes first."""
    global TIMERS
    if signal is not None and signal.aborted:
        await asyncio.sleep(0)  # awaiting a settled promise still yields in JavaScript
        return
    if TIMERS is None or TIMERS.driver is None or TIMERS.driver.get_loop() is not asyncio.get_running_loop():
        TIMERS = Timers()
    done = TIMERS.add(ms)

    def finish() -> None:
        if not done.done():
            done.set_result(None)

    remove = signal.add_listener(finish) if signal is not None else None
    try:
        await done
    finally:
        if remove is not None:
            remove()


def js_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def field(obj: Any, name: str, camel: str | None = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(camel or name, obj.get(name))
    return getattr(obj, name, None)


def role(message: Any) -> Any:
    return field(message, "role")


# ---------------------------------------------------------------------------------------------
# Messages given in scenarios (pi JSON) get defaults for the fields a scenario may leave out.


def make_message(spec: dict[str, Any]) -> Any:
    message = copy.deepcopy(spec)
    message.setdefault("timestamp", 1000)
    if message.get("role") == "assistant":
        message.setdefault("api", "faux")
        message.setdefault("provider", "faux")
        message.setdefault("model", "faux-1")
        message.setdefault(
            "usage",
            {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
        )
        message.setdefault("stopReason", "stop")
    if message.get("role") == "toolResult":
        message.setdefault("isError", False)
    if message.get("role") in ("user", "assistant", "toolResult"):
        return to_message(message)
    return message  # a custom app message: a plain mapping with its own role


# ---------------------------------------------------------------------------------------------
# The tool library (run_reference.mjs has the same tools).


def text(t: str) -> list[TextContent]:
    return [TextContent(text=t)]


def tool_echo() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
        # A plain dict (pi's object literal) instead of an AgentToolResult.
        return {
            "content": [{"type": "text", "text": f"echoed: {params['value']}"}],
            "details": {"value": params["value"]},
        }

    return AgentTool(
        name="echo",
        label="Echo",
        description="Echo the value back",
        parameters={"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
        execute=execute,
    )


def tool_fail() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        raise RuntimeError(params["message"])

    return AgentTool(
        name="fail",
        label="Fail",
        description="Always raises",
        parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        execute=execute,
    )


def tool_finish() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=text(f"finished: {params['value']}"), details={"value": params["value"]}, terminate=True
        )

    return AgentTool(
        name="finish",
        label="Finish",
        description="Ends the run after this batch",
        parameters={"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
        execute=execute,
    )


def tool_slow() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        await sleep(params["ms"], signal)
        if signal is not None and signal.aborted:
            raise RuntimeError(f"slow {params['value']} aborted")
        return AgentToolResult(
            content=text(f"slow: {params['value']}"), details={"value": params["value"], "ms": params["ms"]}
        )

    return AgentTool(
        name="slow",
        label="Slow",
        description="Waits ms milliseconds (abort-aware)",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "string"}, "ms": {"type": "integer"}},
            "required": ["value", "ms"],
        },
        execute=execute,
    )


def tool_progress() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        steps = params["steps"]
        for step in range(1, steps + 1):
            if on_update is not None:
                on_update({"content": [{"type": "text", "text": f"step {step}/{steps}"}], "details": {"step": step}})
            await sleep(2)
        if params.get("late") and on_update is not None:
            asyncio.get_running_loop().call_later(
                0.001, lambda: on_update(AgentToolResult(content=text("late"), details={"late": True}))
            )
        return AgentToolResult(content=text(f"progress done: {steps}"), details={"steps": steps})

    return AgentTool(
        name="progress",
        label="Progress",
        description="Reports progress",
        parameters={
            "type": "object",
            "properties": {"steps": {"type": "integer"}, "late": {"type": "boolean"}},
            "required": ["steps"],
        },
        execute=execute,
    )


def tool_coerce() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        received: dict[str, Any] = {}
        types: dict[str, str] = {}
        for key in ("count", "flag", "n", "label"):
            if key in params:
                received[key] = params[key]
                types[key] = js_type(params[key])
        return AgentToolResult(
            content=text(js_stringify({"received": received, "types": types})),
            details={"received": received, "types": types},
        )

    return AgentTool(
        name="coerce",
        label="Coerce",
        description="Reports the types it received",
        parameters={
            "type": "object",
            "properties": {
                "count": {"type": "number"},
                "flag": {"type": "boolean"},
                "n": {"type": "integer"},
                "label": {"type": "string"},
            },
            "required": ["count", "flag", "n"],
        },
        execute=execute,
    )


def tool_seq() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        if params.get("ms"):
            await sleep(params["ms"], signal)
        return AgentToolResult(content=text(f"seq: {params['value']}"), details={"value": params["value"]})

    return AgentTool(
        name="seq",
        label="Sequential",
        description="Forces sequential execution",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "string"}, "ms": {"type": "integer"}},
            "required": ["value"],
        },
        execution_mode="sequential",
        execute=execute,
    )


def tool_wait_abort() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        if on_update is not None:
            on_update(AgentToolResult(content=text("waiting"), details={}))
        await sleep(3000, signal)
        if signal is not None and signal.aborted:
            raise RuntimeError("wait_abort: aborted")
        return AgentToolResult(content=text("wait_abort: not aborted"), details={})

    return AgentTool(
        name="wait_abort",
        label="Wait for abort",
        description="Reports progress, then waits until the run is aborted",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )


def tool_image() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=[ImageContent(data="iVBORw0KGgo=", mime_type="image/png"), *text("a tiny picture")]
        )

    return AgentTool(
        name="image",
        label="Image",
        description="Returns an image and a caption, without details",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )


def tool_strict() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=text(f"strict: {js_stringify(params)}"), details=params)

    return AgentTool(
        name="strict",
        label="Strict",
        description="A schema with enum, bounds, pattern and no additional properties",
        parameters={
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "level": {"type": "integer", "minimum": 1, "maximum": 5},
                "name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            },
            "required": ["mode", "level"],
            "additionalProperties": False,
        },
        execute=execute,
    )


def tool_edit() -> AgentTool:
    def prepare_arguments(args: Any) -> Any:
        if isinstance(args, dict) and "edits" not in args and "oldText" in args:
            return {"edits": [{"oldText": args["oldText"], "newText": args.get("newText")}]}
        return args

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        edits = params["edits"]
        summary = ", ".join(f"{e['oldText']}->{e['newText']}" for e in edits)
        return AgentToolResult(content=text(f"edited {len(edits)}: {summary}"), details={"edits": edits})

    return AgentTool(
        name="edit",
        label="Edit",
        description="Applies edits (accepts the legacy oldText/newText form)",
        parameters={
            "type": "object",
            "properties": {
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                        "required": ["oldText", "newText"],
                    },
                }
            },
            "required": ["edits"],
        },
        prepare_arguments=prepare_arguments,
        execute=execute,
    )


STEP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "updates": {"type": "integer"},
        "ms": {"type": "integer"},
        "after": {"type": "integer"},
        "fail": {"type": "boolean"},
        "terminate": {"type": "boolean"},
    },
    "required": ["id"],
}


def step_update(on_update: Any, step_id: str, label: str, count: int | None) -> None:
    for i in range(1, (count or 0) + 1):
        if on_update is not None:
            on_update(
                {"content": [{"type": "text", "text": f"{step_id} {label} {i}"}], "details": {"id": step_id, label: i}}
            )


def step_result(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("fail"):
        raise RuntimeError(f"{params['id']} failed")
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": f"{params['id']} done"}],
        "details": {"id": params["id"]},
    }
    if params.get("terminate"):
        result["terminate"] = True
    return result


def tool_step() -> AgentTool:
    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
        step_update(on_update, params["id"], "update", params.get("updates"))
        if params.get("ms"):
            await sleep(params["ms"], signal)
            step_update(on_update, params["id"], "after", params.get("after"))
            if signal is not None and signal.aborted:
                raise RuntimeError(f"{params['id']} aborted")
        return step_result(params)

    return AgentTool(
        name="step",
        label="Step",
        description="Updates, an optional abort-aware wait with later updates, then fails, returns or terminates",
        parameters=STEP_PARAMETERS,
        execute=execute,
    )


def tool_sync_step() -> AgentTool:
    def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any) -> Any:
        step_update(on_update, params["id"], "update", params.get("updates"))
        return step_result(params)

    return AgentTool(
        name="sync_step",
        label="Synchronous step",
        description="A plain (not async) function: updates, then throws, returns or terminates",
        parameters=STEP_PARAMETERS,
        execute=execute,
    )


TOOL_FACTORIES: dict[str, Callable[[], AgentTool]] = {
    "step": tool_step,
    "sync_step": tool_sync_step,
    "echo": tool_echo,
    "fail": tool_fail,
    "finish": tool_finish,
    "slow": tool_slow,
    "progress": tool_progress,
    "coerce": tool_coerce,
    "seq": tool_seq,
    "wait_abort": tool_wait_abort,
    "image": tool_image,
    "strict": tool_strict,
    "edit": tool_edit,
}


# ---------------------------------------------------------------------------------------------
# One scenario


def make_block(block: dict[str, Any]) -> Any:
    kind = block["type"]
    if kind == "text":
        return faux_text(block["text"])
    if kind == "thinking":
        return faux_thinking(block["thinking"])
    if kind == "toolCall":
        return faux_tool_call(block["name"], copy.deepcopy(block["arguments"]), id=block.get("id"))
    raise ValueError(f"unknown block {block!r}")


def make_response(spec: dict[str, Any], trace: dict[str, Any]) -> Any:
    if "throw" in spec:
        message_text = spec["throw"]

        def raising(*_: Any) -> Any:
            raise RuntimeError(message_text)

        return raising
    content = spec["content"]
    blocks: Any = content if isinstance(content, str) else [make_block(block) for block in content]
    message = faux_assistant_message(
        blocks, stop_reason=spec.get("stopReason", "stop"), error_message=spec.get("errorMessage")
    )
    if spec.get("viaFunction"):

        async def step(context: Any, options: Any, state: Any, model: Any) -> Any:
            trace["hooks"].append(
                {
                    "hook": "responseFunction",
                    "callCount": state.call_count,
                    "model": model.id,
                    "roles": [role(m) for m in context.messages],
                }
            )
            return message

        return step
    return message


def partial_shape(message: Any) -> dict[str, Any]:
    content = []
    for block in message.content:
        if block.type == "toolCall":
            content.append({"type": block.type, "id": block.id, "name": block.name})
        else:
            content.append({"type": block.type})
    return {"role": message.role, "stopReason": message.stop_reason, "content": content}


def matches(where: dict[str, Any] | None, event: Any) -> bool:
    if not where:
        return True
    for key, expected in where.items():
        message = getattr(event, "message", None)
        if key == "role":
            actual = role(message) if message is not None else None
        elif key == "toolName":
            actual = getattr(event, "tool_name", None)
        elif key == "toolCallId":
            actual = getattr(event, "tool_call_id", None)
        elif key == "assistantEvent":
            ame = getattr(event, "assistant_message_event", None)
            actual = ame.type if ame is not None else None
        elif key == "stopReason":
            actual = field(message, "stop_reason", "stopReason") if message is not None else None
        else:
            raise ValueError(f"unknown trigger filter {key}")
        if actual != expected:
            return False
    return True


async def run_scenario(scenario: dict[str, Any]) -> dict[str, Any]:
    trace: dict[str, Any] = {"events": [], "hooks": [], "contexts": []}
    faux_options = scenario.get("faux") or {}
    faux = register_faux_provider(
        api=faux_options.get("api"),
        models=faux_options.get("models"),
        tokens_per_second=faux_options.get("tokensPerSecond"),
        token_size=faux_options.get("tokenSize") or {"min": 2, "max": 2},
    )
    try:
        faux.set_responses([make_response(r, trace) for r in scenario.get("responses") or []])

        def model_for(model_id: str | None) -> Any:
            model = faux.get_model(model_id)
            if model is None:
                raise ValueError(f"no faux model {model_id}")
            return model

        state = scenario.get("state") or {}
        options = scenario.get("options") or {}
        hooks = options.get("hooks") or {}
        agent_ref: list[Agent] = []

        kwargs: dict[str, Any] = {
            "initial_state": {
                "system_prompt": state.get("systemPrompt"),
                "model": None if state.get("noModel") else model_for(state.get("model")),
                "thinking_level": state.get("thinkingLevel"),
                "tools": [TOOL_FACTORIES[name]() for name in state.get("tools") or []],
                "messages": [make_message(m) for m in state.get("messages") or []],
            },
        }
        for key, name in (
            ("toolExecution", "tool_execution"),
            ("steeringMode", "steering_mode"),
            ("followUpMode", "follow_up_mode"),
            ("sessionId", "session_id"),
            ("transport", "transport"),
            ("thinkingBudgets", "thinking_budgets"),
            ("maxRetryDelayMs", "max_retry_delay_ms"),
        ):
            if options.get(key) is not None:
                kwargs[name] = options[key]

        if not options.get("defaultStreamFn"):

            def stream_fn(model: Any, context: Any, stream_options: Any) -> Any:
                budgets = getattr(stream_options, "thinking_budgets", None)
                trace["contexts"].append(
                    {
                        "model": model.id,
                        "systemPrompt": context.system_prompt,
                        "messages": norm(list(context.messages)),
                        "tools": [tool.name for tool in context.tools or []],
                        "options": {
                            "apiKey": stream_options.api_key,
                            "sessionId": stream_options.session_id,
                            "reasoning": stream_options.reasoning,
                            "transport": stream_options.transport,
                            "thinkingBudgets": (
                                {k: v for k, v in to_json(budgets).items() if v is not None}
                                if budgets is not None
                                else None
                            ),
                            "maxRetryDelayMs": stream_options.max_retry_delay_ms,
                            "signalAborted": stream_options.signal.aborted if stream_options.signal else None,
                        },
                    }
                )
                return stream_simple(model, context, stream_options)

            kwargs["stream_fn"] = stream_fn

        if hooks.get("beforeToolCall") is not None:
            before_rules = hooks["beforeToolCall"]

            async def before_tool_call(ctx: Any, signal: Any) -> Any:
                messages = ctx.context.messages
                trace["hooks"].append(
                    {
                        "hook": "beforeToolCall",
                        "toolCallId": ctx.tool_call.id,
                        "toolName": ctx.tool_call.name,
                        "args": norm(ctx.args),
                        "rawArgs": norm(ctx.tool_call.arguments),
                        "callInAssistant": any(block is ctx.tool_call for block in ctx.assistant_message.content),
                        "contextTailRole": role(messages[-1]) if messages else None,
                        "signalAborted": signal.aborted if signal is not None else None,
                    }
                )
                rule = next((r for r in before_rules if r["tool"] in (ctx.tool_call.name, "*")), None)
                if rule is None:
                    return None
                if "raise" in rule:
                    raise RuntimeError(rule["raise"])
                if rule.get("setArgs"):
                    ctx.args.update(copy.deepcopy(rule["setArgs"]))
                if rule.get("abort"):
                    agent_ref[0].abort()
                if "block" in rule:
                    if "reason" in rule:
                        return BeforeToolCallResult(block=rule["block"], reason=rule["reason"])
                    return {"block": rule["block"]}  # a plain dict works too
                return None

            kwargs["before_tool_call"] = before_tool_call

        if hooks.get("afterToolCall") is not None:
            after_rules = hooks["afterToolCall"]

            async def after_tool_call(ctx: Any, signal: Any) -> Any:
                trace["hooks"].append(
                    {
                        "hook": "afterToolCall",
                        "toolCallId": ctx.tool_call.id,
                        "toolName": ctx.tool_call.name,
                        "args": norm(ctx.args),
                        "result": norm(ctx.result),
                        "isError": ctx.is_error,
                        "signalAborted": signal.aborted if signal is not None else None,
                    }
                )
                rule = next((r for r in after_rules if r["tool"] in (ctx.tool_call.name, "*")), None)
                if rule is None:
                    return None
                if "raise" in rule:
                    raise RuntimeError(rule["raise"])
                override = rule.get("override")
                if not override:
                    return None
                content = override.get("content")
                if "isError" in override:  # a plain dict with pi's camelCase keys works too
                    return copy.deepcopy(override)
                return AfterToolCallResult(
                    content=AgentToolResult.model_validate({"content": content}).content
                    if content is not None
                    else None,
                    details=copy.deepcopy(override.get("details")),
                    is_error=override.get("isError"),
                    terminate=override.get("terminate"),
                )

            kwargs["after_tool_call"] = after_tool_call

        if hooks.get("getApiKey") is not None:
            keys = hooks["getApiKey"]["keys"]
            key_calls = [0]

            async def get_api_key(provider: str) -> Any:
                trace["hooks"].append({"hook": "getApiKey", "provider": provider})
                key = keys[min(key_calls[0], len(keys) - 1)]
                key_calls[0] += 1
                if key == "<raise>":
                    raise RuntimeError("getApiKey failed")
                return key

            kwargs["get_api_key"] = get_api_key

        if hooks.get("transformContext") is not None:
            keep_last = hooks["transformContext"]["keepLast"]

            async def transform_context(messages: list[Any], signal: Any) -> list[Any]:
                trace["hooks"].append(
                    {
                        "hook": "transformContext",
                        "count": len(messages),
                        "roles": [role(m) for m in messages],
                        "signalIsAgentSignal": signal is agent_ref[0].signal,
                        "signalAborted": signal.aborted if signal is not None else None,
                    }
                )
                return messages[-keep_last:]

            kwargs["transform_context"] = transform_context

        if hooks.get("convertToLlm") is not None:
            mode = hooks["convertToLlm"].get("mode")

            async def convert_to_llm(messages: list[Any]) -> list[Any]:
                trace["hooks"].append(
                    {"hook": "convertToLlm", "count": len(messages), "roles": [role(m) for m in messages]}
                )
                if mode == "raise":
                    raise RuntimeError("convertToLlm failed")
                out: list[Any] = []
                for m in messages:
                    if role(m) in ("user", "assistant", "toolResult"):
                        out.append(m)
                    elif role(m) == "notification" and mode == "customToUser":
                        out.append(
                            to_message(
                                {
                                    "role": "user",
                                    "content": [{"type": "text", "text": f"[notification] {field(m, 'text')}"}],
                                    "timestamp": field(m, "timestamp"),
                                }
                            )
                        )
                return out

            kwargs["convert_to_llm"] = convert_to_llm

        if hooks.get("onResponse") is not None:

            async def on_response(response: Any, model: Any) -> None:
                trace["hooks"].append(
                    {"hook": "onResponse", "status": response.status, "headers": response.headers, "model": model.id}
                )

            kwargs["on_response"] = on_response

        if hooks.get("prepareNextTurn") is not None:
            updates = hooks["prepareNextTurn"]["updates"]
            turn_calls = [0]

            async def prepare_next_turn(signal: Any) -> Any:
                update = updates[turn_calls[0]] if turn_calls[0] < len(updates) else None
                turn_calls[0] += 1
                trace["hooks"].append(
                    {
                        "hook": "prepareNextTurn",
                        "call": turn_calls[0],
                        "signalIsAgentSignal": signal is agent_ref[0].signal,
                    }
                )
                if not update:
                    return None
                if "model" not in update:  # a plain dict with pi's camelCase keys works too
                    return {"thinkingLevel": update.get("thinkingLevel")}
                return AgentLoopTurnUpdate(model=model_for(update["model"]), thinking_level=update.get("thinkingLevel"))

            kwargs["prepare_next_turn"] = prepare_next_turn

        agent = Agent(**kwargs)
        agent_ref.append(agent)

        def snapshot() -> dict[str, Any]:
            streaming = agent.state.streaming_message
            return {
                "isStreaming": agent.state.is_streaming,
                "streamingRole": role(streaming) if streaming is not None else None,
                "pendingToolCalls": sorted(agent.state.pending_tool_calls),
                "errorMessage": agent.state.error_message,
                "messageCount": len(agent.state.messages),
            }

        def recorder(event: Any, signal: Any) -> None:
            record: dict[str, Any] = {"type": event.type}
            kind = event.type
            if kind in ("message_start", "message_end"):
                record["message"] = norm(event.message)
            elif kind == "message_update":
                record["message"] = (
                    norm(event.message) if scenario.get("recordPartialText") else partial_shape(event.message)
                )
                e = event.assistant_message_event
                ame: dict[str, Any] = {"type": e.type}
                for attr, key in (
                    ("content_index", "contentIndex"),
                    ("delta", "delta"),
                    ("content", "content"),
                    ("tool_call", "toolCall"),
                    ("reason", "reason"),
                ):
                    value = getattr(e, attr, None)
                    if value is not None:
                        ame[key] = value
                record["assistantMessageEvent"] = norm(ame)
            elif kind == "turn_end":
                record["message"] = norm(event.message)
                record["toolResults"] = norm(list(event.tool_results))
            elif kind == "agent_end":
                record["messages"] = norm(list(event.messages))
            elif kind == "tool_execution_start":
                record.update(toolCallId=event.tool_call_id, toolName=event.tool_name, args=norm(event.args))
            elif kind == "tool_execution_update":
                record.update(
                    toolCallId=event.tool_call_id,
                    toolName=event.tool_name,
                    args=norm(event.args),
                    partialResult=norm(event.partial_result),
                )
            elif kind == "tool_execution_end":
                record.update(
                    toolCallId=event.tool_call_id,
                    toolName=event.tool_name,
                    result=norm(event.result),
                    isError=event.is_error,
                )
            record["signalIsAgentSignal"] = signal is agent.signal
            record["signalAborted"] = signal.aborted
            record["state"] = snapshot()
            trace["events"].append(record)
            # Actions that need no waiting (abort, steer, ...) run here, right after the event is
            # recorded, as in run_reference.mjs.
            for index, trigger in due_triggers(event, True):
                trace["events"].append({"trigger": index, "result": run_immediate_action(trigger["do"])})

        agent.subscribe(recorder)

        triggers = [dict(t, seen=0, fired=False) for t in scenario.get("triggers") or []]

        def is_immediate(action: dict[str, Any]) -> bool:
            waiting = ("raise", "prompt", "promptMessages")
            return (
                not any(key in action for key in waiting)
                and not action.get("continue")
                and not action.get("waitForIdle")
            )

        def due_triggers(event: Any, immediate: bool) -> list[tuple[int, dict[str, Any]]]:
            due = []
            for index, trigger in enumerate(triggers):
                if is_immediate(trigger["do"]) != immediate:
                    continue
                if trigger["fired"] or trigger["on"] != event.type or not matches(trigger.get("where"), event):
                    continue
                trigger["seen"] += 1
                if trigger["seen"] != trigger.get("nth", 1):
                    continue
                trigger["fired"] = True
                due.append((index, trigger))
            return due

        def run_immediate_action(action: dict[str, Any]) -> dict[str, Any]:
            running = run_action(action)
            try:
                running.send(None)
            except StopIteration as stop:
                result: dict[str, Any] = stop.value
                return result
            running.close()
            raise RuntimeError(f"the action {action} did not finish at once")

        if any(not is_immediate(trigger["do"]) for trigger in triggers):

            async def trigger_listener(event: Any, signal: Any) -> None:
                for index, trigger in due_triggers(event, False):
                    action = trigger["do"]
                    if "raise" in action:
                        trace["events"].append({"trigger": index, "result": {"raised": action["raise"]}})
                        raise RuntimeError(action["raise"])
                    result = await run_action(action)
                    trace["events"].append({"trigger": index, "result": result})

            agent.subscribe(trigger_listener)

        async def run_action(action: dict[str, Any]) -> dict[str, Any]:
            try:
                if "prompt" in action:
                    images = action.get("images")
                    await agent.prompt(
                        action["prompt"],
                        [ImageContent.model_validate(i) for i in images] if images is not None else None,
                    )
                elif "promptMessages" in action:
                    messages = [make_message(m) for m in action["promptMessages"]]
                    await agent.prompt(messages[0] if action.get("single") else messages)
                elif action.get("continue"):
                    await agent.continue_()
                elif "steer" in action:
                    agent.steer(make_message(action["steer"]))
                elif "followUp" in action:
                    agent.follow_up(make_message(action["followUp"]))
                elif action.get("abort"):
                    agent.abort()
                elif action.get("reset"):
                    agent.reset()
                elif action.get("clear"):
                    if action["clear"] == "steering":
                        agent.clear_steering_queue()
                    elif action["clear"] == "followUp":
                        agent.clear_follow_up_queue()
                    else:
                        agent.clear_all_queues()
                elif "set" in action:
                    for key, value in action["set"].items():
                        if key == "steeringMode":
                            agent.steering_mode = value
                        elif key == "followUpMode":
                            agent.follow_up_mode = value
                        elif key == "sessionId":
                            agent.session_id = value
                        elif key == "toolExecution":
                            agent.tool_execution = value
                        elif key == "systemPrompt":
                            agent.state.system_prompt = value
                        elif key == "thinkingLevel":
                            agent.state.thinking_level = value
                        elif key == "model":
                            agent.state.model = model_for(value)
                        elif key == "tools":
                            agent.state.tools = [TOOL_FACTORIES[name]() for name in value]
                        else:
                            raise ValueError(f"unknown setting {key}")
                elif "appendResponses" in action:
                    faux.append_responses([make_response(r, trace) for r in action["appendResponses"]])
                elif action.get("waitForIdle"):
                    await agent.wait_for_idle()
                else:
                    raise ValueError(f"unknown action {action!r}")
                return {"ok": True, "hasQueuedMessages": agent.has_queued_messages()}
            except Exception as error:
                return {"error": error_text(error)}

        for index, action in enumerate(scenario.get("actions") or []):
            result = await run_action(action)
            trace["events"].append({"action": index, "result": result})
        await agent.wait_for_idle()

        trace["final"] = {
            "messages": norm(list(agent.state.messages)),
            **snapshot(),
            "streamingMessage": norm(agent.state.streaming_message),
            "hasQueuedMessages": agent.has_queued_messages(),
            "signalIsNone": agent.signal is None,
            "steeringMode": agent.steering_mode,
            "followUpMode": agent.follow_up_mode,
            "model": norm(agent.state.model),
            "thinkingLevel": agent.state.thinking_level,
            "systemPrompt": agent.state.system_prompt,
            "tools": [tool.name for tool in agent.state.tools],
            "callCount": faux.state.call_count,
            "pendingResponseCount": faux.pending_response_count(),
        }
        return trace
    finally:
        faux.unregister()


# ---------------------------------------------------------------------------------------------


def load_scenarios(paths: list[str]) -> list[dict[str, Any]]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix == ".json"))
        else:
            files.append(path)
    scenarios: list[dict[str, Any]] = []
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        scenarios.extend(data if isinstance(data, list) else [data])
    return scenarios


async def main(argv: list[str]) -> None:
    only: set[str] | None = None
    paths: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--only":
            only = set(next(args).split(","))
        else:
            paths.append(arg)
    results: dict[str, Any] = {}
    for scenario in load_scenarios(paths):
        if only is not None and scenario["name"] not in only:
            continue
        try:
            results[scenario["name"]] = await asyncio.wait_for(run_scenario(scenario), SCENARIO_TIMEOUT_S)
        except TimeoutError:
            results[scenario["name"]] = {"runnerError": f"scenario timed out after {int(SCENARIO_TIMEOUT_S * 1000)} ms"}
        except Exception as error:
            results[scenario["name"]] = {"runnerError": f"{type(error).__name__}: {error}"}
    sys.stdout.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
