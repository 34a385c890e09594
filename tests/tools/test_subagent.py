"""The ``subagent`` tool with the faux provider: single, parallel, chain, failures, abort, isolation.

Plain test functions (no fixtures), so the module also runs inside Pyodide.
"""

from __future__ import annotations

import asyncio
from typing import Any

from subagent_helpers import Seen, Updates, dummy_tool, host_for, make_faux, router, task_of, text_of

from py_agent.ai.abort import AbortController
from py_agent.ai.faux import faux_assistant_message, faux_tool_call
from py_agent.ai.types import Context, ToolResultMessage, UserMessage
from py_agent.core import Agent, AgentToolResult
from py_agent.core.types import AfterToolCallContext
from py_agent.tools.subagent import (
    MAX_CONCURRENCY,
    PER_TASK_OUTPUT_CAP,
    SubagentDetails,
    SubagentHost,
    collect_subagent_usage,
    create_subagent_tool,
    default_child_system_prompt,
    format_usage_stats,
    parse_subagent_details,
    subagent_after_tool_call,
    task_excerpt,
    truncate_head,
    truncate_model_output,
    truncate_parallel_output,
)
from py_agent.tools.subagent_definitions import AgentDefinition, AgentRegistry

SCOUT_BODY_START = "You are a scout."


async def run_tool(tool: Any, params: dict[str, Any], signal: Any = None, updates: Updates | None = None) -> Any:
    return await asyncio.wait_for(tool.execute("call-1", params, signal, updates), 10)


def details_of(result: AgentToolResult) -> SubagentDetails:
    details = parse_subagent_details(result.details)
    assert details is not None
    return details


# ---------------------------------------------------------------------------------------------
# single


async def test_single_task_returns_the_final_text_and_details() -> None:
    faux, model = make_faux()
    try:
        seen = Seen()
        faux.set_responses(router(lambda ctx: f"Found it: {task_of(ctx)}", seen))
        tool = create_subagent_tool(host_for(model, [dummy_tool("read"), dummy_tool("grep")]))
        updates = Updates()
        result = await run_tool(tool, {"agent": "scout", "task": "Find the auth code"}, updates=updates)

        assert result.content[0].text == "Found it: Find the auth code"
        details = details_of(result)
        assert details.mode == "single" and not details.is_error
        [child] = details.results
        assert child.agent == "scout" and child.agent_source == "builtin" and child.status == "completed"
        assert [m.role for m in child.messages] == ["user", "assistant"]
        assert text_of(child.messages[0]) == "Task: Find the auth code"
        assert child.stop_reason == "stop" and child.error_message is None
        assert child.usage.turns == 1 and child.usage.input > 0 and child.usage.output > 0
        assert child.model == f"{model.provider}/{model.id}"
        assert child.tools == ["read", "grep"]
        # progress: "(running...)" first, then the final text as the assistant message ends
        assert updates.texts[0] == "(running...)"
        assert updates.texts[-1] == "Found it: Find the auth code"
        assert all(u.details.mode == "single" for u in updates.items)
        assert faux.state.call_count == 1
    finally:
        faux.unregister()


async def test_child_context_holds_only_its_system_prompt_and_task() -> None:
    """Through a parent Agent with a transcript: the child sees its own system prompt and the task only."""
    faux, model = make_faux()
    try:
        seen = Seen()
        parent_secret = "PARENT-SECRET-HISTORY"

        def respond(ctx: Context) -> Any:
            if ctx.system_prompt == "You are the parent.":
                if any(getattr(m, "role", None) == "toolResult" for m in ctx.messages):
                    return "Parent done."
                return faux_assistant_message(
                    [faux_tool_call("subagent", {"agent": "scout", "task": "Find the read tool"}, id="call-sub")],
                    stop_reason="toolUse",
                )
            return "scout findings: read.py lines 1-40"

        faux.set_responses(router(respond, seen))
        history = [
            UserMessage(content=f"Earlier talk: {parent_secret}"),
            faux_assistant_message(f"Noted {parent_secret}."),
        ]
        parent = Agent(initial_state={"system_prompt": "You are the parent.", "model": model, "messages": history})
        parent.state.tools = [dummy_tool("read"), dummy_tool("write"), create_subagent_tool(parent)]
        await parent.prompt("Now delegate.")

        child_calls = [c for c in seen.calls if c["system_prompt"] != "You are the parent."]
        assert len(child_calls) == 1
        child = child_calls[0]
        # Only its own system prompt (base + the scout definition's body) ...
        registry = AgentRegistry()
        scout = registry.get("scout")
        assert scout is not None
        child_tools = [dummy_tool("read")]  # the scout's subset of the session's tools (read, grep, find, ls)
        expected_prompt = default_child_system_prompt(child_tools) + "\n\n" + scout.system_prompt
        assert child["system_prompt"] == expected_prompt
        assert SCOUT_BODY_START in child["system_prompt"]
        # ... and exactly one message: the task.
        assert len(child["messages"]) == 1
        assert child["messages"][0].role == "user"
        assert text_of(child["messages"][0]) == "Task: Find the read tool"
        dumped = repr(child)
        assert parent_secret not in dumped and "Now delegate." not in dumped and "You are the parent." not in dumped
        assert child["tools"] == ["read"]  # never `subagent`, never tools outside the definition's list

        # The parent sees only the tool result.
        tool_result = next(m for m in parent.state.messages if getattr(m, "role", None) == "toolResult")
        assert tool_result.tool_name == "subagent" and not tool_result.is_error
        assert tool_result.content[0].text == "scout findings: read.py lines 1-40"
        assert parent.state.messages[-1].content[0].text == "Parent done."
    finally:
        faux.unregister()


