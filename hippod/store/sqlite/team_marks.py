"""SQL for `team_marks`: retrievals and outcome marks of team memories waiting for the sender, in the
global store (migration 14), and the note of the batch being sent (meta INFLIGHT_KEY: its last mark),
so that a batch sent again after a lost answer, or a restart, holds the same marks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import aiosqlite

from hippod.store.sqlite import memories

RETRIEVED, GOOD, BAD = "retrieved", "good", "bad"
INFLIGHT_KEY = "team_marks_inflight"


class Mark(NamedTuple):
    seq: int
    kind: str
    memory_id: str


async def add(conn: aiosqlite.Connection, kind: str, ids: Sequence[str], now: str) -> None:
    """Queue one mark of `kind` on each id."""
    await conn.executemany(
        "INSERT INTO team_marks (kind, memory_id, at) VALUES (?, ?, ?)", [(kind, i, now) for i in ids]
    )


async def in_flight(conn: aiosqlite.Connection) -> int | None:
    """The last mark of the batch being sent, or None when none is."""
    noted = await memories.get_meta(conn, INFLIGHT_KEY)
    return None if noted is None else int(noted)


async def oldest(conn: aiosqlite.Connection, limit: int, through: int | None = None) -> list[Mark]:
    """The oldest queued marks, in the order they were made (only those up to `through`, if given)."""
    rows = await conn.execute_fetchall(
        "SELECT seq, kind, memory_id FROM team_marks WHERE ? IS NULL OR seq <= ? ORDER BY seq LIMIT ?",
        (through, through, limit),
    )
    return [Mark(int(r[0]), str(r[1]), str(r[2])) for r in rows]


async def begin_batch(conn: aiosqlite.Connection, through: int) -> None:
    """Note the batch about to be sent first, by its last mark."""
    await memories.set_meta(conn, INFLIGHT_KEY, str(through))


async def delete_through(conn: aiosqlite.Connection, seq: int) -> None:
    """Drop the marks up to `seq`, once delivered, and the note of their batch."""
    await conn.execute("DELETE FROM team_marks WHERE seq <= ?", (seq,))
    await conn.execute("DELETE FROM meta WHERE key = ?", (INFLIGHT_KEY,))


async def count(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM team_marks"))
    return int(rows[0][0])


async def clear(conn: aiosqlite.Connection) -> None:
    """Forget every mark and the batch being sent (leaving the team)."""
    await conn.execute("DELETE FROM team_marks")
    await conn.execute("DELETE FROM meta WHERE key = ?", (INFLIGHT_KEY,))
