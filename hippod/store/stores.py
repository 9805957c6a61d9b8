"""Finding stores from a working directory, and opening each one once (daemon.md §5, memory-model.md §1)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

import platformdirs

from hippoctl.protocol.paths import home_override
from hippod.embed.queue import EmbedQueue
from hippod.embed.service import EmbedService, Settings, settings
from hippod.store import config as store_config
from hippod.store import gitignore, memories
from hippod.store import sleep as sleep_sql
from hippod.store.db import DB_NAME, Database
from hippod.store.mirrors import MirrorWriter
from hippod.store.records import Memory

log = logging.getLogger("hippod.stores")

PROJECT_DIR = ".hippo"


def global_root() -> str:
    """$HIPPO_HOME, else the platformdirs user data dir for app "hippo"."""
    return home_override() or os.path.realpath(platformdirs.user_data_dir("hippo", appauthor=False))


def find_project_root(cwd: str, global_root_path: str) -> str | None:
    """The nearest `.hippo/` holding hippo.db at or above cwd, skipping the global root itself."""
    current = os.path.realpath(cwd)
    while True:
        candidate = os.path.join(current, PROJECT_DIR)
        if (
            os.path.isfile(os.path.join(candidate, DB_NAME))
            and os.path.realpath(candidate) != global_root_path
        ):
            return os.path.realpath(candidate)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class Store:
    """One open store: its database, config, mirrors and identity."""

    def __init__(
        self, root: str, kind: str, db: Database, schema: int, fts5: bool, embedder: EmbedService
    ) -> None:
        self.root = root
        self.kind = kind
        self.db = db
        self.schema = schema
        self.fts5 = fts5
        self.project = "" if kind == "global" else os.path.basename(os.path.dirname(root))
        self.last_used = time.monotonic()
        self.mirrors = MirrorWriter(root, self._load, self._stats, lambda: self.db.reader)
        self.config_file = store_config.ConfigFile(root)
        self.embedder = embedder
        self.embed_queue = EmbedQueue(db, self.embed_settings, embedder)

    @property
    def config(self) -> dict[str, Any]:
        """config.json over the defaults; HippoError `bad_config` while the file does not parse."""
        return self.config_file.current()

    def embed_settings(self) -> Settings:
        return settings(self.config)

    def written(self, new: list[Memory]) -> None:
        """After a commit that added memories or changed their text: mirror them and embed them."""
        self.mirrors.changed(new)
        self.embed_queue.changed_ids(m.id for m in new)

    def touch(self) -> None:
        self.last_used = time.monotonic()

    async def _load(self, ids: list[str]) -> list[Memory]:
        return await memories.get_many(self.db.reader, ids)

    async def _stats(self) -> dict[str, Any]:
        meta = await memories.all_meta(self.db.reader)
        return {
            "total_remembered": int(meta.get("total_remembered", 0)),
            "total_recalled": int(meta.get("total_recalled", 0)),
            "total_forgotten": int(meta.get("total_forgotten", 0)),
            "consolidation_runs": await sleep_sql.recent_runs(self.db.reader),
        }

    async def close(self) -> None:
        await self.embed_queue.close()
        await self.mirrors.close()
        await self.db.close()


class StoreRegistry:
    """Open stores keyed by the realpath of their root; concurrent first uses share one opening."""

    def __init__(self) -> None:
        self.global_root = global_root()
        self.embedder = EmbedService()
        self._opening: dict[str, asyncio.Task[Store]] = {}
        self.stores: dict[str, Store] = {}

    def project_root_for(self, cwd: str) -> str | None:
        return find_project_root(cwd, self.global_root)

    async def open(self, root: str) -> Store:
        """Open (creating when needed) the store at root, or return it if already open.

        The opening runs in a task of its own that every caller awaits through a shield, so a
        cancelled caller neither cancels it for the others nor leaves a half-opened store.
        """
        root = os.path.realpath(root)
        store = self.stores.get(root)
        if store is not None:
            store.touch()
            return store
        opening = self._opening.get(root)
        if opening is None:
            opening = asyncio.get_running_loop().create_task(self._open_new(root))
            self._opening[root] = opening
        return await asyncio.shield(opening)

    async def _open_new(self, root: str) -> Store:
        try:
            kind = "global" if root == self.global_root else "project"
            os.makedirs(root, mode=0o700, exist_ok=True)
            db, prepared = await Database.open(os.path.join(root, DB_NAME))
            store = Store(root, kind, db, prepared.schema, prepared.fts5, self.embedder)
            self.stores[root] = store
            try:
                await gitignore.ensure(store)
            except Exception:
                log.exception("writing the .gitignore of %s failed", root)
            # A daemon that was killed may have left mirrors unwritten or stale: heal them now.
            store.mirrors.heal()
            return store
        finally:
            del self._opening[root]

    async def close_idle(self, max_idle_seconds: float) -> None:
        """Checkpoint and close project stores unused for max_idle_seconds; the global store stays open."""
        cutoff = time.monotonic() - max_idle_seconds
        for root, store in list(self.stores.items()):
            if store.kind == "project" and store.last_used < cutoff:
                del self.stores[root]
                await _close_logged(store)

    async def close_all(self) -> None:
        for root in list(self.stores):
            await _close_logged(self.stores.pop(root))


async def _close_logged(store: Store) -> None:
    """Close a store; a failure is logged and does not stop the others from closing."""
    try:
        await store.close()
    except Exception:
        log.exception("closing the store at %s failed", store.root)
