"""Group commit on a real store database: concurrent remembers share transactions, each stays whole."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

import aiosqlite
import pytest

from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.store.records import Remembered
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import remembers
from hippod.store.sqlite.group_commit import GroupCommit


def _rows(path: str, sql: str) -> list[tuple[object, ...]]:
    """Read the committed state through a connection of its own, as another process would."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


class Counted:
    """remembers.write, counting the transactions it was called in and the items of each."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def __call__(self, conn: aiosqlite.Connection, items: list[Remembered]) -> list[bool]:
        self.batches.append(len(items))
        return await remembers.write(conn, items)


async def test_concurrent_remembers_share_a_transaction_and_all_land(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    counted = Counted()
    group = GroupCommit(database, counted)
    new = [make_memory(f"note number {n} about the build") for n in range(8)]
    stored = await asyncio.gather(*(group.submit(Remembered(m, "cli:1")) for m in new))
    assert stored == [True] * 8
    # All eight were queued before the writer's first turn: one transaction holds them all.
    assert counted.batches == [8]
    ids = {row[0] for row in _rows(database.path, "SELECT id FROM memories")}
    assert ids == {m.id for m in new}
    audits = _rows(database.path, "SELECT op, target_id FROM audit_log ORDER BY id")
    assert audits == [("remember", m.id) for m in new]
    assert _rows(database.path, "SELECT count(*) FROM memories_fts") == [(8,)]


async def test_a_tombstoned_text_in_a_batch_is_refused_alone(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    refused = make_memory("a secret that was rejected")
    digest = content_digest(refused.content)
    async with database.transaction() as conn:
        await conn.execute(
            "INSERT INTO rejected_values "
            "(tenant_id, digest, reason, rejected_by, rejected_at, normalized_chars) "
            "VALUES ('default', ?, 'test', 'cli:1', '2026-01-01T00:00:00Z', 10)",
            (digest,),
        )
    group = GroupCommit(database, remembers.write)
    first, second = make_memory("kept one"), make_memory("kept two")
    stored = await asyncio.gather(*(group.submit(Remembered(m, "cli:1")) for m in (first, refused, second)))
    assert stored == [True, False, True]
    assert {row[0] for row in _rows(database.path, "SELECT id FROM memories")} == {first.id, second.id}
    ops = _rows(database.path, "SELECT op, target_id FROM audit_log ORDER BY id")
    assert ops == [("remember", first.id), ("reject_refusal", None), ("remember", second.id)]


async def test_one_failing_item_fails_alone_and_leaves_nothing_half_written(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    """A row the database refuses (an id already taken) sinks its batch; the others are then
    written one per transaction, and the bad one leaves neither its memory nor its audit row."""
    taken = make_memory("already stored")
    await GroupCommit(database, remembers.write).submit(Remembered(taken, "cli:1"))
    group = GroupCommit(database, remembers.write)
    good = [make_memory(f"good note {n}") for n in range(3)]
    clash = make_memory("a different text under a taken id", id=taken.id)
    outcomes = await asyncio.gather(
        group.submit(Remembered(good[0], "cli:1")),
        group.submit(Remembered(good[1], "cli:1")),
        group.submit(Remembered(clash, "cli:1")),
        group.submit(Remembered(good[2], "cli:1")),
        return_exceptions=True,
    )
    assert outcomes[:2] == [True, True] and outcomes[3] is True
    assert isinstance(outcomes[2], sqlite3.IntegrityError)
    contents = {row[0] for row in _rows(database.path, "SELECT content FROM memories")}
    assert contents == {"already stored", *(m.content for m in good)}
    targets = [row[0] for row in _rows(database.path, "SELECT target_id FROM audit_log ORDER BY id")]
    assert sorted(targets) == sorted([taken.id, *(m.id for m in good)])


async def test_a_request_cancelled_while_queued_writes_nothing(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    group = GroupCommit(database, remembers.write)
    first, cancelled = make_memory("written first"), make_memory("cancelled before its turn")
    running = asyncio.ensure_future(group.submit(Remembered(first, "cli:1")))
    await asyncio.sleep(0)  # the first batch is taken and under way
    queued = asyncio.ensure_future(group.submit(Remembered(cancelled, "cli:1")))
    await asyncio.sleep(0)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert await running is True
    await group.close()
    assert {row[0] for row in _rows(database.path, "SELECT id FROM memories")} == {first.id}
    assert _rows(database.path, "SELECT count(*) FROM audit_log") == [(1,)]
