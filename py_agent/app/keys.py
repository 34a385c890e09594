"""API keys: remembered on this device (the ``keys`` store) or kept for this tab only.

A key is only ever handed to the provider request of its own provider (``get`` is the agent's
``get_api_key``). The ring also knows every key it holds, so text leaving the app (errors shown or
saved, exports) can be scrubbed with :meth:`KeyRing.redact`. Nothing here logs or returns a key to
the page: the page only learns *whether* a provider has a key and where it is kept.
"""

from __future__ import annotations

import time
from typing import Any, Literal, Protocol

from .storage import StorageBackend

__all__ = ["KeyPlace", "KeyRing", "MemoryTabStore", "TabKeyStore"]

KeyPlace = Literal["device", "tab"]
REDACTED = "[redacted key]"
_MIN_SECRET = 4  # shorter strings are not scrubbed (they would mangle ordinary text)


class TabKeyStore(Protocol):
    """Keys for this tab only (the page's ``sessionStorage``: gone when the tab closes)."""

    def get_all(self) -> dict[str, str]: ...

    def set(self, provider: str, key: str) -> None: ...

    def delete(self, provider: str) -> None: ...

    def clear(self) -> None: ...


class MemoryTabStore:
    def __init__(self) -> None:
        self.keys: dict[str, str] = {}

    def get_all(self) -> dict[str, str]:
        return dict(self.keys)

    def set(self, provider: str, key: str) -> None:
        self.keys[provider] = key

    def delete(self, provider: str) -> None:
        self.keys.pop(provider, None)

    def clear(self) -> None:
        self.keys.clear()


class KeyRing:
    def __init__(self, backend: StorageBackend, tab: TabKeyStore) -> None:
        self._backend = backend
        self._tab = tab
        self._device: dict[str, str] = {}
        self._tab_keys: dict[str, str] = {}
        self._saved_at: dict[str, int] = {}
        self._version = 0  # bumped as a change starts: a ``load`` under way reads again

    async def load(self) -> None:
        """Read the stored keys again (the app's start; another tab changed them).

        Until the read is done the ring answers with what it held, so a send meanwhile finds its
        key. A change made here during the read is read again, not overwritten: IndexedDB orders
        a read after a write begun before it."""
        while True:
            version = self._version
            stored = await self._backend.kv_all("keys")
            if version == self._version:
                break
        device: dict[str, str] = {}
        saved_at: dict[str, int] = {}
        for provider, value in stored.items():
            key = value.get("key") if isinstance(value, dict) else value
            if isinstance(key, str) and key:
                device[provider] = key
                saved = value.get("savedAt") if isinstance(value, dict) else None
                if isinstance(saved, int):
                    saved_at[provider] = saved
        self._device, self._saved_at = device, saved_at
        self._tab_keys = {p: k for p, k in self._tab.get_all().items() if isinstance(k, str) and k}

    def get(self, provider: str) -> str | None:
        """The key for ``provider`` (this tab's first), for that provider's requests only."""
        return self._tab_keys.get(provider) or self._device.get(provider)

    def has(self, provider: str) -> bool:
        return self.get(provider) is not None

    def place(self, provider: str) -> KeyPlace | None:
        if provider in self._tab_keys:
            return "tab"
        if provider in self._device:
            return "device"
        return None

    def providers(self) -> list[dict[str, Any]]:
        """Providers that have a key: ``{provider, place, savedAt}`` (never the key)."""
        names = sorted(set(self._device) | set(self._tab_keys))
        return [{"provider": p, "place": self.place(p), "savedAt": self._saved_at.get(p)} for p in names]

    async def set(self, provider: str, key: str, remember: bool) -> None:
        key = key.strip()
        if not key:
            raise ValueError("The key is empty")
        self._version += 1
        if remember:
            saved_at = int(time.time() * 1000)
            await self._backend.kv_put("keys", provider, {"key": key, "savedAt": saved_at})
            self._device[provider] = key
            self._saved_at[provider] = saved_at
            self._tab.delete(provider)
            self._tab_keys.pop(provider, None)
        else:
            self._tab.set(provider, key)
            self._tab_keys[provider] = key
            if provider in self._device:
                await self._backend.kv_delete("keys", provider)
                self._device.pop(provider, None)

    async def delete(self, provider: str) -> None:
        self._version += 1
        await self._backend.kv_delete("keys", provider)
        self._tab.delete(provider)
        self._device.pop(provider, None)
        self._tab_keys.pop(provider, None)
        self._saved_at.pop(provider, None)

    async def forget_all(self) -> None:
        self._version += 1
        await self._backend.kv_clear("keys")
        self._tab.clear()
        self._device.clear()
        self._tab_keys.clear()
        self._saved_at.clear()

    def secrets(self) -> list[str]:
        values = {*self._device.values(), *self._tab_keys.values()}
        return sorted((v for v in values if len(v) >= _MIN_SECRET), key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every key this ring holds replaced by ``[redacted key]``."""
        if not text:
            return text
        for secret in self.secrets():
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text
