"""Request URLs and headers."""

from __future__ import annotations

from collections.abc import Mapping

from ..types import (
    Model,
    SimpleStreamOptions,
)


def join_url(base_url: str, path: str) -> str:
    """``base + path`` by string concatenation (keeps query-string proxy base URLs working)."""
    return base_url.rstrip("/") + path


def merge_headers(*sources: Mapping[str, str | None] | None) -> dict[str, str]:
    """Merge header dicts, later ones winning case-insensitively; a ``None`` value removes a header."""
    merged: dict[str, tuple[str, str]] = {}
    for source in sources:
        if not source:
            continue
        for name, value in source.items():
            key = name.lower()
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = (name, str(value))
    return dict(merged.values())


def openai_headers(model: Model, options: SimpleStreamOptions, api_key: str | None) -> dict[str, str]:
    """The headers of both OpenAI APIs (Chat Completions and Responses): a bearer key, then the
    model's and the call's headers over them."""
    defaults: dict[str, str | None] = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        defaults["Authorization"] = f"Bearer {api_key}"
    return merge_headers(defaults, model.headers, options.headers)
