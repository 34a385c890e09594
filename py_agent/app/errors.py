"""Error text for people: provider errors made readable (the saved messages keep pi's wording)."""

from __future__ import annotations

import json
import re

__all__ = ["friendly_error"]

_STATUS_BODY = re.compile(r"^(\d{3})\s+(\{.*\})\s*$", re.DOTALL)


def _message(body: object) -> str | None:
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    for key in ("message", "detail"):
        if isinstance(body.get(key), str):
            return str(body[key])
    return None


def friendly_error(text: str) -> str:
    """``401 {"type":"error","error":{"message":"invalid x-api-key"}}`` -> ``401: invalid x-api-key``;
    other text unchanged."""
    match = _STATUS_BODY.match(text.strip())
    if match:
        try:
            message = _message(json.loads(match.group(2)))
        except ValueError:
            message = None
        if message:
            return f"{match.group(1)}: {message}"
    return text
