"""One open store: its database, config and identity, on either backend (`Store`), or a laptop's
SQLite store with its mirrors and vectors (`SqliteStore`); the registry (store/stores.py) opens the
latter, and the team store (store/team_store.py) makes its one."""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hippoctl.protocol.errors import NOT_ON_TEAM_STORE
from hippod.base.errors import HippoError
from hippod.embed.queue import EmbedQueue
from hippod.embed.service import EmbedService, Settings, settings
from hippod.mirrors.mirrors import MirrorWriter
from hippod.model.memory import Memory
from hippod.store import config as store_config
from hippod.store.backend import Backend
from hippod.store.records import Remembered
from hippod.store.sqlite import (
    agent_links,
    api_keys,
    auditlog,
    conflicts,
    dormant,
    memories,
    rejections,
    remembers,
    reports,
)
from hippod.store.sqlite import sleep as sleep_sql
from hippod.store.sqlite.db import Database
from hippod.store.sqlite.group_commit import DirectCommit, GroupCommit
from hippod.store.sqlite.near_index import BackgroundIndexer

if TYPE_CHECKING:
    from hippod.embed.nearest import NearestIndex  # numpy: loaded by the first recall that needs it
    from hippod.store.backend import StoreDatabase

# The SQLite store's row modules (store/backend.py).
SQLITE = Backend(
    memories, api_keys, rejections, conflicts, dormant, sleep_sql, auditlog, reports, agent_links
)


class Store:
    """One open store, on either backend: its database, its rows' functions, config and identity.

    A handler that reaches rows through `rows`, `keys`, ... (store/backend.py) runs on a `Store` of
    either backend; one that needs the SQLite store's own tables takes a `SqliteStore`, which a
    request's store becomes through `sqlite_only` (the team store is a plain `Store`).
    """

    def __init__(
        self,
        root: str,
        kind: str,
        db: StoreDatabase,
        schema: int,
        fts5: bool,
        embedder: EmbedService,
        *,
        backend: Backend,
    ) -> None:
        self.root = root
        self.kind = kind
        self.db = db
        # The memory rows' functions of this store's backend (store/backend.py).
        self.rows = backend.rows
        self.keys = backend.keys
        self.rejections = backend.rejections
        self.conflicts = backend.conflicts
        self.dormant = backend.dormant
        self.sleeps = backend.sleeps
        self.audit_log = backend.audit_log
        self.reports = backend.reports
        self.note_links = backend.note_links
        self.schema = schema
        self.fts5 = fts5
        self.project = "" if kind == "global" else os.path.basename(os.path.dirname(root))
        self.last_used = time.monotonic()
        self.mirrors = MirrorWriter.without_files(root)
        self.config_file = store_config.ConfigFile(root)
        self.embedder = embedder
        # Each remember is its own transaction, as the tenant of its request (SqliteStore groups them).
        self.remembers: GroupCommit[Remembered, bool] | DirectCommit[Remembered, bool] = DirectCommit(
            db, functools.partial(remembers.write, rows=backend.rows)
        )
        # Called after each commit that added memories; the registry shares its list with every store.
        self.listeners: list[Callable[[Store], None]] = []

    @property
    def config(self) -> dict[str, Any]:
        """config.json over the defaults; HippoError `bad_config` while the file does not parse."""
        return self.config_file.current()

    @property
    def team(self) -> bool:
        """The team store on PostgreSQL (store/team_store.py): no files beside it, no model, no ledger."""
        return not isinstance(self, SqliteStore)

    def embed_settings(self) -> Settings:
        # The team store keeps no vectors: its recall is the word search alone.
        return dataclasses.replace(settings(self.config), mode="off")

    def written(self, new: list[Memory]) -> None:
        """After a commit that added memories or changed their text: tell the listeners (autoSleep)."""
        if new:
            for listener in self.listeners:
                listener(self)

    def touch(self) -> None:
        self.last_used = time.monotonic()

    async def close(self, by: float | None = None) -> None:
        """Close the store: what is queued for it ends first."""
        await self.remembers.close()
        await self.db.close()


