"""SQL for reading and trimming the team store's audit log: `hippod.store.sqlite.auditlog` on PostgreSQL."""

from __future__ import annotations

from hippod.store.postgres.memories import Source, fetch
from hippod.store.postgres.pg import Conn
from hippod.store.records import Entry
from hippod.store.sleep_rows import decode_metadata


async def newest(conn: Source, tenant: str, *, op: str | None, since: str | None, limit: int) -> list[Entry]:
    """The tenant's entries, newest first, optionally of one op and from a time on."""
    where, params = "tenant_id = %s", [tenant]
    if op is not None:
        where += " AND op = %s"
        params.append(op)
    if since is not None:
        where += " AND ts >= %s"
        params.append(since)
    rows = await fetch(
        conn,
        f"SELECT id, ts, tenant_id, actor, op, target_id, metadata_json FROM audit_log WHERE {where} "
        "ORDER BY id DESC LIMIT %s",
        [*params, limit],
    )
    return [Entry(r[0], r[1], r[2], r[3], r[4], r[5], decode_metadata(r[6])) for r in rows]


async def prune(conn: Conn, before: str) -> int:
    """Delete the transaction's tenant's entries older than `before` (row-level security keeps every
    other tenant's); returns how many."""
    cursor = await conn.execute("DELETE FROM audit_log WHERE ts < %s", (before,))
    return cursor.rowcount