async def test_tools_are_the_definitions_subset_and_never_the_subagent_tool() -> None:
    faux, model = make_faux()
    try:
        seen = Seen()
        faux.set_responses(router(lambda ctx: "ok", seen))
        session_tools = [dummy_tool(n) for n in ("read", "write", "edit", "ls", "grep", "find", "python")]
        registry = AgentRegistry()
        registry.save(AgentDefinition(name="picky", description="d", tools=["python", "nope", "read", "python"]))
        tool = create_subagent_tool(host_for(model, session_tools), registry)
        session_tools.append(tool)  # the session's tool list includes the subagent tool itself
        result = await run_tool(
            tool,
            {
                "tasks": [
                    {"agent": "worker", "task": "w"},
                    {"agent": "picky", "task": "p"},
                    {"agent": "scout", "task": "s"},
                ]
            },
        )
        assert not details_of(result).is_error
        by_task = {text_of(c["messages"][0]): c["tools"] for c in seen.calls}
        assert by_task["Task: w"] == ["read", "write", "edit", "ls", "grep", "find", "python"]
        assert by_task["Task: p"] == ["python", "read"]  # definition order, unknown names ignored
        assert by_task["Task: s"] == ["read", "grep", "find", "ls"]
    finally:
        faux.unregister()


# ---------------------------------------------------------------------------------------------
# parallel


async def test_parallel_five_tasks_never_more_than_four_at_once() -> None:
    faux, model = make_faux()
    try:
        state = {"running": 0, "max": 0}

        async def respond(ctx: Context) -> str:
            state["running"] += 1
            state["max"] = max(state["max"], state["running"])
            await asyncio.sleep(0.02)
            state["running"] -= 1
            return f"result of {task_of(ctx)}"

        faux.set_responses(router(respond))
        tool = create_subagent_tool(host_for(model))
        updates = Updates()
        tasks = [{"agent": "scout", "task": f"t{i}"} for i in range(5)]
        result = await run_tool(tool, {"tasks": tasks}, updates=updates)

        assert state["max"] == MAX_CONCURRENCY == 4
        assert faux.state.call_count == 5
        text = result.content[0].text
        assert text.startswith("Parallel: 5/5 succeeded\n\n")
        sections = text.split("\n\n---\n\n")
        assert len(sections) == 5
        for i, section in enumerate(sections):
            assert section.endswith(f'### Task {i + 1} [scout] completed: "t{i}"\n\nresult of t{i}')
        details = details_of(result)
        assert details.mode == "parallel" and not details.is_error
        assert [r.task for r in details.results] == [f"t{i}" for i in range(5)]
        assert all(r.status == "completed" for r in details.results)
        # live progress, pi's wording
        assert "Parallel: 0/5 done, 4 running, 1 pending..." in updates.texts
        assert updates.texts[-1] == "Parallel: 5/5 done, 0 running, 0 pending..."
        assert any("1/5 done" in t for t in updates.texts)
        # update details are snapshots: later changes do not rewrite earlier updates
        first = updates.items[0].details
        assert first.mode == "parallel" and any(r.status == "pending" for r in first.results)
    finally:
        faux.unregister()


