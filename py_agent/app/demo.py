"""The offline demo model: pi's faux provider with scripted, paced replies.

It lets anyone try the interface without a key: replies stream at a visible pace, render Markdown
and code, show a thinking block when a thinking level is set, and can demonstrate a failure
(ask it for an "error") so that retry can be tried. It never makes a network request.
"""

from __future__ import annotations

from typing import Any

from ..ai import faux
from ..ai.models import REQUIRES_API_KEY_FIELD, get_model, register_model
from ..ai.registry import ApiProvider, register_api_provider
from ..ai.types import AssistantMessage, Context, Model, SimpleStreamOptions, TextContent, ThinkingContent

__all__ = ["DEMO_MODEL_ID", "DEMO_MODEL_NAME", "DEMO_PROVIDER", "demo_model", "demo_reply", "register_demo_model"]

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


def demo_reply(context: Context, options: SimpleStreamOptions) -> AssistantMessage:
    """The scripted reply to the conversation so far."""
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
