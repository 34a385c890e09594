"""Provider errors: the exception that ends a stream, and how error bodies become messages."""

from __future__ import annotations

import json
from typing import Any

from .._util import MAX_JSON_DEPTH, json_stringify, json_too_deep

ABORTED_MESSAGE = "Request was aborted"
MID_REPLY_MARKER = "lost mid-reply:"
"""After ``Connection error:``, marks a connection that broke while the body arrived (the request
itself got through; py_agent/app/errors.py tells the two apart)."""


MAX_ERROR_BODY_CHARS = 4000
MAX_ERROR_BODY_BYTES = 1_000_000


class ProviderError(Exception):
    """A failure that ends the stream with this message (stop reason ``error`` unless aborted)."""


def parse_json_data(data: str) -> Any:
    """The JSON of an SSE ``data`` field; ``None`` for blank data (a keep-alive, skipped)."""
    if not data or data.isspace():
        return None
    if json_too_deep(data):
        raise ProviderError(f"Invalid JSON in SSE data: nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise ProviderError(f"Invalid JSON in SSE data: {data[:200]}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def format_delay(seconds: float) -> str:
    return f"{seconds:g}s"


def error_body_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def truncate_body(text: str) -> str:
    if len(text) > MAX_ERROR_BODY_CHARS:
        return f"{text[:MAX_ERROR_BODY_CHARS]}... [truncated {len(text) - MAX_ERROR_BODY_CHARS} chars]"
    return text


def try_json(text: str) -> Any:
    if not text.strip() or json_too_deep(text):
        return None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def extract_error_message(text: str) -> str | None:
    """The human message of an error body: ``error.message``, ``error`` (string), ``message`` or
    ``detail``; ``None`` when the body has none."""
    body = try_json(text)
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        if message is not None:
            return json_stringify(message)
    if isinstance(error, str) and error:
        return error
    for key in ("message", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
        if value:
            return json_stringify(value)
    return None


def openai_style_error(status: int, text: str) -> str:
    """``"<status> <message>"`` (OpenAI SDK wording; the message is found as in
    :func:`extract_error_message`, plus OpenRouter's ``error.metadata.raw``)."""
    if not text.strip():
        return f"{status} status code (no body)"
    message = extract_error_message(text)
    if message is None:
        return f"{status} {truncate_body(text)}"
    body = try_json(text)
    error = body.get("error") if isinstance(body, dict) else None
    raw = (
        error.get("metadata", {}).get("raw")
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict)
        else None
    )
    if raw:
        message = f"{message}\n{raw if isinstance(raw, str) else json_stringify(raw)}"
    return f"{status} {message}"


def summary_error_message(text: str) -> str:
    """The shortest readable form of an error body (for the retry-delay message)."""
    message = extract_error_message(text)
    if message is not None:
        return message
    return truncate_body(text.strip()) or "status code (no body)"