async def test_parallel_rejects_more_than_eight_tasks() -> None:
    faux, model = make_faux()
    try:
        faux.set_responses(router(lambda ctx: "x"))
        tool = create_subagent_tool(host_for(model))
        result = await run_tool(tool, {"tasks": [{"agent": "scout", "task": str(i)} for i in range(9)]})
        assert result.content[0].text == "Too many parallel tasks (9). Max is 8."
        assert details_of(result).is_error and faux.state.call_count == 0
    finally:
        faux.unregister()


async def test_three_tasks_to_one_agent_name_the_failed_one() -> None:
    faux, model = make_faux()
    tasks = [
        "Read src/parser.py and list every public function",
        "Read src/lexer.py and list every token kind it emits, including the ones only used in tests",
        "Read src/ast.py and list the node classes",
    ]

    def respond(ctx: Context) -> Any:
        if task_of(ctx) == tasks[1]:
            return faux_assistant_message("", stop_reason="error", error_message="context window exceeded")
        return f"done: {task_of(ctx)[:14]}"

    try:
        faux.set_responses(router(respond))
        tool = create_subagent_tool(host_for(model))
        result = await run_tool(tool, {"tasks": [{"agent": "scout", "task": task} for task in tasks]})
        text = result.content[0].text
        assert text.startswith("Parallel: 2/3 succeeded\n\n")
        sections = text.split("\n\n---\n\n")
        assert sections[0].endswith(f'### Task 1 [scout] completed: "{tasks[0]}"\n\ndone: Read src/parse')
        assert sections[1].startswith(
            '### Task 2 [scout] failed (error): "Read src/lexer.py and list every token kind it emits, includ…"'
            "\n\nError: context window exceeded"
        )
        assert sections[2] == f'### Task 3 [scout] completed: "{tasks[2]}"\n\ndone: Read src/ast.p'
        details = details_of(result)
        assert [r.status for r in details.results] == ["completed", "failed", "completed"]
        assert [r.task for r in details.results] == tasks  # the card numbers the children in this order
    finally:
        faux.unregister()


def test_task_excerpt() -> None:
    assert task_excerpt("  short task ") == '"short task"'
    assert task_excerpt("first line\nsecond line") == '"first line…"'
    assert task_excerpt("x" * 61) == '"' + "x" * 60 + '…"'
    assert task_excerpt("x" * 60) == '"' + "x" * 60 + '"'


async def test_parallel_failures_are_failed_tasks() -> None:
    faux, model = make_faux()
    try:

        def respond(ctx: Context) -> Any:
            if task_of(ctx) == "bad":
                return faux_assistant_message("partial", stop_reason="error", error_message="provider exploded")
            return "fine"

        faux.set_responses(router(respond))
        tool = create_subagent_tool(host_for(model))
        result = await run_tool(
            tool,
            {
                "tasks": [
                    {"agent": "scout", "task": "ok"},
                    {"agent": "scout", "task": "bad"},
                    {"agent": "ghost", "task": "x"},
                ]
            },
        )
        text = result.content[0].text
        assert text.startswith("Parallel: 1/3 succeeded\n\n")
        sections = text.split("\n\n---\n\n")
        assert sections[0].endswith('### Task 1 [scout] completed: "ok"\n\nfine')
        assert sections[1] == (
            '### Task 2 [scout] failed (error): "bad"\n\nError: provider exploded\n\nAssistant output: partial'
        )
        assert sections[2] == (
            '### Task 3 [ghost] failed: "x"\n\nError: Unknown agent: "ghost". Available agents: '
            '"scout", "planner", "reviewer", "worker".'
        )
        details = details_of(result)
        assert details.is_error
        assert [r.status for r in details.results] == ["completed", "failed", "failed"]
    finally:
        faux.unregister()


# ---------------------------------------------------------------------------------------------
# chain