class SqliteStore(Store):
    """A laptop's store: its SQLite file and what lives beside it (mirrors, vectors, the ledger and
    the tables the team store has not got: decisions, cards, working memory, continuity, ...)."""

    db: Database

    def __init__(
        self, root: str, kind: str, db: Database, schema: int, fts5: bool, embedder: EmbedService
    ) -> None:
        super().__init__(root, kind, db, schema, fts5, embedder, backend=SQLITE)
        self.mirrors = MirrorWriter(
            root, self._load, self._stats, lambda: self.db.reader, self._mirror_layout
        )
        self.embed_queue = EmbedQueue(db, self.embed_settings, embedder, self.vectors_written)
        self.near_indexer = BackgroundIndexer(db)
        # The store's vectors in memory, for recall's candidates by meaning; made by the first
        # recall that uses it (recall/search.py).
        self.nearest: NearestIndex | None = None
        # Concurrent remembers share a transaction (store/sqlite/group_commit.py).
        self.remembers = GroupCommit(db, remembers.write)
        # Whether a goal was ever active in this store since it opened (None: not read yet), so that
        # a recall in a store whose stacks are empty, nearly every store, asks nothing about goals.
        self.goals_pushed: bool | None = None

    def embed_settings(self) -> Settings:
        return settings(self.config)

    def _mirror_layout(self) -> str:
        """config.json's `mirrors.layout` (mirrors/mirrors.py)."""
        return store_config.mirror_layout(self.config)

    def vectors_written(self, model: str, rows: list[tuple[str, bytes]]) -> None:
        """Vectors being stored: into the nearest index, when it holds that model's."""
        if self.nearest is not None and self.nearest.model == model:
            self.nearest.put(rows)

    def written(self, new: list[Memory]) -> None:
        """After a commit that added memories or changed their text: mirror them, embed them and
        tell the listeners (autoSleep)."""
        self.mirrors.changed(new)
        self.embed_queue.changed_ids(m.id for m in new)
        super().written(new)

    def reloaded(self) -> None:
        """After a restore replaced the database under it: forget the vectors read from the old one
        and bring the mirrors in line with the new, whose goals are read again."""
        self.nearest = None
        self.goals_pushed = None
        self.mirrors.heal()

    async def _load(self, ids: list[str]) -> list[Memory]:
        return await memories.get_many(self.db.reader, ids)

    async def _stats(self) -> dict[str, Any]:
        meta = await reports.all_meta(self.db.reader)
        return {
            "total_remembered": int(meta.get("total_remembered", 0)),
            "total_recalled": int(meta.get("total_recalled", 0)),
            "total_forgotten": int(meta.get("total_forgotten", 0)),
            "consolidation_runs": await sleep_sql.recent_runs(self.db.reader),
        }

    async def close(self, by: float | None = None) -> None:
        """Close the store: what is queued for it ends first. `by` (time.monotonic()): when a
        stopping daemon stops writing mirrors (the next open heals the rest)."""
        await self.remembers.close()
        await self.embed_queue.close()
        await self.near_indexer.close()
        await self.mirrors.close(by)
        await self.db.close()


def sqlite_only(store: Store, what: str) -> SqliteStore:
    """The store as a laptop's SQLite store, for `what` (a verb, a tool, an option), which needs the
    tables the team store has not got; HippoError `not_on_team_store` on the team store.

    A team server refuses the verbs that need them before their handler runs (each body's
    `on_team`, hippoctl/protocol/body.py); this is the typed guarantee behind that refusal, and the
    refusal of an option of a verb the team server otherwise serves.
    """
    if isinstance(store, SqliteStore):
        return store
    raise HippoError(NOT_ON_TEAM_STORE, f"a team server does not serve {what}: it needs a laptop's own store")
