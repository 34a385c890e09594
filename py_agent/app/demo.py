"""The offline demo model: pi's faux provider with scripted, paced replies.

It lets anyone try the interface without a key: replies stream at a visible pace, render Markdown
and code, show a thinking block when a thinking level is set, and can demonstrate a failure
(ask it for an "error") so that retry can be tried. It never makes a network request.

It is also a scripted *agent* (:data:`AGENT_SCRIPTS`): asked to show "the agent at work" (or to
analyse, chart, or run subagents in parallel), it calls the session's real tools one step per
reply: writes a sample CSV, runs Python on it (a table and a summary), runs JavaScript that draws
an SVG chart (the workspace panel previews it), and runs two subagents in parallel, which are this
same model answering ``"Task: ..."`` (:func:`_child_reply`). Each step is chosen from the
conversation alone (the replies since the last user message), so it needs no state; steps whose
tool the session lacks are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..ai import faux
from ..ai._interop import get_field
from ..ai.models import REQUIRES_API_KEY_FIELD, get_model, register_model
from ..ai.registry import ApiProvider, register_api_provider
from ..ai.types import (
    AssistantMessage,
    Context,
    Model,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    role_of,
)

__all__ = [
    "AGENT_SCRIPTS",
    "DEMO_MODEL_ID",
    "DEMO_MODEL_NAME",
    "DEMO_PROVIDER",
    "SAMPLE_CSV",
    "SAMPLE_CSV_PATH",
    "agent_script",
    "demo_model",
    "demo_reply",
    "register_demo_model",
]

DEMO_PROVIDER = "demo"
DEMO_MODEL_ID = "demo-scripted"
DEMO_MODEL_NAME = "Demo (scripted, offline)"
DEMO_API = "py-agent-demo"
DEFAULT_TOKENS_PER_SECOND = 90.0

_registration: faux.FauxProviderRegistration | None = None
_error_requests = 0


def _last_user_text(context: Context) -> str:
    for message in reversed(context.messages):
        if getattr(message, "role", None) != "user":
            continue
        content = message.content
        if isinstance(content, str):
            return content
        return " ".join(block.text for block in content if isinstance(block, TextContent))
    return ""


TOUR = """## Hello from the offline demo

This reply is **scripted**: no model and no network are involved. It shows what a real reply looks like here:

- Text *streams in* as it is generated, rendered as Markdown.
- Code is highlighted, and every code block has a copy button.
- Press **Stop** (or <kbd>Esc</kbd>) while a reply streams: the partial text is kept.
- Type while a reply streams: <kbd>Enter</kbd> queues your message as *steering* (delivered after the current step), \
<kbd>Alt</kbd>+<kbd>Enter</kbd> as a *follow-up* (delivered when the agent is done).

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"

print(greet("py-agent"))
```

| You want to…        | Do this                                   |
|---------------------|-------------------------------------------|
| use a real model    | pick one in the model menu below          |
| keep a conversation | nothing: it is saved in this browser      |
| move it to pi's CLI | export it as `.jsonl` from the menu       |

Ask me for **code**, a **long** answer, or an **error** to see those cases.
"""

CODE = """Here is a small, complete example:

```javascript
// Debounce: run `fn` only after `ms` quiet milliseconds.
export function debounce(fn, ms = 200) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
```

And the same idea in Python with asyncio:

```python
import asyncio

def debounce(fn, delay: float = 0.2):
    task: asyncio.Task | None = None

    def call(*args):
        nonlocal task
        if task is not None:
            task.cancel()
        task = asyncio.get_running_loop().create_task(_later(*args))

    async def _later(*args):
        await asyncio.sleep(delay)
        fn(*args)

    return call
