"""build.lock.json: every downloaded file pinned by name, version, file name, sha256 and size."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .config import LOCK_PATH, BuildError


@dataclass(frozen=True)
class Pin:
    """One pinned download: a wheel (through pip) or an npm tarball (through npm)."""

    name: str
    version: str
    filename: str
    sha256: str
    size: int

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @staticmethod
    def from_json(data: dict[str, Any]) -> Pin:
        return Pin(
            name=str(data["name"]),
            version=str(data["version"]),
            filename=str(data["filename"]),
            sha256=str(data["sha256"]),
            size=int(data["size"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "filename": self.filename,
            "sha256": self.sha256,
            "size": self.size,
        }


@dataclass(frozen=True)
class Lock:
    pyodide: Pin
    site: tuple[Pin, ...]
    test: tuple[Pin, ...]
    npm: tuple[Pin, ...] = ()
    sandbox: tuple[Pin, ...] = ()


def read_lock() -> Lock:
    if not LOCK_PATH.exists():
        raise BuildError(f"{LOCK_PATH.name} is missing: run `python3 build.py lock` to create it")
    data = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    try:
        return Lock(
            pyodide=Pin.from_json(data["pyodide"]),
            site=tuple(Pin.from_json(p) for p in data["wheels"]["site"]),
            test=tuple(Pin.from_json(p) for p in data["wheels"]["test"]),
            npm=tuple(Pin.from_json(p) for p in data.get("npm", [])),
            sandbox=tuple(Pin.from_json(p) for p in data["wheels"].get("sandbox", [])),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BuildError(
            f"{LOCK_PATH.name} is malformed ({exc!r}): regenerate it with `python3 build.py lock`"
        ) from exc
