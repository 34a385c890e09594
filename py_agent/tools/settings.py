"""User settings of the in-page tools (pure; the web app stores them with its other settings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["ToolSettings"]


@dataclass(frozen=True)
class ToolSettings:
    """What the user allowed. Network access is off unless turned on per tool."""

    javascript_network: bool = False
    """Let ``javascript`` code make network requests (its sandbox's CSP otherwise blocks them)."""
    python_network: bool = False
    """Let ``python`` code make network requests (and install ``pyodide-http`` for requests/urllib)."""
    javascript_timeout_ms: int = 60_000
    python_timeout_ms: int = 60_000
    """Time for the code itself; starting the interpreter does not count."""
    disabled_tools: frozenset[str] = frozenset()
    """Names of tools the user switched off."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["disabled_tools"] = sorted(self.disabled_tools)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ToolSettings:
        """Settings from stored JSON; unknown keys and values of the wrong type are ignored."""
        if not data:
            return cls()
        values: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name not in data:
                continue
            value = data[spec.name]
            default = getattr(cls(), spec.name)
            if isinstance(default, bool):
                if isinstance(value, bool):
                    values[spec.name] = value
            elif isinstance(default, int):
                if isinstance(value, int | float) and not isinstance(value, bool) and 100 <= value <= 3_600_000:
                    values[spec.name] = int(value)
            elif isinstance(value, list | tuple | set | frozenset):
                values[spec.name] = frozenset(str(v) for v in value)
        return cls(**values)