async def test_chain_of_three_passes_previous_output() -> None:
    faux, model = make_faux()
    try:
        seen = Seen()
        outputs = {"scout": "FINDINGS-1", "planner": "PLAN-2", "worker": "DONE-3"}

        def respond(ctx: Context) -> str:
            for name, output in outputs.items():
                if _body_marker(name) in (ctx.system_prompt or ""):
                    return output
            raise AssertionError("unknown child")

        faux.set_responses(router(respond, seen))
        tool = create_subagent_tool(host_for(model))
        updates = Updates()
        result = await run_tool(
            tool,
            {
                "chain": [
                    {"agent": "scout", "task": "Find the read tool implementation"},
                    {"agent": "planner", "task": "Use these findings to propose a refactor plan:\n{previous}"},
                    {"agent": "worker", "task": "Implement the plan:\n{previous}"},
                ]
            },
            updates=updates,
        )
        assert result.content[0].text == "DONE-3"
        tasks = [text_of(c["messages"][0]) for c in seen.calls]
        assert tasks == [
            "Task: Find the read tool implementation",
            "Task: Use these findings to propose a refactor plan:\nFINDINGS-1",
            "Task: Implement the plan:\nPLAN-2",
        ]
        details = details_of(result)
        assert details.mode == "chain" and not details.is_error
        assert [(r.step, r.agent, r.status) for r in details.results] == [
            (1, "scout", "completed"),
            (2, "planner", "completed"),
            (3, "worker", "completed"),
        ]
        # chain progress carries the completed steps plus the running one
        last_step3 = [u for u in updates.items if len(u.details.results) == 3]
        assert last_step3 and last_step3[0].details.results[2].status == "running"
    finally:
        faux.unregister()


def _body_marker(name: str) -> str:
    definition = AgentRegistry().get(name)
    assert definition is not None
    return definition.system_prompt.split("\n", 1)[0]


async def test_chain_stops_at_a_failing_middle_step() -> None:
    faux, model = make_faux()
    try:
        seen = Seen()

        def respond(ctx: Context) -> Any:
            if _body_marker("planner") in (ctx.system_prompt or ""):
                return faux_assistant_message("half a plan", stop_reason="error", error_message="429 rate limited")
            return "FINDINGS"

        faux.set_responses(router(respond, seen))
        tool = create_subagent_tool(host_for(model))
        result = await run_tool(
            tool,
            {
                "chain": [
                    {"agent": "scout", "task": "look"},
                    {"agent": "planner", "task": "plan from {previous}"},
                    {"agent": "worker", "task": "do {previous}"},
                ]
            },
        )
        assert result.content[0].text == (
            'Chain stopped at step 2 (planner: "plan from {previous}"): '
            "Error: 429 rate limited\n\nAssistant output: half a plan"
        )
        assert faux.state.call_count == 2  # the worker never ran
        details = details_of(result)
        assert details.mode == "chain" and details.is_error
        assert [(r.step, r.agent, r.status) for r in details.results] == [
            (1, "scout", "completed"),
            (2, "planner", "failed"),
        ]
        assert details.results[0].messages[-1].content[0].text == "FINDINGS"
        assert details.results[1].task == "plan from FINDINGS"
        assert details.results[1].error_message == "429 rate limited"
    finally:
        faux.unregister()


async def test_failed_run_is_an_error_tool_result_through_the_after_hook() -> None:
    faux, model = make_faux()
    try:

        def respond(ctx: Context) -> Any:
            if ctx.system_prompt == "parent":
                if any(getattr(m, "role", None) == "toolResult" for m in ctx.messages):
                    return "I saw the failure and carried on."
                return faux_assistant_message(
                    [faux_tool_call("subagent", {"agent": "nobody", "task": "x"}, id="c1")], stop_reason="toolUse"
                )
            return "unused"

        faux.set_responses(router(respond))
        parent = Agent(
            initial_state={"system_prompt": "parent", "model": model},
            after_tool_call=subagent_after_tool_call,
        )
        parent.state.tools = [create_subagent_tool(parent)]
        await parent.prompt("go")
        roles = [m.role for m in parent.state.messages]
        assert roles == ["user", "assistant", "toolResult", "assistant"]
        tool_result = parent.state.messages[2]
        assert tool_result.is_error
        assert tool_result.content[0].text.startswith('Agent failed: Error: Unknown agent: "nobody".')
        assert parent.state.messages[-1].content[0].text == "I saw the failure and carried on."
        assert parent.state.error_message is None
    finally:
        faux.unregister()


