"""Keeping the near-copy index (migration 21) in step with the memories: the rows that triggers put in
`near_pending` are hashed (hippod.model.minhash) and their band keys written, a batch per
transaction.

An import catches up before it plans, so its probe compares only the few memories written since
(store/sqlite/import_probe.py); the daemon also catches up in the background after it opens a store
with many rows waiting (an upgraded store's every memory, or a day of remembers).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import aiosqlite

from hippod.model.tokenize import tokenize
from hippod.store.sqlite.db import Database

log = logging.getLogger("hippod.store")

BATCH = 2000
# Rows waiting past which the daemon hashes them in the background, not at the next import.
BACKGROUND_FROM = 10_000

_WAITING = (
    "SELECT p.row, m.tenant_id, m.content FROM near_pending p LEFT JOIN memories m ON m.rowid = p.row "
    "ORDER BY p.row LIMIT ?"
)


async def waiting(conn: aiosqlite.Connection) -> int:
    """How many memories wait to be hashed."""
    rows = await conn.execute_fetchall("SELECT count(*) FROM near_pending")
    return int(next(iter(rows))[0])


def _keys(rows: Sequence[Any]) -> list[tuple[int, int]]:
    """(key, row) of every band key of these memories (rows as _WAITING reads them)."""
    # Imported here, not at the top: numpy loads with the first batch, not with the daemon.
    from hippod.model.minhash import band_keys

    by_tenant: dict[str, list[tuple[int, frozenset[str]]]] = defaultdict(list)
    for row, tenant, content in rows:
        if content is not None:
            by_tenant[str(tenant)].append((int(row), frozenset(tokenize(str(content)))))
    out: list[tuple[int, int]] = []
    for tenant, items in by_tenant.items():
        for (row, _), keys in zip(items, band_keys(tenant, [tokens for _, tokens in items]), strict=True):
            out.extend((key, row) for key in keys)
    # In key order, the inserts walk the index's pages once instead of landing at random: 2.5
    # times faster at 100,000 memories.
    out.sort()
    return out


async def catch_up(db: Database) -> int:
    """Hash every memory waiting, BATCH to a transaction; returns how many were hashed.

    The hashing runs in a worker thread while the batch's transaction holds the writer, so a memory
    rewritten meanwhile cannot be marked done with its old text's keys.
    """
    done = 0
    while True:
        async with db.transaction() as conn:
            rows = list(await conn.execute_fetchall(_WAITING, (BATCH,)))
            if rows:
                keys = await asyncio.to_thread(_keys, rows)
                await conn.executemany("INSERT OR IGNORE INTO near_keys (key, row) VALUES (?, ?)", keys)
                await conn.executemany("DELETE FROM near_pending WHERE row = ?", [(r[0],) for r in rows])
        if not rows:
            return done
        done += len(rows)


def catch_up_sync(conn: sqlite3.Connection) -> int:
    """`catch_up` on a plain sqlite3 connection in autocommit mode (a bench's store)."""
    done = 0
    while rows := conn.execute(_WAITING, (BATCH,)).fetchall():
        conn.execute("BEGIN")
        conn.executemany("INSERT OR IGNORE INTO near_keys (key, row) VALUES (?, ?)", _keys(rows))
        conn.executemany("DELETE FROM near_pending WHERE row = ?", [(r[0],) for r in rows])
        conn.execute("COMMIT")
        done += len(rows)
    return done


class BackgroundIndexer:
    """Hashes a store's waiting memories in the background when many wait; stopped with the store."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin, unless a run is under way."""
        if self._task is None or self._task.done():
            # A fresh context: the run is not part of the request that opened the store.
            self._task = asyncio.get_running_loop().create_task(self._run(), context=contextvars.Context())

    async def _run(self) -> None:
        try:
            if await waiting(self._db.reader) < BACKGROUND_FROM:
                return
            log.info("indexing the memories of %s for near-copy checks", self._db.path)
            done = await catch_up(self._db)
            log.info("indexed %d memories of %s for near-copy checks", done, self._db.path)
        except asyncio.CancelledError:
            raise
        except Exception:  # the next import catches up instead
            log.exception("near-copy indexing failed for %s", self._db.path)

    async def close(self) -> None:
        """Stop a run under way (what it finished stays; the rest waits for the next open)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})
