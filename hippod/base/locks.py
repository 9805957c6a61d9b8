"""One asyncio lock per object, dropped with the object."""

from __future__ import annotations

import asyncio
import weakref
from typing import Generic, TypeVar

Key = TypeVar("Key")


class LockPerObject(Generic[Key]):
    """Hands out the same lock for the same object (a store, a database) while it lives."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[Key, asyncio.Lock] = weakref.WeakKeyDictionary()

    def __call__(self, key: Key) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock
