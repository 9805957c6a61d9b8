"""The record of hook requests already applied (ingest.md §8): a spooled request is applied once.

A hook handler claims its request key inside the transaction that holds the request's effect, so
the key and the effect commit together or not at all. A replay whose key is already there (the
daemon died after committing it but before deleting its spool file, or the live request got
through after the client gave up waiting) then changes nothing. `session-end --once` keeps the
session ids that ended here the same way.
"""

from __future__ import annotations

import aiosqlite

from hippod.base.errors import HippoError

# Keys older than this are forgotten; a spool file is replayed long before (next start, or 3 tries
# 5 minutes apart).
KEEP_DAYS = 90


class AlreadyApplied(HippoError):
    """This hook request was applied before; the transaction that found out rolls back."""

    def __init__(self, key: str) -> None:
        super().__init__("bad_state", f"hook request {key} was already applied")
        self.key = key


async def claim(conn: aiosqlite.Connection, key: str | None, now: str) -> None:
    """Record `key` in the open transaction; raises AlreadyApplied when it is already recorded."""
    if key is not None and not await first(conn, key, now):
        raise AlreadyApplied(key)


async def first(conn: aiosqlite.Connection, key: str, now: str) -> bool:
    """Record `key` in the open transaction; False when it was recorded before."""
    cursor = await conn.execute(
        "INSERT INTO spool_applied (request_key, applied_at) VALUES (?, ?) ON CONFLICT DO NOTHING", (key, now)
    )
    return cursor.rowcount == 1


async def applied(conn: aiosqlite.Connection, key: str) -> bool:
    """True when `key` was recorded (by a transaction that has committed, read from `conn`)."""
    cursor = await conn.execute("SELECT 1 FROM spool_applied WHERE request_key = ?", (key,))
    return await cursor.fetchone() is not None


async def prune(conn: aiosqlite.Connection, before: str) -> None:
    """Forget keys applied before `before`."""
    await conn.execute("DELETE FROM spool_applied WHERE applied_at < ?", (before,))
