"""One open conversation: pi's AgentSession role for the page.

A :class:`ChatSession` owns an :class:`~py_agent.core.Agent`, the session tree
(:class:`~py_agent.session.Session`) it is saved as, its tools and system prompt, and keeps the
two in step: every message is appended as an entry when it ends and saved at once (one
transaction: the new entries and the bounded metadata record, never a rewrite); model, thinking
level and name changes are entries too; the reply being streamed is saved as a draft now and
then, so a reload recovers it as an interrupted message.

It reports what the page must show through ``emit(kind, payload)`` (see :mod:`py_agent.app.controller`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..ai.eager import start_eagerly
from ..ai.models import clamp_thinking_level, get_supported_thinking_levels
from ..ai.registry import stream_simple
from ..ai.transport import get_default_transport
from ..ai.types import (
    AssistantMessage,
    Context,
    Model,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    UserMessage,
    now_ms,
    role_of,
)
from ..core import Agent
from ..session import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    Entry,
    MessageEntry,
    Session,
    context_edits,
    context_entries,
    convert_to_llm,
    create_branch_summary_message,
    export_with_attachments,
    message_to_json,
    new_entry_id,
    now_iso,
    to_json_value,
)
from .catalog import provider_info
from .compacting import Compactor
from .context_meter import context_meter
from .errors import classify_error, describe_error, key_rejected
from .keys import KeyRing
from .network import SentSignalTransport, provider_transport, unreachable_advice
from .plugin_contract import LoadedPlugins, ToolHost
from .reliability import retry_notice, with_retry_policy
from .storage import SessionStore, StorageError, describe_storage_error
from .stream_delta import StreamView

__all__ = ["INTERRUPTED_MESSAGE", "ChatSession", "Emit", "QueuedMessage"]

Emit = Callable[[str, dict[str, Any]], None]

INTERRUPTED_MESSAGE = "Interrupted: the page was closed or reloaded while this reply was being written."
DRAFT_INTERVAL_S = 0.5
# A reply streams no further ahead of the page than this many characters while the page pulls it
# (bench/streaming.py: a fast reply's last part arrived in one piece, shown only as it ended): the
# run waits for the page's next pull, at most STREAM_WAIT_S, and not for a page that stopped pulling
# (a hidden tab draws no frames).
STREAM_AHEAD_CHARS = 4000
STREAM_WAIT_S = 0.25
STREAM_PULLING_S = 0.5
DEFAULT_IDLE_TIMEOUT_MS = 120_000


@dataclass
class QueuedMessage:
    id: str
    text: str
    mode: str  # "steer" | "follow_up"
    message: UserMessage = field(repr=False)


def _user_message(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=now_ms())


class ChatSession:
    """The agent, the session tree and their storage, for one conversation."""

    def __init__(
        self,
        *,
        session: Session,
        store: SessionStore,
        keys: KeyRing,
        emit: Emit,
        model: Model,
        thinking_level: str,
        system_prompt: str,
        saved_count: int,
        idle_timeout_ms: int = DEFAULT_IDLE_TIMEOUT_MS,
        plugins: LoadedPlugins | None = None,
    ) -> None:
        self.session = session
        self.plugins = plugins if plugins is not None else LoadedPlugins()
        self.store = store
        self.keys = keys
        self._emit_now = emit
        # Between Enter and the request leaving (bench/first_token.py): what the run tells the page
        # (its state, the user's message) and the message's save wait until the request has left.
        self._held: list[tuple[str, dict[str, Any] | None]] | None = None
        self._save_held = False
        self.system_prompt = system_prompt
        self.idle_timeout_ms = idle_timeout_ms
        self.read_only = False
        self.read_only_reason = ""
        self._saved_count = saved_count
        self._unsaved: list[Entry] = []
        self._save_error: str | None = None
        self._queue: list[QueuedMessage] = []
        self._task: asyncio.Task[Any] | None = None
        # Saves run one at a time, in order (a user's message is saved behind its request: _save_soon).
        self._save_lock = asyncio.Lock()
        self._saving: asyncio.Future[bool] | None = None
        self._draft_saved_at = 0.0
        self._stream_parent: str | None = None
        self._stream_notified = False
        self._stream_pull = asyncio.Event()
        self._pulled_chars = 0
        self._pulled_at = -1.0
        self._tool_status: dict[str, dict[str, Any]] = {}
        self._tool_version = 0
        self._stream_view = StreamView()  # what the page has of the streaming reply
        self.tool_errors: list[str] = []
        self.host_extras: dict[str, Any] = {}
        """Values the app adds to every ToolHost's ``extras`` (e.g. ``"tool_settings"``)."""
        self.proxy_url: str | None = None
        """The CORS proxy for providers that use one (a setting; see py_agent.app.network)."""
        self.confirm: Callable[[str, str], Any] | None = None
        """Asks the user a yes/no question in the page (set by the app): ``await confirm(title, message)``."""
        level = clamp_thinking_level(model, thinking_level)
        self.agent = Agent(
            initial_state={
                "system_prompt": system_prompt,
                "model": model,
                "thinking_level": level,
                "messages": session.build_context().agent_messages(),
            },
            convert_to_llm=convert_to_llm,
            get_api_key=self._api_key,
            stream_fn=self.stream_fn,
            session_id=session.id,
            after_tool_call=self._after_tool_call,
        )
        self.agent.subscribe(self._on_event)
        self.compactor = Compactor(self)
        self._last_reply: Any = None  # the last reply of the run, checked for compaction after it
        self.left_leaf: str | None = None
        """The leaf of the version the user switched away from (until the next message): what
        "Summarize the version you left" summarizes, as pi's tree navigation offers."""

    # ---- construction -----------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def persisted(self) -> bool:
        """True once the session has been written (at its first message)."""
        return self._saved_count > 0 or bool(self._unsaved)

    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    @property
    def streaming(self) -> bool:
        return self.agent.state.is_streaming or (self._task is not None and not self._task.done())

    async def install_tools(self) -> None:
        host = ToolHost(
            session_id=self.id,
            get_model=lambda: self.model,
            get_thinking_level=lambda: self.thinking_level,
            get_api_key=self.keys.get,
            append_custom_entry=self.append_custom_entry,
            custom_entries=self.custom_entries,
            post_to_panel=lambda panel, data: self._emit(
                "panel", {"sessionId": self.id, "panel": panel, "action": "message", "data": data}
            ),
            open_panel=lambda panel: self._emit("panel", {"sessionId": self.id, "panel": panel, "action": "open"}),
            suggest_panel=lambda panel, what: self._emit(
                "panel", {"sessionId": self.id, "panel": panel, "action": "suggest", "what": what}
            ),
            extras={
                "get_tools": lambda: list(self.agent.state.tools),
                "stream_fn": self.stream_fn,
                # A subagent's child finished: its usage now counts in the totals shown.
                "on_subagent_end": lambda _result: self._emit_state(),
                **({"confirm": self.confirm} if self.confirm is not None else {}),
                **self.host_extras,
            },
        )
        tools, self.tool_errors = await self.plugins.build_tools(host)
        self.agent.state.tools = tools

    async def recover_draft(self, draft: dict[str, Any] | None) -> None:
        """Save the reply that was streaming when the page went away, marked interrupted."""
        if not draft or self.read_only:
            return
        message = draft.get("message")
        if not isinstance(message, dict) or message.get("role") != "assistant":
            await self._delete_draft()
            return
        message = {**message, "stopReason": "aborted", "errorMessage": INTERRUPTED_MESSAGE}
        parent = draft.get("parentId")
        if not (isinstance(parent, str) and parent in self.session):
            parent = self.session.leaf_id
        entry = MessageEntry(id=self.session.new_entry_id(), parent_id=parent, timestamp=now_iso(), message=message)
        self.session.append(entry)
        self._unsaved.append(entry)
        await self._persist(clear_draft=True)
        self._reset_agent_messages()

    # ---- hooks for the agent ----------------------------------------------------------------

    async def _after_tool_call(self, context: Any, signal: Any = None) -> Any:
        for hook in self.plugins.after_tool_call_hooks():
            result = hook(context, signal)
            if inspect.isawaitable(result):
                result = await result
            if result is not None:
                return result
        return None

    def _api_key(self, provider: str) -> str | None:
        return self.keys.get(provider)

    def stream_fn(self, model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        """How this chat asks its model: ``stream_simple`` with the idle timeout, the CORS proxy
        and the app's retry policy (replies, subagents and compaction summaries alike)."""
        if options.idle_timeout_ms is None and self.idle_timeout_ms:
            options = replace(options, idle_timeout_ms=self.idle_timeout_ms)
        if options.http_transport is None:
            transport = provider_transport(model.provider, self.proxy_url)
            if transport is not None:
                options = replace(options, http_transport=transport)
        if self._held is not None:
            # What waited is let go as the request leaves, in the same turn as its fetch().
            with contextlib.suppress(RuntimeError):  # no transport to watch: the fallback below
                transport = options.http_transport or get_default_transport()
                options = replace(options, http_transport=SentSignalTransport(transport, self._release))
        options = with_retry_policy(options, self._on_retry)  # capped retries, shown as they happen
        stream = stream_simple(model, context, options)
        if self._held is not None:
            # A provider without HTTP (the faux one), or a failure before the request: after the
            # provider's task has run its first step (it was queued first).
            asyncio.get_running_loop().call_soon(self._release)
        return stream

    def _emit(self, kind: str, payload: dict[str, Any]) -> None:
        if self._held is not None:
            self._held.append((kind, payload))
        else:
            self._emit_now(kind, payload)

    def _hold(self) -> None:
        if self._held is None:
            self._held = []

    def _release(self) -> None:
        """Start the save that waited (its write first: see ``_save_soon``), then tell the page
        what was held, in order (the session's state once: as it is now)."""
        held, self._held = self._held, None
        if held is None:
            return
        if self._save_held:
            self._save_held = False
            self._save_soon()
        last_state = max((i for i, (kind, _) in enumerate(held) if kind == "session_state"), default=-1)
        for i, (kind, payload) in enumerate(held):
            if kind != "session_state":
                self._emit_now(kind, payload or {})
            elif i == last_state:
                self._emit_state()

    def _on_retry(self, info: Any, model: Model) -> None:
        text = self.keys.redact(retry_notice(info, provider_info(model.provider).label))
        self._emit("retry", {"sessionId": self.id, "text": text, "attempt": info.attempt, "status": info.status})

    async def _on_event(self, event: Any) -> None:
        kind = event.type
        if kind == "message_update":
            await self._on_stream_update(event.message)
        elif kind == "message_start":
            message = event.message
            role = role_of(message)
            if role == "user":
                self.compactor.overflow_attempted = False
                self._delivered(message)
            elif role == "assistant":
                self._stream_view.reset()
                self._pulled_chars = 0
                self._stream_parent = self.session.leaf_id
                self._draft_saved_at = time.monotonic()
                self._notify_stream()
        elif kind == "message_end":
            await self._on_message_end(event.message)
        elif kind == "tool_execution_start":
            self._tool(event.tool_call_id, "running", args=event.args)
        elif kind == "tool_execution_update":
            self._tool(event.tool_call_id, "running", partial=_plain(event.partial_result))
        elif kind == "tool_execution_end":
            self._tool(event.tool_call_id, "error" if event.is_error else "done")
        elif kind == "agent_end":
            self._on_agent_end()
        if kind in ("agent_start", "turn_start", "turn_end", "message_end", "agent_end"):
            self._emit_state()

    def _notify_stream(self) -> None:
        if not self._stream_notified:
            self._stream_notified = True
            self._emit("stream", {"sessionId": self.id})

    async def _on_stream_update(self, message: Any) -> None:
        self._notify_stream()
        if (
            time.monotonic() - self._pulled_at < STREAM_PULLING_S
            and _text_chars(message) - self._pulled_chars > STREAM_AHEAD_CHARS
        ):
            self._stream_pull.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stream_pull.wait(), STREAM_WAIT_S)
        if self.read_only or not self.persisted:
            return
        now = time.monotonic()
        if now - self._draft_saved_at >= DRAFT_INTERVAL_S:
            self._draft_saved_at = now
            # The draft is a best effort; the message itself is saved when it ends.
            with contextlib.suppress(StorageError):
                await self.store.save_draft(
                    self.id, {"parentId": self._stream_parent, "message": self._scrubbed_json(message)}
                )

    async def _on_message_end(self, message: Any) -> None:
        role = role_of(message)
        if role == "assistant" and isinstance(message, AssistantMessage) and message.error_message:
            # What to do about it is worked out when shown (error_view), so it names the page's origin.
            message.error_message = self.keys.redact(message.error_message)
        entry = self.session.append_message(message)
        self._unsaved.append(entry)
        self._emit("append", {"sessionId": self.id, "item": self.item(entry)})
        if role == "user":
            # Not between Enter and the request (bench/first_token.py): the message is written while
            # the request goes out; anything appended later is saved after it, in order.
            self._save_soon()
        else:
            await self._persist(clear_draft=role == "assistant")
        if role == "assistant":
            self._stream_notified = False
            self._last_reply = message
            if isinstance(message, AssistantMessage) and message.stop_reason != "error":
                self.compactor.overflow_attempted = False
            if isinstance(message, AssistantMessage) and message.stop_reason == "error":
                self._check_key_rejected(message)

    def _check_key_rejected(self, message: AssistantMessage) -> None:
        if key_rejected(message.error_message) and self.keys.has(message.provider):
            self._emit("key_rejected", {"provider": message.provider, "error": message.error_message})

    def _delivered(self, message: Any) -> None:
        before = len(self._queue)
        self._queue = [q for q in self._queue if q.message is not message]
        if len(self._queue) != before:
            self._emit_state()

    def _on_agent_end(self) -> None:
        self._stream_notified = False
        if self._queue:
            # The run ended (stopped or failed) before delivering them: hand the text back.
            texts = [q.text for q in self._queue]
            self._queue = []
            self.agent.clear_all_queues()
            self._emit("unsent", {"sessionId": self.id, "texts": texts})

    def _tool(self, tool_call_id: str, status: str, **extra: Any) -> None:
        state = {"toolCallId": tool_call_id, "status": status, **{k: v for k, v in extra.items() if v is not None}}
        if "args" in state:
            state["args"] = _plain(state["args"])
        self._tool_status[tool_call_id] = state
        self._tool_version += 1
        self._emit("tool", {"sessionId": self.id, **state})

    # ---- persistence ----------------------------------------------------------------------------

    def _save_soon(self) -> None:
        """Start saving the unsaved entries without waiting for it (``wait_idle`` does).

        The save runs now up to the storage's write (IndexedDB takes and commits it in this turn
        of the page, right after the request's ``fetch()``: web/boot/idb.js ``write``): a write
        committed survives a reload or a closed tab, a task queued for the next turn would not
        (tests/browser/test_first_token.py)."""
        if self._held is not None:
            self._save_held = True
            return
        self._saving = start_eagerly(self._persist())

    async def _persist(self, *, clear_draft: bool = False) -> bool:
        """Write every entry not saved yet (in order) with the metadata. On failure the entries
        stay queued and are written with the next save; the page is told once."""
        async with self._save_lock:
            return await self._persist_unsaved(clear_draft)

    async def _persist_unsaved(self, clear_draft: bool) -> bool:
        if self.read_only or not self._unsaved:
            return True
        pending = list(self._unsaved)
        try:
            await self.store.append(self.session, self._saved_count, pending, clear_draft=clear_draft)
        except StorageError as error:
            if error.kind == "conflict":
                self.set_read_only(describe_storage_error(error))
            message = describe_storage_error(error)
            if message != self._save_error:
                self._save_error = message
                self._emit("notice", {"level": "error", "text": message, "id": "save-error"})
            return False
        except Exception as error:  # a backend bug must not stop the conversation
            self._emit("notice", {"level": "error", "text": f"Saving failed: {error}", "id": "save-error"})
            return False
        self._saved_count += len(pending)
        del self._unsaved[: len(pending)]
        if self._save_error is not None:
            self._save_error = None
            self._emit("notice", {"level": "info", "text": "Saved again: nothing was lost.", "id": "save-error"})
        if self._saved_count == len(pending):
            self._emit("persisted", {"sessionId": self.id})
        self._emit("sessions_changed", {})
        return True

    async def _save_record(self) -> None:
        if self.read_only or not self.persisted:
            return
        try:
            await self.store.save_record(self.session)
        except StorageError as error:
            self._emit("notice", {"level": "error", "text": describe_storage_error(error), "id": "save-error"})

    async def _delete_draft(self) -> None:
        with contextlib.suppress(StorageError):
            await self.store.delete_draft(self.id)

    def _write_prelude(self) -> None:
        """The entries a session starts with: its system prompt, model and thinking level."""
        self._unsaved.append(self.session.append_system_prompt(self.system_prompt))
        self._unsaved.append(self.session.append_model_change(self.model.provider, self.model.id))
        self._unsaved.append(self.session.append_thinking_level_change(self.thinking_level))

    async def append_custom_entry(self, custom_type: str, data: Any) -> None:
        if self.read_only:
            return
        if not self.persisted:
            self._write_prelude()
        self._unsaved.append(self.session.append_custom(custom_type, data))
        await self._persist()

    def custom_entries(self, custom_type: str) -> list[Any]:
        return [e.data for e in self.session.path() if isinstance(e, CustomEntry) and e.custom_type == custom_type]

    def set_read_only(self, reason: str) -> None:
        self.read_only = True
        self.read_only_reason = reason
        if self.streaming:
            self.agent.abort()
        self._emit_state()

    def set_writable(self) -> None:
        self.read_only = False
        self.read_only_reason = ""
        self._emit_state()

    # ---- actions ----------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self.read_only:
            raise ValueError(self.read_only_reason or "This session is read-only here.")

    def _check_idle(self) -> None:
        if self.streaming:
            raise ValueError("Wait for the reply to finish, or stop it, first.")

    def _run(self, coroutine: Any) -> None:
        async def runner() -> None:
            try:
                await coroutine
            except Exception as error:
                self._emit("notice", {"level": "error", "text": self.keys.redact(str(error))})
            finally:
                self._release()  # the run ended before its request (a failure, a compaction)

        self._task = asyncio.ensure_future(runner())
        # Once the task is over, `streaming` is false: tell the page.
        self._task.add_done_callback(lambda _: self._emit_state())

    async def wait_idle(self) -> None:
        """Until the current run (if any) has finished and been saved."""
        task = self._task
        if task is not None:
            await asyncio.shield(task)
        if self._saving is not None:
            await asyncio.shield(self._saving)

    def send(self, text: str, message: UserMessage | None = None) -> None:
        """Start a run with a new user message (the caller checked that a key is there);
        ``message``: one built already (with attachments), instead of ``text`` alone."""
        self._check_writable()
        self._check_idle()
        if not self.persisted:
            self._write_prelude()
        self.left_leaf = None
        self._run(self._prompt(message or _user_message(text)))
        self._emit_state()  # streaming: the page's composer queues what is typed next
        self._hold()

    async def _prompt(self, message: UserMessage) -> None:
        """pi's ``prompt``: compact first if the last reply says the context is (over)full, then send."""
        last = next((m for m in reversed(self.agent.state.messages) if role_of(m) == "assistant"), None)
        if last is not None and await self.compactor.check(last, skip_aborted=False):
            await self._continue()
        await self.agent.prompt(message)
        await self._after_runs()

    async def _continue(self) -> None:
        await self.agent.continue_()
        await self._after_runs()

    async def _after_runs(self) -> None:
        """pi's ``_handlePostAgentRun`` loop: after each run, compact if its last reply asks for
        it, and continue when that compaction says so (an overflow's retry, queued messages)."""
        while True:
            last, self._last_reply = self._last_reply, None
            if last is None or not await self.compactor.check(last):
                return
            await self.agent.continue_()

    def queue(self, text: str, mode: str) -> QueuedMessage:
        """Queue a message while a reply streams: ``steer`` (after the current step) or
        ``follow_up`` (when the agent would stop)."""
        self._check_writable()
        message = _user_message(text)
        queued = QueuedMessage(new_entry_id(set()), text, mode, message)
        if mode == "steer":
            self.agent.steer(message)
        else:
            self.agent.follow_up(message)
        self._queue.append(queued)
        self._emit_state()
        return queued

    def unqueue(self, queued_id: str) -> str | None:
        """Take a queued message back (returns its text)."""
        item = next((q for q in self._queue if q.id == queued_id), None)
        if item is None:
            return None
        self._queue.remove(item)
        self.agent.clear_all_queues()
        for q in self._queue:
            (self.agent.steer if q.mode == "steer" else self.agent.follow_up)(q.message)
        self._emit_state()
        return item.text

    def abort(self) -> None:
        self.agent.abort()
        self.compactor.abort()

    async def compact(self, instructions: str = "") -> None:
        """Compact now (the session menu's "Compact", ``/compact [instructions]``): a reply being
        written is stopped first, as pi does. The summary runs as this chat's task (Stop cancels it)."""
        self._check_writable()
        if self.streaming:
            self.abort()
            await self.wait_idle()
        self._run(self.compactor.run("manual", instructions=instructions))
        self._emit_state()

    async def summarize_left_branch(self, instructions: str = "") -> None:
        """Summarize the version the user switched away from, into the current one (a
        ``branch_summary`` entry the model reads); runs as this chat's task (Stop cancels it)."""
        self._check_writable()
        self._check_idle()
        left = self.left_leaf
        if left is None or left not in self.session:
            raise ValueError("Switch to another version of a message first: its summary comes with you.")
        self._run(self.compactor.summarize_branch(left, instructions))
        self._emit_state()

    async def compacted(self, entry: CompactionEntry | BranchSummaryEntry) -> None:
        """Save a summary entry just appended; the agent then reads the context with it."""
        self._unsaved.append(entry)
        await self._persist()
        self._reset_agent_messages()
        self._emit_transcript()

    def notify(self, level: str, text: str) -> None:
        self._emit("notice", {"level": level, "text": text})

    def compaction_changed(self) -> None:
        self._emit_state()

    def _reset_agent_messages(self) -> None:
        self.agent.state.messages = self.session.build_context().agent_messages()

    async def retry(self, entry_id: str | None = None) -> None:
        """Ask again for a reply (Retry on a failed or stopped one, Regenerate on any other): a new
        branch beside it, as an edit makes; the earlier reply stays in the session on its own branch."""
        self._check_writable()
        self._check_idle()
        target = self.session.get(entry_id) if entry_id else self.session.leaf
        if not isinstance(target, MessageEntry) or target.message.get("role") != "assistant":
            raise ValueError("Only a reply can be retried.")
        self.session.branch_before(target.id)
        self._reset_agent_messages()
        messages = self.agent.state.messages
        if not messages or role_of(messages[-1]) == "assistant":
            raise ValueError("There is no message to answer.")
        await self._save_record()
        self._emit_transcript()
        self._run(self._continue())

    async def edit(self, entry_id: str, text: str) -> None:
        """Resend an earlier user message with new text: a branch from the point before it."""
        self._check_writable()
        self._check_idle()
        target = self.session.get(entry_id)
        if not isinstance(target, MessageEntry) or target.message.get("role") != "user":
            raise ValueError("Only your own messages can be edited.")
        self.session.branch_before(entry_id)
        self._reset_agent_messages()
        await self._save_record()
        self._emit_transcript()
        from .attachments import edited_message  # on first use: not at the page's start

        self.send(text, edited_message(target.message, text))  # attachments stay with the message

    async def switch_branch(self, entry_id: str) -> None:
        """Show the branch through ``entry_id`` (its most recent leaf)."""
        self._check_idle()
        left = self.session.leaf_id
        self.session.branch(self.session.latest_leaf(entry_id))
        if self.session.leaf_id != left:
            self.left_leaf = left
        self._reset_agent_messages()
        await self._save_record()
        self._emit_transcript()
        self._emit_state()

    async def set_model(self, model: Model) -> None:
        self._check_idle()
        current = self.model
        level = clamp_thinking_level(model, self.thinking_level)
        if current.provider == model.provider and current.id == model.id and level == self.thinking_level:
            self.agent.state.model = model
            return
        self.agent.state.model = model
        changed_level = level != self.thinking_level
        self.agent.state.thinking_level = level
        if self.persisted and not self.read_only:
            self._unsaved.append(self.session.append_model_change(model.provider, model.id))
            if changed_level:
                self._unsaved.append(self.session.append_thinking_level_change(level))
            await self._persist()
        self._emit_state()

    async def set_thinking_level(self, level: str) -> None:
        self._check_idle()
        level = clamp_thinking_level(self.model, level)
        if level == self.thinking_level:
            return
        self.agent.state.thinking_level = level
        if self.persisted and not self.read_only:
            self._unsaved.append(self.session.append_thinking_level_change(level))
            await self._persist()
        self._emit_state()

    async def rename(self, name: str) -> None:
        self._check_writable()
        if not self.persisted:
            self._write_prelude()
        self._unsaved.append(self.session.append_session_info(name))
        await self._persist()
        self._emit_state()

    async def set_system_prompt(self, prompt: str) -> None:
        self._check_writable()
        self._check_idle()
        self.system_prompt = prompt
        self.agent.state.system_prompt = prompt
        if self.persisted:
            self._unsaved.append(self.session.append_system_prompt(prompt))
            await self._persist()
        self._emit_state()

    def export(self, attachments: Sequence[tuple[str, Any]] = ()) -> str:
        """The session as pi's ``.jsonl``, then one ``custom`` entry per attachment (plugin data
        the export carries, e.g. the workspace), with every stored key scrubbed as a safety net."""
        return export_with_attachments(self.session, attachments, secrets=self.keys.secrets())

    # ---- what the page shows ----------------------------------------------------------------

    def _scrubbed_json(self, message: Any) -> dict[str, Any]:
        data = message_to_json(message)
        error = data.get("errorMessage")
        if isinstance(error, str):
            data["errorMessage"] = self.keys.redact(error)
        return data

    def item(self, entry: MessageEntry, edit: ContextEditEntry | None = None) -> dict[str, Any]:
        """One message of the transcript: the entry's message, its id, the alternatives at its
        place in the tree (edits of a user message, retries of a reply) and, when a pi 1.x
        ``context_edit`` changed what the model sees of it, ``contextEdit``: ``"removed"`` or ``"replaced"``."""
        item: dict[str, Any] = {"entryId": entry.id, "message": entry.message}
        if edit is not None:
            item["contextEdit"] = "removed" if edit.replacement is None else "replaced"
        role = entry.message.get("role")
        view = error_view(entry.message) if role == "assistant" else None
        if view is not None:
            item["errorView"] = view
        siblings = [
            s.id
            for s in self.session.children(entry.parent_id)
            if isinstance(s, MessageEntry) and s.message.get("role") == role
        ]
        if len(siblings) > 1:
            item["branch"] = {"index": siblings.index(entry.id), "count": len(siblings), "ids": siblings}
        return item

    def transcript(self) -> list[dict[str, Any]]:
        """The path's messages, and a card for each compaction on it, placed where its cut is
        (before its first kept message); the messages before the latest cut are marked
        ``compacted`` (kept in the session, no longer sent to the model); see :meth:`item` for
        ``contextEdit``."""
        path = self.session.path()
        edits = context_edits(context_entries(path))
        index = {entry.id: i for i, entry in enumerate(path)}
        cards: dict[int, list[dict[str, Any]]] = {}
        cut = 0
        for position, entry in enumerate(path):
            if isinstance(entry, CompactionEntry):
                kept = index.get(entry.first_kept_entry_id, position)
                anchor = kept if kept < position else position
                card = {"summary": entry.summary, "tokensBefore": entry.tokens_before}
                cards.setdefault(anchor, []).append({"entryId": entry.id, "compaction": card})
                cut = anchor
        items: list[dict[str, Any]] = []
        for position, entry in enumerate(path):
            items.extend(cards.get(position, ()))
            if isinstance(entry, BranchSummaryEntry) and entry.summary:
                message = create_branch_summary_message(entry.summary, entry.from_id, entry.timestamp)
                items.append({"entryId": entry.id, "message": message})
            elif isinstance(entry, MessageEntry):
                item = self.item(entry, edits.get(entry.id))
                if position < cut:
                    item["compacted"] = True
                items.append(item)
        return items

    def streaming_snapshot(self, since: int | None = None) -> dict[str, Any] | None:
        """The reply being streamed, for a page that has revision ``since`` of it: only what
        changed since then, or the whole message (see py_agent/app/stream_delta.py)."""
        self._stream_notified = False
        message = self.agent.state.streaming_message
        if message is None or role_of(message) != "assistant":
            return None
        self._pulled_chars = _text_chars(message)
        self._pulled_at = time.monotonic()
        self._stream_pull.set()
        tools = self._tool_status.values()
        if not isinstance(message, AssistantMessage):
            return {"message": self._scrubbed_json(message), "tools": list(tools)}
        return self._stream_view.snapshot(
            message, since, tools, self._tool_version, lambda: self._scrubbed_json(message)
        )

    def state(self) -> dict[str, Any]:
        meta = self.session.metadata
        usage = meta.usage
        # Usage the session's own assistant messages do not carry (subagents' children; plugins).
        running = [s["partial"] for s in self._tool_status.values() if s.get("status") == "running" and "partial" in s]
        extra = self.plugins.extra_usage(self.session, running)
        return {
            "sessionId": self.id,
            "persisted": self.persisted,
            "title": meta.title if self.persisted else "",
            "name": meta.name,
            "streaming": self.streaming,
            "readOnly": self.read_only,
            "readOnlyReason": self.read_only_reason,
            "thinkingLevel": self.thinking_level,
            "thinkingLevels": list(get_supported_thinking_levels(self.model)),
            "queue": [{"id": q.id, "text": q.text, "mode": q.mode} for q in self._queue],
            "usage": {
                "input": usage.input + int(extra["input"]),
                "output": usage.output + int(extra["output"]),
                "cacheRead": usage.cache_read + int(extra["cacheRead"]),
                "cacheWrite": usage.cache_write + int(extra["cacheWrite"]),
                "cost": usage.cost.total + extra["cost"],
            },
            "messageCount": meta.message_count,
            "context": context_meter(
                self.agent.state.messages,
                system_prompt=self.system_prompt,
                tools=self.agent.state.tools,
                context_window=self.model.context_window,
            ),
            "systemPrompt": self.system_prompt,
            "unsaved": len(self._unsaved),
            "error": self.keys.redact(self.agent.state.error_message or ""),
            "tools": [getattr(tool, "name", "") for tool in self.agent.state.tools],
            "compacting": self.compactor.reason,
            "leftBranch": self.left_leaf is not None and not self.streaming,
        }

    def _emit_state(self) -> None:
        if self._held is not None:
            self._held.append(("session_state", None))  # computed when released
        else:
            self._emit_now("session_state", self.state())

    def _emit_transcript(self) -> None:
        self._emit("transcript", {"sessionId": self.id, "items": self.transcript()})


