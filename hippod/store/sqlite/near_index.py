"""Keeping the near-copy index (migration 21) in step with the memories: the rows that triggers put in
`near_pending` are hashed (hippod.model.minhash) and their band keys written to level 0, a batch
per transaction; a level grown past its size is merged into the next, a slice per transaction.

Why levels: band keys are hashes, so a batch's keys land all over a single index. At a million
memories (24 million keys, at 24 a memory) writing 10,000 memories' keys touched most of its pages
and took 5 to 8 s; level 0 holds at most LEVEL0_KEYS, so writing to it costs the same at any size,
and a merge walks the next level once, in key order. Each key is rewritten once per level, log8 of
the store's size over level 0's.

An import catches up before it plans, so its probe compares only the few memories written since
(store/sqlite/import_probe.py); the daemon catches up and merges in the background after it opens a
store with many rows waiting (an upgraded store's every memory) and after an import.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import aiosqlite

from hippod.model.tokenize import tokenize
from hippod.store.sqlite.db import Database

log = logging.getLogger("hippod.store")

# Memories hashed per transaction: about half a second of the writer.
BATCH = 5_000
# Rows waiting past which the daemon hashes them in the background, not at the next import.
BACKGROUND_FROM = 10_000
# Rows waiting past which an import leaves them to the background and its probe asks the full-text
# index (near_lookup.py hashes up to this many in memory for a dry run).
WAITING_HASHED = 50_000
# Keys level 0 holds before it is merged into level 1; level n holds FANOUT times level n - 1.
LEVEL0_KEYS = 320_000  # 10,000 memories
FANOUT = 8
# Keys moved from one level to the next per transaction, so a merge never holds the writer long.
MERGE_SLICE = 100_000
# Keys turned into Python tuples at a time (each slice is one call into C that holds the GIL).
_SLICE = 8_192
_ADD = "INSERT OR IGNORE INTO near_keys (level, key, row) VALUES (0, ?, ?)"
_COUNT = (
    "INSERT INTO near_levels (level, keys) VALUES (?, ?) "
    "ON CONFLICT (level) DO UPDATE SET keys = max(0, keys + excluded.keys)"
)

_WAITING = (
    "SELECT p.row, m.tenant_id, m.content FROM near_pending p LEFT JOIN memories m ON m.rowid = p.row "
    "ORDER BY p.row LIMIT ?"
)


async def waiting(conn: aiosqlite.Connection) -> int:
    """How many memories wait to be hashed."""
    rows = await conn.execute_fetchall("SELECT count(*) FROM near_pending")
    return int(next(iter(rows))[0])


def _keys(rows: Sequence[Any]) -> list[tuple[int, int]]:
    """(key, row) of every band key of these memories (rows as _WAITING reads them), in key order."""
    # Imported here, not at the top: numpy loads with the first batch, not with the daemon.
    import numpy as np

    from hippod.model.minhash import band_keys

    by_tenant: dict[str, list[tuple[int, frozenset[str]]]] = defaultdict(list)
    for row, tenant, content in rows:
        if content is not None:
            by_tenant[str(tenant)].append((int(row), frozenset(tokenize(str(content)))))
    keys: list[int] = []
    owners: list[int] = []
    for tenant, items in by_tenant.items():
        for (row, _), found in zip(items, band_keys(tenant, [tokens for _, tokens in items]), strict=True):
            keys.extend(found)
            owners.extend([row] * len(found))
    # In key order, the inserts walk the index's pages once instead of landing at random: 2.5
    # times faster at 100,000 memories. numpy sorts without holding the GIL, where a sort of the
    # (key, row) tuples holds it, and the event loop with it, some 75 ms a batch; the tuples are
    # made a slice at a time for the same reason.
    key_column = np.array(keys, dtype=np.int64)
    row_column = np.array(owners, dtype=np.int64)
    order = np.lexsort((row_column, key_column))
    out: list[tuple[int, int]] = []
    for start in range(0, len(order), _SLICE):
        part = order[start : start + _SLICE]
        out.extend(zip(key_column[part].tolist(), row_column[part].tolist(), strict=True))
    return out


async def catch_up(db: Database, *, merge: bool = False) -> int:
    """Hash every memory waiting into level 0, BATCH to a transaction; returns how many were hashed.
    With `merge`, the levels are merged whenever level 0 is past its size (a store's first
    hashing, in the background), not only after.

    The hashing runs in a worker thread while the batch's transaction holds the writer, so a memory
    rewritten meanwhile cannot be marked done with its old text's keys.
    """
    done = 0
    while True:
        if merge and done and await _overfull(db.reader):
            await compact(db)
        async with db.transaction() as conn:
            rows = list(await conn.execute_fetchall(_WAITING, (BATCH,)))
            if rows:
                keys = await asyncio.to_thread(_keys, rows)
                added = await conn.executemany(_ADD, keys)
                await conn.execute(_COUNT, (0, max(added.rowcount, 0)))
                await conn.executemany("DELETE FROM near_pending WHERE row = ?", [(r[0],) for r in rows])
        if not rows:
            return done
        done += len(rows)


async def before_import(db: Database) -> None:
    """Hash what waits before an import plans, unless so much waits (an upgraded store) that the
    background indexer is the one to do it; the import's probe then asks the full-text index.

    In a context of its own: its commits are not the request's, so a Cancel still ends the import
    while it plans (a request's first commit marks the point past which it runs to its end).
    """
    count = await waiting(db.reader)
    if 0 < count <= WAITING_HASHED:
        task = asyncio.get_running_loop().create_task(catch_up(db), context=contextvars.Context())
        await task


def capacity(level: int) -> int:
    """The keys a level holds before it is merged into the next."""
    return int(LEVEL0_KEYS * FANOUT**level)


async def levels(conn: aiosqlite.Connection) -> dict[int, int]:
    """Keys held, by level."""
    rows = await conn.execute_fetchall("SELECT level, keys FROM near_levels ORDER BY level")
    return {int(level): int(keys) for level, keys in rows}


_SLICE_END = "SELECT key FROM near_keys WHERE level = ? ORDER BY key LIMIT 1 OFFSET ?"
_MOVE = (
    "INSERT OR IGNORE INTO near_keys (level, key, row) "
    "SELECT ?, key, row FROM near_keys WHERE level = ? AND key <= ?"
)
_DROP = "DELETE FROM near_keys WHERE level = ? AND key <= ?"


async def compact(db: Database) -> int:
    """Merge every level past its size into the next, in key order, a slice per transaction;
    returns how many keys moved."""
    moved = 0
    while True:
        full = await _overfull(db.reader)
        if not full:
            return moved
        level = full[0]
        while True:
            async with db.transaction() as conn:
                # The slice ends on a whole key: every row of its last key moves with it.
                end = list(await conn.execute_fetchall(_SLICE_END, (level, MERGE_SLICE - 1)))
                last = int(end[0][0]) if end else 1 << 62
                added = (await conn.execute(_MOVE, (level + 1, level, last))).rowcount
                dropped = (await conn.execute(_DROP, (level, last))).rowcount
                await conn.execute(_COUNT, (level + 1, added))
                if end:
                    await conn.execute(_COUNT, (level, -dropped))
                else:
                    # The level is empty now, whatever its count said.
                    await conn.execute("UPDATE near_levels SET keys = 0 WHERE level = ?", (level,))
            moved += dropped
            if not end:
                break


async def _overfull(conn: aiosqlite.Connection) -> list[int]:
    """The levels past their size, lowest first."""
    return [level for level, keys in (await levels(conn)).items() if keys > capacity(level)]


class BackgroundIndexer:
    """Hashes a store's waiting memories when many wait, and merges the levels grown past their
    size, in the background; stopped with the store."""

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
            if await waiting(self._db.reader) < BACKGROUND_FROM and not await _overfull(self._db.reader):
                return
            done = await catch_up(self._db, merge=True)
            moved = await compact(self._db)
            if done or moved:
                log.info("near-copy index of %s: %d hashed, %d keys merged", self._db.path, done, moved)
        except asyncio.CancelledError:
            raise
        except Exception:  # the next import catches up instead
            log.exception("near-copy indexing failed for %s", self._db.path)

    @property
    def busy(self) -> bool:
        """A run is under way."""
        return self._task is not None and not self._task.done()

    def stop(self) -> None:
        """End a run under way at its next await, writing nothing more (a store set aside as corrupt)."""
        if self._task is not None:
            self._task.cancel()

    async def close(self) -> None:
        """Stop a run under way (what it finished stays; the rest waits for the next open)."""
        self.stop()
        if self._task is not None:
            await asyncio.wait({self._task})