def test_after_hook_leaves_other_tools_and_successes_alone() -> None:
    from py_agent.ai.types import AssistantMessage, ToolCall
    from py_agent.core.types import AgentContext

    assistant = AssistantMessage(api="x", provider="x", model="x")
    ok = AgentToolResult(details=SubagentDetails(mode="single", results=[], is_error=False))
    bad = AgentToolResult(details=SubagentDetails(mode="single", results=[], is_error=True).model_dump())
    context = AgentContext()
    call = ToolCall(id="1", name="subagent")
    other = ToolCall(id="2", name="read")
    assert subagent_after_tool_call(AfterToolCallContext(assistant, call, {}, ok, False, context)) is None
    assert subagent_after_tool_call(AfterToolCallContext(assistant, other, {}, bad, False, context)) is None
    marked = subagent_after_tool_call(AfterToolCallContext(assistant, call, {}, bad, False, context))
    assert marked is not None and marked.is_error is True


# ---------------------------------------------------------------------------------------------
# failures and abort


async def test_child_exceptions_are_failed_tasks_not_crashes() -> None:
    faux, model = make_faux()
    try:

        def respond(ctx: Context) -> Any:
            raise RuntimeError("step blew up")

        faux.set_responses(router(respond))

        def broken_factory(spec: Any) -> Agent:
            if spec.task == "no agent":
                raise ValueError("cannot build")
            return SubagentHost(model=model).create_agent(spec)

        tool = create_subagent_tool(host_for(model, agent_factory=broken_factory))
        result = await run_tool(
            tool, {"tasks": [{"agent": "worker", "task": "no agent"}, {"agent": "worker", "task": "stream fails"}]}
        )
        details = details_of(result)
        assert [r.status for r in details.results] == ["failed", "failed"]
        assert details.results[0].error_message == "Failed to start subagent: cannot build"
        assert details.results[1].error_message == "step blew up"
        assert details.results[1].stop_reason == "error"
        assert result.content[0].text.startswith("Parallel: 0/2 succeeded")
    finally:
        faux.unregister()


async def test_unknown_model_is_a_failed_task_and_models_resolve_per_definition() -> None:
    faux, model = make_faux(
        models=[{"id": "faux-main"}, {"id": "faux-small", "reasoning": True}],
    )
    try:
        seen = Seen()
        faux.set_responses(router(lambda ctx: "ok", seen))
        small = faux.get_model("faux-small")
        assert small is not None
        registry = AgentRegistry(builtins=False)
        registry.save(AgentDefinition(name="fast", description="d", model="faux-small"))
        registry.save(AgentDefinition(name="lost", description="d", model="nowhere/model-x"))
        registry.save(AgentDefinition(name="same", description="d"))

        def resolve(name: str, parent: Any) -> Any:
            return small if name == "faux-small" else None

        host = host_for(model, thinking_level="high", resolve_model=resolve)
        tool = create_subagent_tool(host, registry)
        result = await run_tool(
            tool,
            {
                "tasks": [
                    {"agent": "fast", "task": "a"},
                    {"agent": "lost", "task": "b"},
                    {"agent": "same", "task": "c"},
                ]
            },
        )
        details = details_of(result)
        assert [r.status for r in details.results] == ["completed", "failed", "completed"]
        assert details.results[0].model == f"{small.provider}/faux-small"
        assert details.results[1].error_message == 'Unknown model: "nowhere/model-x"'
        assert details.results[2].model == f"{model.provider}/faux-main"
        assert sorted(c["model"] for c in seen.calls) == ["faux-main", "faux-small"]
    finally:
        faux.unregister()


async def test_abort_during_a_parallel_run_stops_every_child() -> None:
    faux, model = make_faux()
    try:
        started: list[str] = []
        signals: list[Any] = []

        async def step(context: Context, options: Any, state: Any, m: Any) -> Any:
            started.append(task_of(context))
            signals.append(options.signal)
            await asyncio.wait_for(options.signal.wait(), 5)
            return faux_assistant_message("too late")

        faux.set_responses([step] * 10)
        tool = create_subagent_tool(host_for(model))
        controller = AbortController()
        updates = Updates()
        run = asyncio.ensure_future(
            run_tool(
                tool, {"tasks": [{"agent": "worker", "task": f"t{i}"} for i in range(5)]}, controller.signal, updates
            )
        )
        for _ in range(200):
            if len(started) == 4:
                break
            await asyncio.sleep(0.005)
        assert len(started) == 4
        controller.abort()
        result = await asyncio.wait_for(run, 5)

        assert all(s.aborted for s in signals)  # every running child's own signal was aborted
        assert faux.state.call_count == 4  # the fifth never started
        details = details_of(result)
        assert [r.status for r in details.results] == ["aborted"] * 5
        assert details.results[4].error_message == "Subagent was aborted before starting"
        assert details.results[4].messages == []
        assert all(r.stop_reason == "aborted" for r in details.results[:4])
        assert all(r.error_message == "Request was aborted" for r in details.results[:4])
        assert result.content[0].text.startswith("Parallel: 0/5 succeeded\n\n### Task 1 [worker] aborted (aborted): ")
        assert details.is_error
    finally:
        faux.unregister()


