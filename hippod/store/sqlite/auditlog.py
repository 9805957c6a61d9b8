"""SQL for reading and trimming the audit log (memory-model.md §15); rows are written by memories.audit."""

from __future__ import annotations

import aiosqlite

from hippod.store.records import Entry
from hippod.store.sleep_rows import decode_metadata


async def newest(
    conn: aiosqlite.Connection, tenant: str, *, op: str | None, since: str | None, limit: int
) -> list[Entry]:
    """The tenant's entries, newest first, optionally of one op and from a time on."""
    where, params = "tenant_id = ?", [tenant]
    if op is not None:
        where += " AND op = ?"
        params.append(op)
    if since is not None:
        where += " AND ts >= ?"
        params.append(since)
    rows = await conn.execute_fetchall(
        f"SELECT id, ts, tenant_id, actor, op, target_id, metadata_json FROM audit_log WHERE {where} "
        "ORDER BY id DESC LIMIT ?",
        [*params, limit],
    )
    return [Entry(r[0], r[1], r[2], r[3], r[4], r[5], decode_metadata(r[6])) for r in rows]


async def prune(conn: aiosqlite.Connection, before: str) -> int:
    """Delete entries older than `before` (every tenant); returns how many."""
    cursor = await conn.execute("DELETE FROM audit_log WHERE ts < ?", (before,))
    return cursor.rowcount
