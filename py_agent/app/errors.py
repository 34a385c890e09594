"""Error text for people: what happened to a request, and what to do next.

The saved messages keep pi's wording (``errorMessage``); :func:`classify_error` reads that text
back into one of a few kinds (never reached the host, lost mid-reply, an HTTP status from the
provider, bad data, timeout, aborted ...) and :func:`describe_error` turns a kind into the page's
words: our explanation, the next step that fits this provider (py_agent/app/network.py), and the
provider's own message as a quote. No exception class name, Python traceback text or library
documentation link is ever part of what the page shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ..ai.providers.errors import ABORTED_MESSAGE, MID_REPLY_MARKER
from ..ai.providers.errors import extract_error_message as _extract

__all__ = ["ErrorInfo", "classify_error", "clean_text", "describe_error", "friendly_error", "key_rejected"]

ErrorKind = Literal[
    "unreachable",  # no response at all: no network, DNS, refused, CORS
    "lost",  # the connection broke while the reply was arriving
    "cut_off",  # the body ended without the API's end marker
    "http",  # the provider answered with an error status
    "bad_data",  # the provider sent something that could not be read
    "timeout",  # no answer in time
    "stalled",  # the reply stopped sending for the stall timeout
    "aborted",  # stopped by the user
    "interrupted",  # the page went away while streaming
    "no_key",
    "other",
]

# The browser transport's words for a rejected fetch (py_agent/transports/fetch.py).
BROWSER_REFUSED = "The browser refused or could not complete the request"
_STATUS_TEXT = re.compile(r"^(\d{3})(?::|\s|$)\s*(.*)$", re.DOTALL)
_RETRY_DELAY = re.compile(r"^Server requested (\d+)s retry delay \(max: (\d+)s\)\.?\s*(.*)$", re.DOTALL)
_STALLED = re.compile(r"^Stream stalled: no data for (\S+)")
_PYDANTIC_LINK = re.compile(r"\s*For further information visit https?://errors\.pydantic\.dev\S*")
_CLASS_PREFIX = re.compile(r"\b(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning)\s*:\s*")
_CLASS_NAME = re.compile(r"\b(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b")
_ERRNO = re.compile(r"\[Errno -?\d+\]\s*")
_MAX_QUOTE = 600


@dataclass(frozen=True)
class ErrorInfo:
    kind: ErrorKind
    status: int | None = None
    quote: str | None = None
    """The provider's own words (an HTTP error body's message), if any."""
    detail: str = ""
    """Kind-specific facts: the stall time, the requested retry delay."""
    cors_suspected: bool = False
    """Never reached, as a browser reports it: CORS, an unreachable host and offline look alike."""


def clean_text(text: str) -> str:
    """``text`` without Python exception class names, errno tags and pydantic's documentation links."""
    text = _PYDANTIC_LINK.sub("", text)
    text = _CLASS_PREFIX.sub("", text)
    text = _CLASS_NAME.sub("error", text)
    text = _ERRNO.sub("", text)
    return " ".join(text.split()).strip()


def _quote(text: str) -> str | None:
    text = clean_text(text)
    if not text:
        return None
    return text if len(text) <= _MAX_QUOTE else text[:_MAX_QUOTE] + "…"


def _provider_words(body: str) -> str | None:
    """The message of an error body (JSON or text), else ``None``."""
    body = body.strip()
    if not body:
        return None
    message = _extract(body)
    if message is None and body.startswith(("{", "[")):
        return None  # JSON without a message: nothing a person can read
    return _quote(message if message is not None else body)


def classify_error(error_message: str | None, stop_reason: str = "error") -> ErrorInfo:
    """What happened, read from a saved ``errorMessage`` (pi's wording)."""
    text = (error_message or "").strip()
    if stop_reason == "aborted":
        return ErrorInfo("interrupted" if text.startswith("Interrupted") else "aborted")
    if text == ABORTED_MESSAGE:
        return ErrorInfo("aborted")
    if text.startswith("Connection error:"):
        rest = text.removeprefix("Connection error:").strip()
        if rest.startswith(MID_REPLY_MARKER):
            return ErrorInfo("lost")
        if rest.startswith("Request timed out"):
            return ErrorInfo("timeout")
        return ErrorInfo("unreachable", cors_suspected=BROWSER_REFUSED in rest)
    if text.startswith("Request timed out"):
        return ErrorInfo("timeout")
    match = _STALLED.match(text)
    if match:
        return ErrorInfo("stalled", detail=match.group(1))
    if text.startswith("Stream ended unexpectedly"):
        return ErrorInfo("cut_off")
    if text.startswith("Invalid JSON in SSE data") or text.startswith("Invalid stream"):
        return ErrorInfo("bad_data")
    if text.startswith("No API key for provider"):
        return ErrorInfo("no_key")
    match = _RETRY_DELAY.match(text)
    if match:
        delay = f"{match.group(1)}s/{match.group(2)}s"
        return ErrorInfo("http", status=429, quote=_quote(match.group(3)), detail=delay)
    match = _STATUS_TEXT.match(text)
    if match:
        return ErrorInfo("http", status=int(match.group(1)), quote=_provider_words(match.group(2)))
    return ErrorInfo("other", quote=_quote(text))