async def test_aborting_the_parent_agent_aborts_its_children() -> None:
    faux, model = make_faux()
    try:
        child_started = asyncio.Event()
        child_signals: list[Any] = []

        async def step(context: Context, options: Any, state: Any, m: Any) -> Any:
            if context.system_prompt == "parent":
                return faux_assistant_message(
                    [
                        faux_tool_call(
                            "subagent",
                            {"tasks": [{"agent": "worker", "task": "a"}, {"agent": "worker", "task": "b"}]},
                            id="c1",
                        )
                    ],
                    stop_reason="toolUse",
                )
            child_signals.append(options.signal)
            if len(child_signals) == 2:
                child_started.set()
            await asyncio.wait_for(options.signal.wait(), 5)
            return faux_assistant_message("late")

        faux.set_responses([step] * 10)
        parent = Agent(initial_state={"system_prompt": "parent", "model": model})
        parent.state.tools = [create_subagent_tool(parent)]
        run = asyncio.ensure_future(parent.prompt("go"))
        await asyncio.wait_for(child_started.wait(), 5)
        parent.abort()
        await asyncio.wait_for(run, 5)
        assert all(s.aborted for s in child_signals)
        tool_result = next(m for m in parent.state.messages if m.role == "toolResult")
        details = details_of(tool_result)  # type: ignore[arg-type]
        assert [r.status for r in details.results] == ["aborted", "aborted"]
        assert parent.state.messages[-1].stop_reason == "aborted"
    finally:
        faux.unregister()


# ---------------------------------------------------------------------------------------------
# parameters, confirmation, output caps, usage


async def test_invalid_parameters_list_the_available_agents() -> None:
    faux, model = make_faux()
    try:
        tool = create_subagent_tool(host_for(model))
        expected = (
            "Invalid parameters. Provide exactly one mode.\nAvailable agents: "
            "scout (builtin), planner (builtin), reviewer (builtin), worker (builtin)"
        )
        for params in ({}, {"agent": "scout"}, {"agent": "scout", "task": "x", "tasks": [{"agent": "a", "task": "b"}]}):
            result = await run_tool(tool, params)
            assert result.content[0].text == expected
            assert details_of(result).is_error
        assert faux.state.call_count == 0
    finally:
        faux.unregister()


async def test_imported_definitions_need_confirmation_before_first_use() -> None:
    faux, model = make_faux()
    try:
        faux.set_responses(router(lambda ctx: "imported agent ran"))
        registry = AgentRegistry()
        registry.import_markdown("---\nname: helper\ndescription: From a file\n---\nBe helpful.", origin="helper.md")
        assert registry.get("helper").status == "pending"  # type: ignore[union-attr]

        no_ui = create_subagent_tool(host_for(model), registry)
        result = await run_tool(no_ui, {"agent": "helper", "task": "x"})
        assert result.content[0].text == (
            'Agent failed: Error: Agent "helper" was imported and needs confirmation before it can run.'
        )

        asked: list[list[str]] = []

        def refuse(definitions: list[AgentDefinition]) -> bool:
            asked.append([d.name for d in definitions])
            return False

        refusing = create_subagent_tool(host_for(model), registry, confirm=refuse)
        result = await run_tool(
            refusing, {"chain": [{"agent": "scout", "task": "a"}, {"agent": "helper", "task": "b"}]}
        )
        assert result.content[0].text == "Canceled: imported agents not approved."
        assert asked == [["helper"]] and faux.state.call_count == 0

        async def accept(definitions: list[AgentDefinition]) -> bool:
            return True

        accepting = create_subagent_tool(host_for(model), registry, confirm=accept)
        result = await run_tool(accepting, {"agent": "helper", "task": "x"})
        assert result.content[0].text == "imported agent ran"
        assert registry.get("helper").status == "active"  # type: ignore[union-attr]
        # once confirmed it runs without asking
        result = await run_tool(no_ui, {"agent": "helper", "task": "y"})
        assert result.content[0].text == "imported agent ran"
    finally:
        faux.unregister()