def _text_chars(message: Any) -> int:
    """The characters of a streaming reply's text and thinking."""
    total = 0
    for block in getattr(message, "content", ()) or ():
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
    return total


def has_content(message: dict[str, Any]) -> bool:
    """Whether a reply has something to show (text, thinking or a tool call)."""
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if (kind == "text" and str(block.get("text") or "").strip()) or kind == "toolCall":
            return True
        if kind == "thinking" and str(block.get("thinking") or "").strip():
            return True
    return False


def error_view(message: dict[str, Any]) -> dict[str, Any] | None:
    """How the page shows a failed or stopped reply (py_agent/app/errors.py); ``None`` for others."""
    stop = message.get("stopReason")
    if stop not in ("error", "aborted"):
        return None
    error = message.get("errorMessage")
    error = error if isinstance(error, str) else None
    provider = str(message.get("provider") or "")
    info = classify_error(error, str(stop))
    advice = unreachable_advice(provider, browser=info.cors_suspected) if info.kind == "unreachable" else ""
    return describe_error(
        error,
        stop_reason=str(stop),
        provider=provider,
        label=provider_info(provider).label,
        advice=advice,
        kept=has_content(message),
    )


def estimate_tokens(messages: Sequence[Any], extra_text: str = "") -> int:
    """pi's estimate: characters / 4 over the text of every message (an image counts 1200 tokens)."""
    chars = len(extra_text)
    images = 0
    for message in messages:
        data = message_to_json(message) if not isinstance(message, dict) else message
        content = data.get("content")
        if isinstance(content, str):
            chars += len(content)
            continue
        for block in content or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += len(str(block.get("text") or ""))
            elif kind == "thinking":
                chars += len(str(block.get("thinking") or ""))
            elif kind == "toolCall":
                chars += len(str(block.get("name") or "")) + len(json.dumps(block.get("arguments") or {}))
            elif kind == "image":
                images += 1
    return -(-chars // 4) + images * 1200


def _plain(value: Any) -> Any:
    try:
        return to_json_value(value)
    except TypeError:
        return str(value)
