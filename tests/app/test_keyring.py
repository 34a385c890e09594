"""The key ring while it reads the stored keys again (the app's start, another tab's change).

A send in that moment must still find its key (else the page asks for a key the user gave), and a
key saved in that moment must not be dropped by the read that began before it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from py_agent.app.keys import KeyRing, MemoryTabStore
from py_agent.app.storage import MemoryBackend


class SlowReadBackend(MemoryBackend):
    """``kv_all`` reads the store at once and answers when ``release`` is set, as IndexedDB
    answers a read with what was there when its transaction began."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()
        self.release = asyncio.Event()

    async def kv_all(self, store: str) -> dict[str, Any]:
        snapshot = await super().kv_all(store)
        self.reading.set()
        await self.release.wait()
        return snapshot


async def test_a_key_is_there_while_the_keys_are_read_again() -> None:
    backend = SlowReadBackend()
    backend.release.set()
    ring = KeyRing(backend, MemoryTabStore())
    await ring.set("openai", "sk-stored-0001", remember=True)
    backend.release.clear()
    reload = asyncio.create_task(ring.load())
    await backend.reading.wait()
    assert ring.get("openai") == "sk-stored-0001"
    backend.release.set()
    await reload
    assert ring.get("openai") == "sk-stored-0001"


async def test_a_key_saved_during_a_read_is_kept() -> None:
    backend = SlowReadBackend()
    ring = KeyRing(backend, MemoryTabStore())
    reload = asyncio.create_task(ring.load())
    await backend.reading.wait()  # the read has begun: the store holds no key
    backend.release.set()
    await ring.set("anthropic", "sk-ant-saved-0002", remember=True)
    await reload
    assert ring.get("anthropic") == "sk-ant-saved-0002"


async def test_a_key_removed_elsewhere_is_gone_after_the_read() -> None:
    backend = SlowReadBackend()
    backend.release.set()
    ring = KeyRing(backend, MemoryTabStore())
    await ring.set("openai", "sk-stored-0003", remember=True)
    await backend.kv_delete("keys", "openai")  # another tab removed it
    await ring.load()
    assert ring.get("openai") is None
    assert ring.providers() == []