async def test_outputs_are_capped_at_50_kb_with_a_marker() -> None:
    faux, model = make_faux()
    try:
        big = "x" * (PER_TASK_OUTPUT_CAP + 1000)
        faux.set_responses(router(lambda ctx: big if task_of(ctx) == "big" else "small"))
        tool = create_subagent_tool(host_for(model))
        single = await run_tool(tool, {"agent": "worker", "task": "big"})
        text = single.content[0].text
        assert text.startswith("[Output truncated: ")  # a single 51 KB line: pi keeps no partial line
        assert text.endswith("bytes omitted. Full output preserved in tool details.]")
        assert details_of(single).results[0].messages[-1].content[0].text == big  # full output in details

        parallel = await run_tool(
            tool, {"tasks": [{"agent": "worker", "task": "big"}, {"agent": "worker", "task": "s"}]}
        )
        body = parallel.content[0].text
        assert "x" * PER_TASK_OUTPUT_CAP + "\n\n[Output truncated: 1000 bytes omitted." in body
        assert body.endswith('### Task 2 [worker] completed: "s"\n\nsmall')
    finally:
        faux.unregister()


def test_truncation_helpers_match_pi() -> None:
    lines = "\n".join(f"line {i}" for i in range(3000))
    out = truncate_model_output(lines)
    kept, notice = out.rsplit("\n\n", 1)
    assert kept.split("\n")[-1] == "line 1997" and len(kept.split("\n")) == 1998
    assert notice.startswith("[Output truncated: ")
    assert truncate_model_output("short") == "short"
    head = truncate_head("a\nbb\nccc\n", max_lines=2)
    assert head.truncated and head.content == "a\nbb" and head.truncated_by == "lines"
    # multi-byte characters are never split
    emoji = "é" * (PER_TASK_OUTPUT_CAP // 2 + 10)
    capped = truncate_parallel_output(emoji)
    assert capped.startswith("é" * (PER_TASK_OUTPUT_CAP // 2) + "\n\n[Output truncated: 20 bytes omitted.")


async def test_children_usage_reaches_the_session_totals() -> None:
    faux, model = make_faux(
        models=[{"id": "priced", "cost": {"input": 1000000, "output": 1000000, "cacheRead": 0, "cacheWrite": 0}}]
    )
    try:

        def respond(ctx: Context) -> Any:
            if ctx.system_prompt == "parent":
                if any(getattr(m, "role", None) == "toolResult" for m in ctx.messages):
                    return "done"
                return faux_assistant_message(
                    [
                        faux_tool_call(
                            "subagent",
                            {"tasks": [{"agent": "worker", "task": "a"}, {"agent": "worker", "task": "b"}]},
                            id="c",
                        )
                    ],
                    stop_reason="toolUse",
                )
            return "child output"

        faux.set_responses(router(respond))
        parent = Agent(initial_state={"system_prompt": "parent", "model": model})
        ended: list[Any] = []
        parent.state.tools = [create_subagent_tool(parent, on_child_end=ended.append)]
        await parent.prompt("go")
        assert len(ended) == 2 and all(r.status == "completed" for r in ended)
        total = collect_subagent_usage(parent.state.messages)
        assert total.turns == 2
        assert total.input == sum(r.usage.input for r in ended) and total.input > 0
        assert total.output == sum(r.usage.output for r in ended)
        # the same from the JSON form (a reloaded session has plain dicts in details)
        dumped = [m.model_dump() for m in parent.state.messages]
        assert collect_subagent_usage(dumped) == total
        tool_result = ToolResultMessage.model_validate(dumped[2])
        again = parse_subagent_details(tool_result.details)
        assert again is not None and again.results[0].messages[0]["role"] == "user"
        assert format_usage_stats(total).startswith("2 turns ↑")
    finally:
        faux.unregister()


async def test_description_follows_the_registry() -> None:
    faux, model = make_faux()
    try:
        registry = AgentRegistry()
        tool = create_subagent_tool(host_for(model), registry)
        assert tool.description.startswith("Delegate tasks to specialized subagents with isolated context.")
        assert "worker (builtin): General-purpose subagent" in tool.description
        registry.save("---\nname: tester\ndescription: Writes tests\n---\nWrite tests.")
        assert "tester (user): Writes tests" in tool.description
        registry.delete("tester")
        assert "tester" not in tool.description
        tool.close()
        registry.save("---\nname: later\ndescription: x\n---\n")
        assert "later" not in tool.description
    finally:
        faux.unregister()
