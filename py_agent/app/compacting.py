"""Compaction in the page: when and how a :class:`~py_agent.app.chat.ChatSession` compacts, as pi
0.79.10's ``AgentSession`` drives pi-agent-core's compaction (pi-coding-agent
``dist/core/agent-session.js``: ``compact``, ``_checkCompaction``, ``_runAutoCompaction``).

- before a prompt and after every run, the last reply is checked (:meth:`Compactor.check`): a
  context overflow (the provider refused, or an early ``length`` stop with the window full)
  compacts and retries once; a context past ``context_window - reserve_tokens`` compacts (no retry);
- the user compacts on demand (the session menu's "Compact", or ``/compact [instructions]``).

The summary is requested with the session's model, key and stream function (its proxy and
retries). While it runs the page shows it (``state()["compacting"]``) and Stop cancels it; a
failure appends nothing and says why. Nothing is deleted: the ``compaction`` entry only changes
where the context built from the session starts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..ai.abort import AbortController
from ..ai.overflow import is_context_overflow
from ..ai.types import AssistantMessage, role_of
from ..session import CompactionEntry, parse_iso_ms
from ..session.compaction import (
    DEFAULT_COMPACTION_SETTINGS,
    BranchSummaryError,
    CompactionError,
    CompactionPreparation,
    CompactionSettings,
    calculate_context_tokens,
    collect_entries_for_branch_summary,
    compact_session,
    estimate_context_tokens,
    generate_branch_summary,
    prepare_compaction,
    should_compact,
)

if TYPE_CHECKING:
    from .chat import ChatSession

__all__ = ["OVERFLOW_RETRY_FAILED", "Compactor", "compact_command"]

OVERFLOW_RETRY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)

_COMMAND = re.compile(r"/compact(?:\s+(?P<instructions>[\s\S]*))?")


def compact_command(text: str) -> str | None:
    """The instructions of a ``/compact [instructions]`` message (``""`` for none); ``None`` when
    ``text`` is not that command."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return (match.group("instructions") or "").strip()


def _summarizes_something(preparation: CompactionPreparation | None) -> bool:
    return preparation is not None and bool(preparation.messages_to_summarize or preparation.turn_prefix_messages)


