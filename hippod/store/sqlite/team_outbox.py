"""SQL for `team_outbox`: the writes queued for the team server, in the global store (migration 13)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import aiosqlite

QUEUED, SENT, FAILED = "queued", "sent", "failed"


class Outgoing(NamedTuple):
    seq: int
    request_key: str
    body: str


async def enqueue(conn: aiosqlite.Connection, rows: Sequence[tuple[str, str]], now: str) -> list[bool]:
    """Queue (request key, JSON body) rows in order; for each, whether it was new (a key queued or sent
    before is not queued again)."""
    added: list[bool] = []
    for request_key, body in rows:
        cursor = await conn.execute(
            "INSERT INTO team_outbox (request_key, body, queued_at) VALUES (?, ?, ?) "
            "ON CONFLICT (request_key) DO NOTHING",
            (request_key, body, now),
        )
        added.append(cursor.rowcount == 1)
    return added


async def known(conn: aiosqlite.Connection, keys: Sequence[str]) -> set[str]:
    """Which of these request keys were queued before (sent or not)."""
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = list(keys[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = await conn.execute_fetchall(
            f"SELECT request_key FROM team_outbox WHERE request_key IN ({marks})", chunk
        )
        found |= {str(r[0]) for r in rows}
    return found


async def next_queued(conn: aiosqlite.Connection, limit: int) -> list[Outgoing]:
    """The oldest queued writes, in the order they were made."""
    rows = await conn.execute_fetchall(
        "SELECT seq, request_key, body FROM team_outbox WHERE status = ? ORDER BY seq LIMIT ?",
        (QUEUED, limit),
    )
    return [Outgoing(int(r[0]), str(r[1]), str(r[2])) for r in rows]


async def mark(conn: aiosqlite.Connection, seq: int, status: str, now: str, error: str | None = None) -> None:
    await conn.execute(
        "UPDATE team_outbox SET status = ?, done_at = ?, error = ? WHERE seq = ?", (status, now, error, seq)
    )


async def counts(conn: aiosqlite.Connection) -> dict[str, int]:
    """How many writes are queued, sent and failed."""
    rows = await conn.execute_fetchall("SELECT status, count(*) FROM team_outbox GROUP BY status")
    found = {str(status): int(n) for status, n in rows}
    return {status: found.get(status, 0) for status in (QUEUED, SENT, FAILED)}


async def clear(conn: aiosqlite.Connection) -> int:
    """Forget every write (leaving the team); how many were still queued."""
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM team_outbox WHERE status = ?", (QUEUED,)))
    await conn.execute("DELETE FROM team_outbox")
    return int(rows[0][0])