```
"""


def _long_text() -> str:
    paragraphs = []
    topics = [
        "how the agent loop streams a reply",
        "why every message is saved the moment it ends",
        "how steering messages reach the model between steps",
        "what a branch is when you edit an earlier message",
        "how keys stay in this browser",
        "how a session moves to pi's command line as a .jsonl file",
    ]
    for index, topic in enumerate(topics * 2, start=1):
        paragraphs.append(
            f"**{index}.** A few words about {topic}. This paragraph is deliberately long, so that there is "
            "time to press Stop and see that the partial reply is kept, or to type a message that will be "
            "queued and delivered when the current reply ends."
        )
    return "## A long answer\n\n" + "\n\n".join(paragraphs)


# ---- the scripted agent ------------------------------------------------------------------------

SAMPLE_CSV_PATH = "data/sales.csv"
SAMPLE_CSV = """month,region,units,price
2026-01,North,120,9.50
2026-01,South,95,9.50
2026-01,West,60,11.00
2026-02,North,134,9.50
2026-02,South,101,9.50
2026-02,West,72,11.00
2026-03,North,150,9.00
2026-03,South,98,9.50
2026-03,West,88,11.00
"""
CHART_PATH = "chart.svg"

PYTHON_CODE = """import csv, json
from collections import defaultdict

rows = list(csv.DictReader(open("data/sales.csv")))
revenue, units = defaultdict(float), defaultdict(int)
for row in rows:
    revenue[row["region"]] += int(row["units"]) * float(row["price"])
    units[row["region"]] += int(row["units"])

print(f"{'region':<8}{'units':>7}{'revenue':>11}")
for region in sorted(revenue, key=revenue.get, reverse=True):
    print(f"{region:<8}{units[region]:>7}{revenue[region]:>11.2f}")
total = sum(revenue.values())
best = max(revenue, key=revenue.get)
share = revenue[best] / total
print(f"Summary: {len(rows)} rows, {len(revenue)} regions, revenue {total:.2f}; {best} leads with {share:.0%}.")
summary = {"revenue": revenue, "units": units, "total": round(total, 2), "best": best}
json.dump(summary, open("summary.json", "w"), indent=2)
"""

JAVASCRIPT_CODE = """const text = await workspace.read("data/sales.csv");
const totals = {};
for (const line of text.trim().split("\\n").slice(1)) {
  const [, region, units, price] = line.split(",");
  totals[region] = (totals[region] ?? 0) + Number(units) * Number(price);
}
const entries = Object.entries(totals).sort((a, b) => b[1] - a[1]);
const max = Math.max(...entries.map(([, value]) => value));
const bars = entries.map(([region, value], i) => {
  const width = Math.round((value / max) * 240);
  const y = 44 + i * 46;
  return `<text x="12" y="${y + 21}">${region}</text>` +
    `<rect x="72" y="${y}" width="${width}" height="32" rx="4" fill="#4a7cff"/>` +
    `<text x="${80 + width}" y="${y + 21}">${value.toFixed(0)}</text>`;
});
const height = 64 + entries.length * 46;
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="${height}" font-size="14"
  font-family="system-ui, sans-serif">
  <text x="12" y="26" font-size="16" font-weight="600">Revenue by region, Q1 2026</text>
  ${bars.join("\\n  ")}
</svg>`;
await workspace.write("chart.svg", svg);
console.log(`chart.svg: ${entries.length} bars`);
return entries.map(([region, value]) => `${region} ${value.toFixed(2)}`).join(", ");
"""

Step = Callable[["_Turn"], list[Any]]


class _Turn:
    """What the script reads from the conversation: the request, the tools, and the results so far."""

    def __init__(self, context: Context, options: SimpleStreamOptions) -> None:
        self.context = context
        self.options = options
        messages = list(context.messages)
        last_user = max((i for i, m in enumerate(messages) if role_of(m) == "user"), default=-1)
        since = messages[last_user + 1 :]
        self.replies = sum(1 for m in since if role_of(m) == "assistant")
        self.results: dict[str, tuple[str, bool]] = {}
        for message in since:
            if role_of(message) == "toolResult":
                name = str(get_field(message, "tool_name") or "")
                self.results[name] = (
                    _content_text(get_field(message, "content")),
                    bool(get_field(message, "is_error")),
                )
        self.tools = {str(get_field(tool, "name")) for tool in context.tools or []}
        self.request = _last_user_text(context)

    def thinking(self, text: str) -> list[Any]:
        return [ThinkingContent(thinking=text)] if self.options.reasoning else []


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(get_field(block, "text") or "") for block in content or [] if get_field(block, "type") == "text"
    )


def _call(turn: _Turn, thought: str, text: str, name: str, arguments: dict[str, Any]) -> list[Any]:
    return [*turn.thinking(thought), TextContent(text=text), faux.faux_tool_call(name, arguments)]


def _write_step(turn: _Turn) -> list[Any]:
    return _call(
        turn,
        "Start with data to work on: a small sales table, written with the write tool.",
        f"First, a small data file to work on: three months of sales in three regions, saved as `{SAMPLE_CSV_PATH}`.",
        "write",
        {"path": SAMPLE_CSV_PATH, "content": SAMPLE_CSV},
    )


def _python_step(turn: _Turn) -> list[Any]:
    return _call(
        turn,
        "Analyse the file with the python tool: revenue per region, a table and a one-line summary.",
        "Now Python (Pyodide, in a sandboxed worker of this page) reads the file, prints a table and a summary, "
        "and saves `summary.json`:",
        "python",
        {"title": "Summarising the sales", "code": PYTHON_CODE},
    )


def _javascript_step(turn: _Turn) -> list[Any]:
    return _call(
        turn,
        "Chart it with the javascript tool: an SVG bar chart, which the Files panel previews.",
        f"Next, JavaScript (a sandboxed worker) draws the totals as an SVG bar chart, `{CHART_PATH}`; "
        "the Files panel opens on it:",
        "javascript",
        {"title": "Drawing the chart", "code": JAVASCRIPT_CODE},
    )


def _subagent_step(turn: _Turn) -> list[Any]:
    second = CHART_PATH if "javascript" in turn.results else SAMPLE_CSV_PATH
    return _call(
        turn,
        "Delegate two checks to subagents, run in parallel, each with its own context.",
        "Finally, two subagents check the work in parallel, each in its own context with read-only tools:",
        "subagent",
        {
            "tasks": [
                {"agent": "scout", "task": f"Read {SAMPLE_CSV_PATH} and report what it holds."},
                {"agent": "reviewer", "task": f"Read {second} and check it."},
            ]
        },
    )


def _returned(output: str) -> str:
    """What a ``javascript`` run returned (its ``=> value`` line)."""
    return next((line[3:] for line in output.splitlines() if line.startswith("=> ")), "see its card")


def _final_step(turn: _Turn) -> list[Any]:
    lines: list[str] = []

    def outcome(name: str) -> tuple[str, bool] | None:
        return turn.results.get(name)

    if (result := outcome("write")) is not None:
        lines.append(
            f"**write** saved `{SAMPLE_CSV_PATH}`." if not result[1] else f"**write** failed: {result[0][:200]}"
        )
    if (result := outcome("python")) is not None:
        summary = next((line for line in result[0].splitlines() if line.startswith("Summary:")), "")
        lines.append(
            f"**python** read it and printed a table. {summary}"
            if summary and not result[1]
            else "**python** ran; its card shows what happened."
        )
    if (result := outcome("javascript")) is not None:
        lines.append(
            f"**javascript** drew `{CHART_PATH}` (totals: {_returned(result[0])}); "
            "the Files panel shows it in a sandboxed preview."
            if not result[1]
            else "**javascript** ran; its card shows what happened."
        )
    if (result := outcome("subagent")) is not None:
        lines.append("**subagent** ran a scout and a reviewer in parallel; their findings are in its card.")
    if not lines:
        text = (
            "This script needs the workspace tools, and they are turned off in this chat: turn them on in "
            "Settings → Tools, then ask again."
        )
    else:
        steps = "\n".join(f"{index}. {line}" for index, line in enumerate(lines, start=1))
        text = (
            f"## Done\n\n{steps}\n\nEvery card above is a real tool run in this page, and no request left it. "
            "Open **Files** to look at, rename, download or add files; pick a real model in the model menu to "
            "give the agent your own tasks."
        )
    return [*turn.thinking("Sum up what each tool did."), TextContent(text=text)]


AGENT_SCRIPTS: dict[str, tuple[tuple[str, Step], ...]] = {
    "tour": (
        ("write", _write_step),
        ("python", _python_step),
        ("javascript", _javascript_step),
        ("subagent", _subagent_step),
    ),
    "analyse": (("write", _write_step), ("python", _python_step)),
    "chart": (("write", _write_step), ("javascript", _javascript_step)),
    "parallel": (("write", _write_step), ("subagent", _subagent_step)),
}
"""The demo agent's scripts: each is the tool steps in order (a step whose tool the session lacks is
left out), then a summary of the results."""


def agent_script(request: str) -> str | None:
    """The script a request asks for (a key of :data:`AGENT_SCRIPTS`), or ``None``."""
    text = request.lower()
    if "agent at work" in text or "tools at work" in text:
        return "tour"
    if "subagent" in text or "in parallel" in text:
        return "parallel"
    if "chart" in text:
        return "chart"
    if re.search(r"\banaly[sz]e\b", text):
        return "analyse"
    return None


def _script_reply(name: str, turn: _Turn) -> list[Any]:
    steps: Sequence[Step] = [step for tool, step in AGENT_SCRIPTS[name] if tool in turn.tools]
    if turn.replies < len(steps):
        return steps[turn.replies](turn)
    return _final_step(turn)


_PATH = re.compile(r"[\w./-]+\.\w+")


def _child_reply(turn: _Turn) -> list[Any]:
    """A subagent's answer to ``"Task: ..."``: read the file the task names, then report on it."""
    match = _PATH.search(turn.request)
    path = match.group(0).rstrip(".") if match else None
    if path is not None and "read" in turn.tools and turn.replies == 0:
        return _call(turn, f"Read {path} first.", f"Reading `{path}`.", "read", {"path": path})
    result = turn.results.get("read")
    if path is None or result is None:
        return [TextContent(text="Nothing to check: the task names no file I can read.")]
    text, failed = result
    if failed:
        return [TextContent(text=f"Could not read `{path}`: {text[:300]}")]
    lines = [line for line in text.splitlines() if line.strip()]
    if path.endswith(".svg"):
        bars = text.count("<rect")
        return [TextContent(text=f"`{path}` is an SVG chart with {bars} bars, one per region; it looks right.")]
    if path.endswith(".csv") and lines:
        return [
            TextContent(
                text=f"`{path}` is a table of {len(lines) - 1} rows with the columns {lines[0].replace(',', ', ')}."
            )
        ]
    return [TextContent(text=f"`{path}` has {len(lines)} lines.")]