class Compactor:
    """The compaction state of one chat: the running summary request, and whether an overflow
    was already retried since the last user message (one compact-and-retry per message)."""

    def __init__(self, chat: ChatSession, settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS) -> None:
        self.chat = chat
        self.settings = settings
        self.reason: str | None = None
        """``"manual"``, ``"threshold"`` or ``"overflow"`` while a summary is requested."""
        self._controller: AbortController | None = None
        self.overflow_attempted = False

    @property
    def running(self) -> bool:
        return self.reason is not None

    def abort(self) -> None:
        if self._controller is not None:
            self._controller.abort()

    # ---- when ------------------------------------------------------------------------------

    def _latest_compaction(self) -> CompactionEntry | None:
        for entry in reversed(self.chat.session.path()):
            if isinstance(entry, CompactionEntry):
                return entry
        return None

    async def check(self, message: Any, skip_aborted: bool = True) -> bool:
        """pi's ``_checkCompaction`` for the last reply; True when the agent should continue
        (the overflow's retry, or messages queued meanwhile)."""
        settings = self.settings
        if not settings.enabled or not isinstance(message, AssistantMessage):
            return False
        if skip_aborted and message.stop_reason == "aborted":
            return False
        model = self.chat.model
        window = model.context_window or 0
        same_model = message.provider == model.provider and message.model == model.id
        overflow = same_model and is_context_overflow(message, window)
        usage_says_fine = not should_compact(calculate_context_tokens(message.usage), window, settings)
        if not overflow and message.stop_reason != "error" and usage_says_fine:
            return False  # before every send: the session's path is walked only when it may count
        latest = self._latest_compaction()
        compacted_at = parse_iso_ms(latest.timestamp) if latest is not None else None
        # A reply from before the latest compaction says nothing about the context now.
        if compacted_at is not None and message.timestamp <= compacted_at:
            return False
        if overflow:
            will_retry = message.stop_reason != "stop"
            if not will_retry:
                return await self.run("overflow", will_retry=False)
            if self.overflow_attempted:
                self.chat.notify("error", OVERFLOW_RETRY_FAILED)
                return False
            self.overflow_attempted = True
            self._drop_trailing_reply()
            return await self.run("overflow", will_retry=True)
        if message.stop_reason == "error":
            # No usage on a failed reply: estimate from the last one that has it (after the compaction).
            messages = self.chat.agent.state.messages
            estimate = estimate_context_tokens(messages)
            if estimate.last_usage_index is None:
                return False
            source = messages[estimate.last_usage_index]
            timestamp = getattr(source, "timestamp", None)
            if compacted_at is not None and isinstance(timestamp, int) and timestamp <= compacted_at:
                return False
            tokens = estimate.tokens
        else:
            tokens = calculate_context_tokens(message.usage)
        if should_compact(tokens, window, settings):
            return await self.run("threshold", will_retry=False)
        return False

    def _drop_trailing_reply(self) -> None:
        # The failed reply stays in the session (and the transcript) but is not sent again.
        messages = self.chat.agent.state.messages
        if messages and role_of(messages[-1]) == "assistant":
            self.chat.agent.state.messages = messages[:-1]

    # ---- how --------------------------------------------------------------------------------

    async def run(self, reason: str, *, will_retry: bool = False, instructions: str | None = None) -> bool:
        """Compact now (pi's ``_runAutoCompaction``, or ``compact`` when ``reason`` is ``"manual"``).

        Automatic runs report a failure as a notice and return False; a manual run raises
        ``ValueError`` with the reason (the page shows it). Returns True when the agent should
        continue (an overflow's retry, or queued messages)."""
        chat = self.chat
        manual = reason == "manual"
        if chat.read_only:
            return False  # another tab writes this session now
        if not manual and not _summarizes_something(prepare_compaction(chat.session.path(), self.settings)):
            # Nothing before the cut (all of it is within the kept tokens): a summary would not
            # make the context smaller. pi asks for one anyway (docs/deviations.md S6).
            return False
        model = chat.model
        self._controller = controller = AbortController()
        self.reason = reason
        chat.compaction_changed()
        try:
            entry = await compact_session(
                chat.session,
                model,
                api_key=chat.keys.get(model.provider),
                custom_instructions=instructions or None,
                signal=controller.signal,
                thinking_level=chat.thinking_level,  # type: ignore[arg-type]
                settings=self.settings,
                stream_fn=chat.stream_fn,
            )
        except CompactionError as error:
            if error.code == "aborted" or controller.signal.aborted:
                chat.notify("info", "Compaction stopped: the session is unchanged.")
                return False
            text = chat.keys.redact(str(error))
            if error.code == "nothing_to_compact":
                if manual:
                    raise ValueError(f"{text}.") from None
                return False
            if manual:
                raise ValueError(f"Compaction failed: {text} The session is unchanged.") from None
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Automatic compaction failed"
            chat.notify("error", f"{prefix}: {text} The session is unchanged.")
            return False
        finally:
            self._controller = None
            self.reason = None
            chat.compaction_changed()
        await chat.compacted(entry)
        if will_retry:
            self._drop_failed_reply()
            return True
        return chat.agent.has_queued_messages()

    async def summarize_branch(self, left_leaf: str, instructions: str = "") -> None:
        """pi's ``navigateTree`` with ``summarize``: the entries of the version left (from its leaf
        back to where it meets the current path) summarized into a ``branch_summary`` entry at the
        current leaf. A failure appends nothing and raises ``ValueError`` (the page shows it)."""
        chat = self.chat
        target = chat.session.leaf_id
        if target is None:
            raise ValueError("There is nothing here to attach a summary to.")
        entries, _ = collect_entries_for_branch_summary(chat.session, left_leaf, target)
        if not entries:
            raise ValueError("The version you left has nothing of its own to summarize.")
        model = chat.model
        self._controller = controller = AbortController()
        self.reason = "branch"
        chat.compaction_changed()
        try:
            result = await generate_branch_summary(
                entries,
                model,
                api_key=chat.keys.get(model.provider),
                signal=controller.signal,
                custom_instructions=instructions or None,
                stream_fn=chat.stream_fn,
            )
            if controller.signal.aborted:
                raise BranchSummaryError("aborted", "Branch summary aborted")
        except BranchSummaryError as error:
            if error.code == "aborted" or controller.signal.aborted:
                chat.notify("info", "Summary stopped: the session is unchanged.")
                return
            raise ValueError(f"{chat.keys.redact(str(error))} The session is unchanged.") from None
        finally:
            self._controller = None
            self.reason = None
            chat.compaction_changed()
        details = {"readFiles": result.read_files, "modifiedFiles": result.modified_files}
        entry = chat.session.branch_with_summary(target, result.summary, details, from_hook=False)
        chat.left_leaf = None
        await chat.compacted(entry)

    def _drop_failed_reply(self) -> None:
        # pi drops only a trailing error here; a reply stopped early by `length` would stay last
        # and the retry (continue) could not start from it, so it is dropped too.
        messages = self.chat.agent.state.messages
        last = messages[-1] if messages else None
        if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "length"):
            self.chat.agent.state.messages = messages[:-1]
