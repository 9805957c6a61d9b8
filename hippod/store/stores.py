"""Finding stores from a working directory, and opening each one once (daemon.md §5, memory-model.md §1)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable

from hippod.base.errors import HippoError
from hippod.embed.service import EmbedService
from hippod.store import gitignore
from hippod.store.roots import DB_NAME, find_project_root, global_root
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.db import Database

# What the registry hands out, and the narrowing to it; their callers name them from here
# (store/store.py defines them).
from hippod.store.store import SqliteStore as SqliteStore
from hippod.store.store import Store as Store
from hippod.store.store import sqlite_only as sqlite_only

log = logging.getLogger("hippod.stores")


def _probe(path: str) -> str | None:
    """Why SQLite cannot read the file at `path` as a database now, or None (blocking)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return None  # cannot even open it: not a question of corruption
    try:
        conn.execute("PRAGMA application_id").fetchone()
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        return str(exc) if sqlite_errors.is_corrupt(exc) else None
    finally:
        conn.close()
    return None


def _file_identity(path: str) -> tuple[int, int, int, int] | None:
    """What tells one file at `path` from another: a replaced or rewritten file differs."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class StoreRegistry:
    """Open stores keyed by the realpath of their root; concurrent first uses share one opening.

    A store whose file is corrupt is set aside: it is logged once, and each use raises its
    `store_corrupt` error without opening the file again, until the file is replaced or changed.
    """

    def __init__(self) -> None:
        self.global_root = global_root()
        self.embedder = EmbedService()
        self._opening: dict[str, asyncio.Task[SqliteStore]] = {}
        self.stores: dict[str, SqliteStore] = {}
        self.listeners: list[Callable[[Store], None]] = []
        # Every store opened since the daemon started (the scheduled card reclaim visits them).
        self.opened: set[str] = set()
        # A team server's one store, on PostgreSQL (open_team); None on a laptop.
        self.team: Store | None = None

        # root -> (the file's identity when it was found corrupt, the error it raised)
        self._set_aside: dict[str, tuple[tuple[int, int, int, int] | None, HippoError]] = {}
        # Open stores found corrupt: never used again, closed at shutdown.
        self._quarantined: list[SqliteStore] = []
        # Roots whose file a restore is putting in place: opening one waits until it is there.
        self._held: dict[str, asyncio.Event] = {}

    def _aside(self, root: str) -> HippoError | None:
        """The error of a store set aside whose file has not changed since; None otherwise."""
        entry = self._set_aside.get(root)
        if entry is None:
            return None
        if _file_identity(os.path.join(root, DB_NAME)) != entry[0]:
            del self._set_aside[root]
            return None
        error = entry[1]
        return HippoError(error.code, error.message, hint=error.hint, details=error.details)

    def project_root_for(self, cwd: str) -> str | None:
        if self.team is not None:
            return None
        return find_project_root(cwd, self.global_root)

    async def open_team(self, dsn: str, *, pool_max: int, wait: float) -> Store:
        """Serve the team's database as the only store (a team server): every request, whatever its
        folder, reads and writes it, as its own tenant."""
        from hippod.store.team_store import open_team_store  # psycopg: a team server's alone

        self.team = await open_team_store(
            dsn, os.path.join(self.global_root, "team"), self.embedder, pool_max=pool_max, wait=wait
        )
        return self.team

    async def open(self, root: str) -> Store:
        """Open (creating when needed) the store at root, or return it if already open.

        The opening runs in a task of its own that every caller awaits through a shield, so a
        cancelled caller neither cancels it for the others nor leaves a half-opened store.
        """
        if self.team is not None:
            return self.team
        # Open stores are keyed by their real path: a root given as one is found without a lookup.
        store = self.stores.get(root)
        if store is None:
            root = os.path.realpath(root)
            store = self.stores.get(root)
        if store is not None:
            store.touch()
            return store
        held = self._held.get(root)
        if held is not None:
            await held.wait()
            return await self.open(root)
        aside = self._aside(root)
        if aside is not None:
            raise aside
        opening = self._opening.get(root)
        if opening is None:
            opening = asyncio.get_running_loop().create_task(self._open_new(root))
            self._opening[root] = opening
        return await asyncio.shield(opening)

    async def _open_new(self, root: str) -> SqliteStore:
        try:
            kind = "global" if root == self.global_root else "project"
            os.makedirs(root, mode=0o700, exist_ok=True)
            path = os.path.join(root, DB_NAME)
            try:
                db, prepared = await Database.open(path)
            except HippoError as exc:
                if exc.code == sqlite_errors.CORRUPT:
                    self._set_aside[root] = (_file_identity(path), exc)
                    log.warning("%s; set aside until the file is replaced", exc.message)
                raise
            store = SqliteStore(root, kind, db, prepared.schema, prepared.fts5, self.embedder)
            store.listeners = self.listeners
            self.stores[root] = store
            self.opened.add(root)
            try:
                await gitignore.ensure(store)
            except Exception:
                log.exception("writing the .gitignore of %s failed", root)
            # A daemon that was killed may have left mirrors unwritten or stale: heal them now.
            store.mirrors.heal()
            # And one that stopped while embedding left memories without a vector: embed them.
            store.embed_queue.resume()
            # An upgraded store's memories wait for their near-copy keys: hash them before an import
            # needs them.
            store.near_indexer.start()
            return store
        finally:
            del self._opening[root]

    async def corrupt_error(self, exc: BaseException) -> HippoError | None:
        """After a request failed on a file SQLite calls corrupt: set aside each open store whose
        file no longer reads as a database, and return the named error (None for other errors).

        Damage deeper in a file than its header and schema is named without the file, since only
        `doctor`'s quick_check can tell which store holds it.
        """
        if not sqlite_errors.is_corrupt(exc):
            return None
        found: HippoError | None = None
        for root, store in list(self.stores.items()):
            cause = await asyncio.to_thread(_probe, store.db.path)
            if cause is None:
                continue
            error = sqlite_errors.corrupt(store.db.path, cause)
            del self.stores[root]
            # Not closed now: closing checkpoints the WAL into the damaged file. Nor written to by
            # the background hashing of its near-copy keys.
            store.near_indexer.stop()
            self._quarantined.append(store)
            self._set_aside[root] = (_file_identity(store.db.path), error)
            log.warning("%s; set aside until the file is replaced", error.message)
            found = found or error
        if found is None:
            found = HippoError(
                sqlite_errors.CORRUPT, f"a store is corrupt ({exc})", hint="hippoctl doctor names it"
            )
        return HippoError(found.code, found.message, hint=found.hint, details=found.details)

    async def swap_file(self, root: str, new: str, keep: str) -> None:
        """Put the database file `new` in place of the store's at root, which is not open (a corrupt
        file set aside, or none): the file there moves to `keep`, with its -wal, and the store is not
        opened by anyone until the new file is in place."""
        root = os.path.realpath(root)
        path = os.path.join(root, DB_NAME)
        held = self._held[root] = asyncio.Event()
        try:
            if os.path.lexists(path):
                os.replace(path, keep)
            for store in [s for s in self._quarantined if s.root == root]:
                # Closing checkpoints its WAL into the file now at `keep`, and removes the WAL.
                self._quarantined.remove(store)
                await _close_logged(store)
            if os.path.lexists(path + "-wal"):
                os.replace(path + "-wal", keep + "-wal")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path + "-shm")
            os.replace(new, path)
            self._set_aside.pop(root, None)
        finally:
            del self._held[root]
            held.set()

    async def settled(self) -> None:
        """Wait for the bookkeeping writes that replies left in every open store (Database.settled)."""
        if self.team is not None:
            await self.team.db.settled()
        for store in list(self.stores.values()):
            await store.db.settled()

    async def close_idle(self, max_idle_seconds: float) -> None:
        """Checkpoint and close project stores unused for max_idle_seconds; the global store stays open."""
        cutoff = time.monotonic() - max_idle_seconds
        for root, store in list(self.stores.items()):
            # Not while it embeds or hashes: closing would stop that until the store is next opened.
            busy = store.embed_queue.busy or store.near_indexer.busy
            if store.kind == "project" and store.last_used < cutoff and not busy:
                del self.stores[root]
                await _close_logged(store)

    async def close(self, root: str) -> None:
        """Close the store at root if it is open (before its folder is removed)."""
        store = self.stores.pop(os.path.realpath(root), None)
        if store is not None:
            await _close_logged(store)

    def stop_embedding(self) -> None:
        """The daemon is stopping: every open store's background embedding ends at its next batch."""
        for store in self.stores.values():
            store.embed_queue.stop()

    async def close_all(self, by: float | None = None) -> None:
        """Close every store (`by`: see Store.close)."""
        if self.team is not None:
            await _close_logged(self.team, by)
        # An open under way ends in self.stores (its callers wait through a shield): wait for it, or
        # its database stays open and the daemon's exit waits on its threads.
        while self._opening:
            await asyncio.wait(set(self._opening.values()))
        for root in list(self.stores):
            await _close_logged(self.stores.pop(root), by)
        while self._quarantined:
            await _close_logged(self._quarantined.pop(), by)


async def _close_logged(store: Store, by: float | None = None) -> None:
    """Close a store; a failure is logged and does not stop the others from closing."""
    try:
        await store.close(by)
    except Exception:
        log.exception("closing the store at %s failed", store.root)