_KEY_WORDS = ("invalid api key", "invalid x-api-key", "incorrect api key", "api key not valid", "authentication")
_KEY_STATUS = re.compile(r"\b40[13]\b")


def key_rejected(error_message: str | None) -> bool:
    """Whether a failed reply says the provider refused the key: an answer (HTTP 401 or 403, or
    the provider's words about the key), never a request that got no answer, whatever its text
    holds (a custom server down on port 4010 is not a rejected key)."""
    info = classify_error(error_message)
    if info.kind == "http" and info.status in (401, 403):
        return True
    if info.kind not in ("http", "other"):
        return False
    text = (error_message or "").lower()
    return any(word in text for word in _KEY_WORDS) or (info.kind == "other" and bool(_KEY_STATUS.search(text)))


def _http_text(status: int | None, label: str, detail: str) -> str:
    if detail:  # "Server requested <n>s retry delay (max: <m>s)"
        asked, most = detail.split("/", 1)
        return (
            f"{label} is limiting requests and asked to wait {asked} before trying again, longer than "
            f"this app waits ({most}). Try again later."
        )
    if status in (401, 403):
        return f"{label} did not accept the API key (HTTP {status}). Check or replace the key in Settings → API keys."
    if status == 404:
        return f"{label} did not find what was asked for (HTTP 404): check the model and the provider's base URL."
    if status == 429:
        return f"{label} is limiting requests (HTTP 429). Wait a moment, then retry."
    if status is not None and status >= 500:
        return f"{label} had a server error (HTTP {status}). This is usually temporary: retry in a moment."
    if status is not None and 400 <= status < 500:
        return f"{label} refused the request (HTTP {status})."
    return f"{label} answered with an error (HTTP {status})."


def describe_error(
    error_message: str | None,
    *,
    stop_reason: str = "error",
    provider: str = "",
    label: str = "",
    advice: str = "",
    kept: bool = False,
) -> dict[str, Any]:
    """The page's view of a failed (or stopped) reply: ``{"kind", "text", "quote"?, "status"?}``.

    ``label`` names the provider; ``advice`` is what to do when it could not be reached
    (py_agent/app/network.py ``unreachable_advice``); ``kept``: part of the reply arrived.
    """
    info = classify_error(error_message, stop_reason)
    name = label or provider or "the provider"
    subject = name[:1].upper() + name[1:]
    kept_note = " The part that arrived is kept." if kept else ""
    if info.kind == "unreachable":
        text = f"The request never reached {name}: no connection could be made."
        if advice:
            text = f"{text} {advice}"
    elif info.kind == "lost":
        text = f"The connection to the provider was lost before the reply was complete.{kept_note} Retry to ask again."
    elif info.kind == "cut_off":
        text = f"The reply was cut off before its end.{kept_note} Retry to ask again."
    elif info.kind == "timeout":
        text = f"The provider did not answer in time. Retry, or check that {name} is up."
    elif info.kind == "stalled":
        text = (
            f"The provider sent nothing for {info.detail}, so the reply was stopped (the stall timeout is in "
            f"Settings → Chat).{kept_note}"
        )
    elif info.kind == "bad_data":
        text = f"The provider sent data that could not be read.{kept_note}"
    elif info.kind == "no_key":
        text = f"No API key is set for {name}: add one in Settings → API keys."
    elif info.kind == "aborted":
        text = "Stopped. The partial reply is kept." if kept else "Stopped before anything arrived."
    elif info.kind == "interrupted":
        text = error_message or "Interrupted."
    elif info.kind == "http":
        text = _http_text(info.status, subject, info.detail)
    else:  # not a provider's words: ours, cleaned
        text = f"The request failed: {info.quote}" if info.quote else "The request failed."
    view: dict[str, Any] = {"kind": info.kind, "text": text}
    if info.status is not None:
        view["status"] = info.status
    if info.quote and info.kind == "http":
        view["quote"] = info.quote
    return view


def friendly_error(text: str, label: str = "") -> str:
    """One line for a failed key test (the dialog says what to do): ``401: invalid x-api-key`` for
    an HTTP error with a message, else the words of :func:`describe_error`."""
    view = describe_error(text, label=label)
    quote = view.get("quote")
    if view["kind"] == "http" and quote and "status" in view:
        return f"{view['status']}: {quote}"
    return f"{view['text']} {name_quote(quote)}" if quote else str(view["text"])


def name_quote(quote: str) -> str:
    return f"The provider said: “{quote}”"
