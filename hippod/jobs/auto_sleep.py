"""autoSleep (memory-model.md §4, sleep.md §1): a store that took `autoSleep.threshold` (50) new
memories in the last 24 hours, all of them since its last sleep, is slept in the background.

A store is checked after each commit that adds memories, one check at a time, off the request's path.
An automatic sleep starts at most once per store per 24 hours, and it goes through `sleep_store`,
so it joins a sleep of that store already queued or running instead of running beside it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hippod.base import clock
from hippod.calls.daemon_view import DaemonView
from hippod.sleep.run import SleepOptions, sleep_store
from hippod.store.sqlite import memories
from hippod.store.stores import SqliteStore, Store

log = logging.getLogger("hippod.autosleep")

WINDOW = timedelta(hours=24)
DEFAULT_THRESHOLD = 50


@dataclass(frozen=True, slots=True)
class Settings:
    enabled: bool = True
    threshold: int = DEFAULT_THRESHOLD


def settings(config: dict[str, Any]) -> Settings:
    """`autoSleep` of a store's config; a value of the wrong kind falls back to its default."""
    given = config.get("autoSleep")
    if given is False:
        return Settings(enabled=False)
    if not isinstance(given, dict):
        return Settings()
    enabled = given.get("enabled", True)
    threshold = given.get("threshold", DEFAULT_THRESHOLD)
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
        threshold = DEFAULT_THRESHOLD
    return Settings(enabled=enabled is not False, threshold=threshold)


async def new_since_last_sleep(store: SqliteStore) -> int:
    """Memories created in the last 24 hours and after the store's last sleep."""
    since = clock.iso(clock.now() - WINDOW)
    last = await memories.get_meta(store.db.reader, "last_sleep")
    return await memories.count_created_after(store.db.reader, max(since, last or since))


class AutoSleep:
    """Watches the stores' new memories and starts their automatic sleeps."""

    def __init__(self, state: DaemonView) -> None:
        self.state = state
        self.started: dict[str, float] = {}  # store root -> when its last automatic sleep started
        self.checking: set[str] = set()

    def notice(self, store: Store) -> None:
        """Memories were just added to `store`: check it in the background unless a check is under way."""
        root = store.root
        if not isinstance(store, SqliteStore):  # the team store sleeps by the daily run
            return
        if root in self.checking or self.state.shutdown.is_set():
            return
        last = self.started.get(root)
        if last is not None and time.time() - last < WINDOW.total_seconds():
            return
        try:
            wanted = settings(store.config)
        except Exception:
            return  # a config.json that does not parse is reported by every verb that uses the store
        if not wanted.enabled:
            return
        self.checking.add(root)
        task = asyncio.get_running_loop().create_task(self._check(store, wanted.threshold))
        self.state.background.add(task)
        task.add_done_callback(self.state.background.discard)

    async def _check(self, store: SqliteStore, threshold: int) -> None:
        try:
            count = await new_since_last_sleep(store)
            if count < threshold:
                return
            self.started[store.root] = time.time()
            log.info(
                "autoSleep: %s took %d new memories since its last sleep; sleeping it", store.root, count
            )
            store.touch()
            await sleep_store(self.state, store, SleepOptions())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("autoSleep of %s failed", store.root)
        finally:
            self.checking.discard(store.root)