def _is_child_task(context: Context) -> bool:
    users = [m for m in context.messages if role_of(m) == "user"]
    return len(users) == 1 and _last_user_text(context).startswith("Task:")


def demo_reply(context: Context, options: SimpleStreamOptions) -> AssistantMessage:
    """The scripted reply to the conversation so far."""
    if _is_child_task(context):
        return faux.faux_assistant_message(_child_reply(_Turn(context, options)))
    script = agent_script(_last_user_text(context))
    if script is not None:
        turn = _Turn(context, options)
        content = _script_reply(script, turn)
        stop = "toolUse" if any(isinstance(block, ToolCall) for block in content) else "stop"
        return faux.faux_assistant_message(content, stop_reason=stop)
    text = _last_user_text(context).lower()
    blocks: list[Any] = []
    if options.reasoning:
        blocks.append(
            ThinkingContent(
                thinking=f"The user wrote {len(text.split())} words. This is the demo model, so the plan is "
                "simple: pick the scripted answer that fits, and stream it at a readable pace."
            )
        )
    stop_reason = "stop"
    error_message = None
    if "error" in text or "fail" in text:
        blocks.append(TextContent(text="Starting an answer, and then"))
        stop_reason = "error"
        error_message = (
            "Demo error: the scripted provider failed on purpose. Press Retry to try again "
            "(the demo answers normally the second time)."
        )
        global _error_requests
        _error_requests += 1
        if _error_requests % 2 == 0:  # every second attempt works, so Retry can be tried
            blocks = [b for b in blocks if isinstance(b, ThinkingContent)]
            blocks.append(TextContent(text="This time it worked: the retry produced this answer."))
            stop_reason, error_message = "stop", None
    elif "long" in text:
        blocks.append(TextContent(text=_long_text()))
    elif "code" in text:
        blocks.append(TextContent(text=CODE))
    elif context.messages and sum(1 for m in context.messages if getattr(m, "role", None) == "user") > 1:
        blocks.append(
            TextContent(
                text=f"You said: “{_last_user_text(context).strip()[:200]}”.\n\nThis is the scripted demo, so it "
                "cannot really answer. Pick a real model in the model menu to talk to a language model; "
                "your key is asked for at the first message."
            )
        )
    else:
        blocks.append(TextContent(text=TOUR))
    return faux.faux_assistant_message(blocks, stop_reason=stop_reason, error_message=error_message)


def register_demo_model(tokens_per_second: float = DEFAULT_TOKENS_PER_SECOND) -> Model:
    """Register the demo provider and its model (idempotent); returns the model."""
    global _registration
    existing = get_model(DEMO_PROVIDER, DEMO_MODEL_ID)
    if _registration is not None and existing is not None:
        _registration._tokens_per_second = tokens_per_second
        return existing
    registration = faux.register_faux_provider(
        api=DEMO_API,
        provider=DEMO_PROVIDER,
        models=[
            {
                "id": DEMO_MODEL_ID,
                "name": DEMO_MODEL_NAME,
                "reasoning": True,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 128000,
                "maxTokens": 16384,
            }
        ],
        tokens_per_second=tokens_per_second,
    )

    def stream(model: Model, context: Context, options: SimpleStreamOptions | None = None) -> Any:
        registration.set_responses([lambda ctx, opts, *_: demo_reply(ctx, opts)])
        return registration.stream(model, context, options)

    # Replaces the faux registration of DEMO_API with the same stream, fed with the script.
    register_api_provider(ApiProvider(DEMO_API, stream, stream), DEMO_API)
    _registration = registration
    model = registration.models[0].model_copy(update={"base_url": ""})
    extra = dict(model.model_extra or {})
    extra[REQUIRES_API_KEY_FIELD] = False
    data = {**model.model_dump(), **extra}
    return register_model(data)


def demo_model() -> Model:
    return get_model(DEMO_PROVIDER, DEMO_MODEL_ID) or register_demo_model()
