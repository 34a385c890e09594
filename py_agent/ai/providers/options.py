"""The options of a provider call beyond ``SimpleStreamOptions``, and how a model's settings
(reasoning levels, compat flags) are read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models import clamp_thinking_level
from ..types import (
    Model,
    SimpleStreamOptions,
)


@dataclass(kw_only=True)
class ProviderStreamOptions(SimpleStreamOptions):
    """``SimpleStreamOptions`` plus the provider-specific extras pi's stream functions accept."""

    tool_choice: Any = None
    """Chat: ``"auto"|"none"|"required"|{...}``; Anthropic: ``"auto"|"any"|"none"|{...}``; Gemini: mode name."""
    reasoning_summary: str | None = None
    """Responses: ``"auto"|"detailed"|"concise"``."""
    service_tier: str | None = None
    """Responses: ``"flex"|"priority"|...``; also scales the cost."""
    interleaved_thinking: bool = True
    """Anthropic: send the interleaved-thinking beta (budget models)."""


def option(options: SimpleStreamOptions, name: str, default: Any = None) -> Any:
    """A provider-specific option, present only on :class:`ProviderStreamOptions` (or subclasses)."""
    value = getattr(options, name, None)
    return default if value is None else value


def reasoning_level(model: Model, options: SimpleStreamOptions) -> str | None:
    """The requested reasoning level clamped to what the model supports; ``None`` when off."""
    level = options.reasoning
    if not level or not model.reasoning:
        return None
    clamped = clamp_thinking_level(model, level)
    return None if clamped == "off" else clamped


def mapped_level(model: Model, level: str) -> Any:
    """``model.thinking_level_map[level]`` if present, else ``level`` (pi's ``map?.[x] ?? x``)."""
    mapping = model.thinking_level_map or {}
    value = mapping.get(level)
    return level if value is None else value


def compat_value(model: Model, name: str, default: Any = None) -> Any:
    compat = model.compat or {}
    value = compat.get(name)
    return default if value is None else value
