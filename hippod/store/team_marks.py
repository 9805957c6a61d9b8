"""SQL for `team_marks`: retrievals and outcome marks of team memories waiting for the sender, in the
global store (migration 14)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import aiosqlite

RETRIEVED, GOOD, BAD = "retrieved", "good", "bad"


class Mark(NamedTuple):
    seq: int
    kind: str
    memory_id: str


async def add(conn: aiosqlite.Connection, kind: str, ids: Sequence[str], now: str) -> None:
    """Queue one mark of `kind` on each id."""
    await conn.executemany(
        "INSERT INTO team_marks (kind, memory_id, at) VALUES (?, ?, ?)", [(kind, i, now) for i in ids]
    )


async def oldest(conn: aiosqlite.Connection, limit: int, through: int | None = None) -> list[Mark]:
    """The oldest queued marks, in the order they were made (only those up to `through`, if given)."""
    rows = await conn.execute_fetchall(
        "SELECT seq, kind, memory_id FROM team_marks WHERE seq <= ? ORDER BY seq LIMIT ?",
        (through if through is not None else 2**62, limit),
    )
    return [Mark(int(r[0]), str(r[1]), str(r[2])) for r in rows]


async def delete_through(conn: aiosqlite.Connection, seq: int) -> None:
    """Drop the marks up to `seq`, once delivered."""
    await conn.execute("DELETE FROM team_marks WHERE seq <= ?", (seq,))


async def count(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM team_marks"))
    return int(rows[0][0])


async def clear(conn: aiosqlite.Connection) -> None:
    """Forget every mark (leaving the team)."""
    await conn.execute("DELETE FROM team_marks")
