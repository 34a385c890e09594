"""``grep``'s regex search in the page: in a Web Worker, with a time limit.

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` against a long line of ``a``s can run
for ever, and on the page's main thread that would freeze the page (pi's grep uses ripgrep, which
is linear, so the model has no reason to expect it). In the page, :func:`make_browser_grep_searcher`
is the :data:`~py_agent.tools.files.GrepSearcher` the workspace plugin gives ``grep``: the pattern,
compiled by Python first (same errors as in CPython), is translated to a JavaScript ``RegExp``
(:mod:`py_agent.tools.grep_regex`), and the files' texts are sent in batches to a same-origin
dedicated worker (``web/sandbox/grep.js``, ``grep-worker.js``) that returns the matching line
numbers. Past the time limit, or on abort, the worker is terminated and the tool fails with a
message that tells the model to simplify the pattern. The output itself is made by
:func:`~py_agent.tools.files.make_grep_tool`, as in CPython.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from ..ai.abort import AbortSignal
from ..tools.files import GrepMatches, GrepSearcher, ToolError
from ..tools.grep_regex import UntranslatableRegex, to_js_regex
from .sandbox import ffi, js_module, load_sandbox_api, plain

__all__ = ["BATCH_CHARS", "BATCH_FILES", "GREP_TIMEOUT_MS", "make_browser_grep_searcher", "timeout_message"]

GREP_TIMEOUT_MS = 5_000
"""How long one grep may search (sending the files included) before it is stopped."""
BATCH_CHARS = 1_000_000
BATCH_FILES = 500
"""Files go to the worker in batches of about this size, the event loop running in between."""


def timeout_message(timeout_ms: int, files: int) -> str:
    return (
        f"grep stopped: searching {files} file{'s' if files != 1 else ''} with this pattern took longer than "
        f"{timeout_ms / 1000:g} s, so it was cancelled. The pattern is too slow: regular expressions with nested "
        "or overlapping quantifiers (such as (a+)+, (.*)*, (a|aa)*) can take exponential time on some lines. "
        "Simplify the pattern (remove the nested quantifier, make the alternatives distinct, anchor it), "
        "use literal=true to search for plain text, or narrow the search with path or glob."
    )


def make_browser_grep_searcher(timeout_ms: int = GREP_TIMEOUT_MS) -> GrepSearcher:
    """A :data:`~py_agent.tools.files.GrepSearcher` that runs in ``web/sandbox/grep-worker.js``."""

    async def search(
        regex: re.Pattern[str], texts: Sequence[str], limit: int, signal: AbortSignal | None
    ) -> GrepMatches:
        try:
            translated = to_js_regex(regex)
        except UntranslatableRegex as error:
            raise ToolError(
                f"grep cannot run this pattern in the browser: {error}. Rewrite the pattern without it "
                "(grep runs it as a JavaScript regular expression here, translated from Python's syntax)."
            ) from None
        js, to_js = js_module(), ffi().to_js
        api = await load_sandbox_api()
        options = {"source": translated.source, "flags": translated.flags, "limit": limit, "timeoutMs": timeout_ms}
        run = api.grep.start(to_js(options, dict_converter=js.Object.fromEntries))
        remove = signal.add_listener(lambda: run.abort()) if signal is not None else None
        try:
            batch: list[list[Any]] = []
            size = 0
            searched = 0
            for index, text in enumerate(texts):
                if not text:
                    continue  # a binary or empty file: no lines
                searched += 1
                batch.append([index, text])
                size += len(text)
                if size >= BATCH_CHARS or len(batch) >= BATCH_FILES:
                    if not run.add(to_js(batch)):
                        break  # the run ended (limit reached, timed out or aborted)
                    batch, size = [], 0
                    await asyncio.sleep(0)  # let the page breathe between batches
            else:
                if batch:
                    run.add(to_js(batch))
            run.end()
            result = plain((await run.result).to_py())
        except BaseException:
            run.abort()  # a failure or cancellation here: stop the worker now
            raise
        finally:
            if remove is not None:
                remove()
        if result.get("aborted"):
            raise ToolError("Operation aborted")
        if result.get("timedOut"):
            raise ToolError(timeout_message(timeout_ms, searched))
        if not result.get("ok"):
            raise ToolError(
                f"grep cannot run this pattern in the browser: {result.get('error')}. Rewrite it more simply "
                "(grep runs it as a JavaScript regular expression here, translated from Python's syntax)."
            )
        return [(int(index), [int(number) for number in numbers]) for index, numbers in result.get("matches") or []]

    return search
