"""Network and provider faults, in Chromium, against the app on a plain static server and
the mock provider server (two wire APIs: Anthropic Messages and OpenAI Chat Completions).

One booted page for the module. Each row of the fault matrix sends a message in a new chat while
the mock server injects the fault, then checks:

- a readable error in the chat (an explanation, not only a status code), or, for a fault that is
  retried automatically, a visible "retrying" notice and the reply after it;
- the transcript intact: the message, what arrived before the fault, saved in IndexedDB at once;
- Retry (or the conversation going on, for tool-call faults) works.

The last test reloads the page and opens every session of the matrix: everything is still there,
each error reply on its own branch next to the reply that worked, and nothing stored twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from reliability_helpers import GuardedApp, assert_no_duplicates, messages_of, open_guarded, wait_ready

from py_agent.testing.mock_server import MockProviderServer

KEY_CLAUDE = "sk-ant-faults-KEY-0001-abcdefgh"
KEY_CLAUDE_NEW = "sk-ant-faults-KEY-0002-replaced"
KEY_GPT = "sk-gpt-faults-KEY-0003-ijklmnop"
IDLE_TIMEOUT_S = 1.5
LONG = " ".join(f"w{i}" for i in range(400))


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[GuardedApp]:
    mock.stall_seconds = 8  # a "stall" fault without its own seconds
    gpt = {"id": "mock-gpt", "name": "Mock GPT"}
    with open_guarded(browser, base_url) as app:
        app.add_provider("Mock Claude", mock, [{"id": "mock-claude", "name": "Mock Claude"}], key=KEY_CLAUDE)
        app.add_provider("Mock GPT", mock, [gpt], api="openai-completions", key=KEY_GPT)
        yield app


MODELS = {"claude": ("mock claude", "Mock Claude"), "gpt": ("mock gpt", "Mock GPT")}


@dataclass
class Case:
    id: str
    provider: str
    script: list[dict[str, Any]]
    error: str | None = None
    """A regex the error shown in the chat must match (None: the reply succeeds after retries)."""
    notice: str | None = None
    """A regex a "retrying" notice must match."""
    requests: int | None = None
    """How many requests the fault takes (retries included)."""
    partial: bool = False
    """Text that arrived before the fault is kept."""
    tool: bool = False
    """A tool-call fault: the tool fails readably and the conversation goes on by itself."""
    key_dialog: bool = False
    """The provider rejected the key: the key dialog opens again for it."""
    min_seconds: float = 0.0


def http(status: int, repeat: int = 1, **fault: Any) -> dict[str, Any]:
    return {"fault": {"type": "http", "status": status, **fault}, "repeat": repeat}


def streamed(fault: str, after: int) -> dict[str, Any]:
    return {"text": LONG, "chunk_size": 6, "delay_ms": 15, "fault": {"type": fault, "after": after}}


CASES = [
    Case(
        "drop-mid-stream", "claude", [streamed("drop", 30)], error=r"connection to the provider was lost", partial=True
    ),
    Case(
        "drop-mid-stream-openai",
        "gpt",
        [streamed("drop", 30)],
        error=r"connection to the provider was lost",
        partial=True,
    ),
    Case(
        "stall-mid-stream",
        "claude",
        [streamed("stall", 30)],
        error=rf"sent nothing for {IDLE_TIMEOUT_S:g}s.*Settings",
        partial=True,
        min_seconds=IDLE_TIMEOUT_S,
    ),
    Case(
        "stall-before-headers",
        "claude",
        [{"fault": {"type": "stall_headers"}, "repeat": 4}],
        error=r"did not answer in time",
        notice=r"did not answer in time\. Retrying in .* \(attempt 1 of 3\)",
        requests=4,
        min_seconds=4 * IDLE_TIMEOUT_S,
    ),
    Case("401", "claude", [http(401)], error=r"HTTP 401.*invalid x-api-key", requests=1, key_dialog=True),
    Case("403", "claude", [http(403)], error=r"HTTP 403.*permission", requests=1, key_dialog=True),
    Case(
        "429-retry-after",
        "claude",
        [http(429, retry_after="1"), {"text": "Answer after the rate limit."}],
        notice=r"limiting requests \(429 Too Many Requests\)\. Retrying in 1 second as the server asked \(attempt 1 of 3\)",
        requests=2,
        min_seconds=1.0,
    ),
    Case(
        "429-backoff",
        "gpt",
        [http(429), {"text": "Answer after the backoff."}],
        notice=r"limiting requests.*Retrying in (under a second|1 second) \(attempt 1 of 3\)",
        requests=2,
    ),
    Case(
        "429-capped",
        "claude",
        [http(429, repeat=4, retry_after="0")],
        error=r"HTTP 429.*rate limit",
        notice=r"attempt 3 of 3",
        requests=4,
    ),
    Case(
        "429-delay-too-long",
        "claude",
        [http(429, retry_after="3600")],
        error=r"asked to wait 3600s .*\(60s\)",
        requests=1,
    ),
    Case("500", "claude", [http(500, repeat=4, retry_after="0")], error=r"HTTP 500.*Internal server error", requests=4),
    Case("503", "gpt", [http(503, repeat=4, retry_after="0")], error=r"HTTP 503.*overloaded", requests=4),
    Case(
        "503-once",
        "claude",
        [http(503, retry_after="0"), {"text": "Answer after one server error."}],
        notice=r"server error \(503\)",
        requests=2,
    ),
    Case("malformed", "claude", [streamed("malformed", 30)], error=r"sent data that could not be read", partial=True),
    Case(
        "malformed-openai", "gpt", [streamed("malformed", 30)], error=r"sent data that could not be read", partial=True
    ),
    Case("truncated", "claude", [streamed("truncate", 30)], error=r"cut off before its end", partial=True),
    Case("truncated-openai", "gpt", [streamed("truncate", 30)], error=r"cut off before its end", partial=True),
    Case(
        "invalid-tool-json",
        "claude",
        [{"tool_calls": [{"id": "call_bad_1", "name": "read", "raw_arguments": '{"path": ]]'}]}],
        error=r'Validation failed for tool "read"',
        tool=True,
    ),
    Case(
        "invalid-tool-json-openai",
        "gpt",
        [{"tool_calls": [{"id": "call_bad_2", "name": "read", "raw_arguments": '{"path": "a.txt", "offset": '}]}],
        error=r"File not found|not found|No such|no such file|does not exist",
        tool=True,
    ),
    Case(
        "tool-json-nested-too-deep",
        "claude",
        [{"tool_calls": [{"id": "call_deep_1", "name": "read", "raw_arguments": '{"path": ' + "[" * 20_000}]}],
        error=r'Validation failed for tool "read"',
        tool=True,
    ),
]

RECOVERY = "Recovered: this reply worked."


@dataclass
class Outcome:
    session_id: str
    user_text: str
    final_text: str
    error_text: str | None
    partial_text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


OUTCOMES: dict[str, Outcome] = {}


def test_stall_timeout_is_a_setting(app: GuardedApp) -> None:
    page = app.page
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Chat").click()
    field_ = page.locator("#idle-timeout")
    assert field_.input_value() == "120"
    field_.fill("0.2")
    field_.dispatch_event("change")
    page.locator("#idle-timeout-note", has_text="between 1 s and 60 minutes").wait_for()
    field_.fill(f"{IDLE_TIMEOUT_S:g}")
    field_.dispatch_event("change")
    page.locator("#idle-timeout-note", has_text="Saved.").wait_for()
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")
    assert app.py("init")["settings"]["idleTimeoutMs"] == int(IDLE_TIMEOUT_S * 1000)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fault(app: GuardedApp, mock: MockProviderServer, case: Case) -> None:
    page = app.page
    app.new_chat()
    query, label = MODELS[case.provider]
    app.choose_model(query, label)
    mock.reset()
    script = list(case.script)
    if case.tool:
        script.append({"text": RECOVERY})  # the model's answer to the failed tool call
    mock.script(script)
    toasts_before = len(app.toasts())
    text = f"Fault {case.id}: please answer"
    started = time.monotonic()
    app.type_and_enter(text)
    page.locator("#transcript .msg.user .user-text", has_text=text).wait_for()
    if case.key_dialog:
        dialog = page.locator("dialog[open]")
        dialog.locator("h2", has_text=f"API key for {label}").wait_for(timeout=15_000)
        assert "rejected the key" in dialog.inner_text()
    app.settle()
    elapsed = time.monotonic() - started
    session_id = app.current_session_id()
    if case.requests is not None:
        assert len(mock.requests) == case.requests, [r["path"] for r in mock.requests]
    if case.id == "stall-before-headers":
        # Each timed-out request was dropped by the browser too (not left holding a connection).
        assert all(mock.wait_closed(i, timeout=3) for i in range(len(mock.requests)))
    assert elapsed >= case.min_seconds
    notices = app.toasts()[toasts_before:]
    if case.notice:
        assert any(re.search(case.notice, n) for n in notices), notices
        assert KEY_CLAUDE not in " ".join(notices) and KEY_GPT not in " ".join(notices)

    reply = page.locator("#transcript .msg.assistant").last
    error_text = None
    partial_text = ""
    if case.tool:
        card = page.locator("#transcript details.tool").first
        assert card.get_attribute("data-status") == "error"
        card.locator("summary").click()
        error_text = card.locator(".tool-body").inner_text()
        assert re.search(case.error or "", error_text), error_text
        page.locator("#transcript .msg.assistant", has_text=RECOVERY).wait_for()
        final = RECOVERY
    elif case.error is None:
        assert page.locator("#transcript .msg-error").count() == 0
        final = case.script[-1]["text"]
        assert final in reply.inner_text()
    else:
        box = reply.locator(".msg-error[role='alert']")
        error_text = box.locator(".msg-error-text").inner_text()
        assert re.search(case.error, error_text, re.IGNORECASE), error_text
        assert KEY_CLAUDE not in error_text and KEY_CLAUDE_NEW not in error_text
        partial_text = reply.locator(".blocks").inner_text().strip()
        if case.partial:
            assert partial_text.startswith("w0 w1 w2"), partial_text
            assert "w399" not in partial_text
        # Saved at once: the error reply is the last stored entry, with what arrived.
        stored = messages_of(app.stored_lines(session_id))
        assert [m["role"] for m in stored] == ["user", "assistant"]
        assert stored[-1]["stopReason"] == "error" and stored[-1]["errorMessage"]
        if case.partial:
            assert stored[-1]["content"][0]["text"].startswith("w0 w1 w2")
        if case.key_dialog:
            dialog = page.locator("dialog[open]")
            mock.script([{"text": "ok"}, {"text": RECOVERY}])  # the key check, then the retry
            dialog.locator("#api-key-input").fill(KEY_CLAUDE_NEW)
            dialog.locator("#key-save").click()
            dialog.wait_for(state="detached")
            page.locator("#toasts .toast", has_text="Press Retry").last.wait_for()
        else:
            mock.script([{"text": RECOVERY}])
        box.locator("button", has_text="Retry").click()
        page.locator("#transcript .msg.assistant", has_text=RECOVERY).wait_for(timeout=15_000)
        app.settle()
        final = RECOVERY
        if case.key_dialog:
            assert mock.requests[-1]["headers"]["x-api-key"] == KEY_CLAUDE_NEW
            app.py("save_key", provider="Mock Claude", key=KEY_CLAUDE, remember=True)
    assert app.user_texts() == [text]
    assert app.page_errors == []
    OUTCOMES[case.id] = Outcome(session_id, text, final, error_text, partial_text)


def test_every_fault_session_survives_a_reload(app: GuardedApp) -> None:
    assert set(OUTCOMES) == {c.id for c in CASES}, "run the whole module"
    page = app.page
    page.reload()
    wait_ready(page)
    for case in CASES:
        outcome = OUTCOMES[case.id]
        page.evaluate("(id) => { location.hash = '#/s/' + id; }", outcome.session_id)
        page.locator("#transcript .msg.user .user-text", has_text=outcome.user_text).wait_for()
        page.locator("#transcript .msg.assistant", has_text=outcome.final_text).wait_for()
        assert app.user_texts() == [outcome.user_text]
        lines = app.stored_lines(outcome.session_id)
        assert_no_duplicates(lines)
        stored = messages_of(lines)
        if case.tool:
            assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "assistant"]
            assert stored[2]["isError"] is True
        elif case.error is not None:
            # The failed reply stays, on its own branch beside the retry that worked.
            assert [m["role"] for m in stored] == ["user", "assistant", "assistant"]
            assert stored[1]["stopReason"] == "error"
            assert page.locator("#transcript .msg.assistant .branch-count").inner_text() == "2 / 2"
            page.locator("#transcript .msg.assistant .branch button[aria-label='Previous version']").click()
            shown = page.locator("#transcript .msg-error[role='alert'] .msg-error-text")
            shown.wait_for()
            assert shown.inner_text() == outcome.error_text
            if case.partial:
                assert app.assistant_texts()[-1] == outcome.partial_text
        else:
            assert [m["role"] for m in stored] == ["user", "assistant"]
    assert app.violations() == []
    assert app.page_errors == []
