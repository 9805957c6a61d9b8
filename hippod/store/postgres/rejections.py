"""SQL for the team store's tombstones: the functions of `hippod.store.sqlite.rejections`, on PostgreSQL.

The team store holds memories, their dormant copies and their archive (no decisions, compactions or
working memory, which stay on each laptop), so rejecting a value there tombstones its digest,
deletes its live and dormant copies and archives its raw ones. Each member's cache drops the copies
it holds at its next sync.
"""

from __future__ import annotations

from hippod.store.postgres import dormant, memories
from hippod.store.postgres.memories import Source, fetch
from hippod.store.postgres.pg import Conn
from hippod.store.records import Rejection

_COLS = "digest, reason, rejected_by, rejected_at, source_memory_id, normalized_chars"


async def all_digests(conn: Source, tenant: str) -> set[str]:
    """Every tombstoned digest of the tenant."""
    rows = await fetch(conn, "SELECT digest FROM rejected_values WHERE tenant_id = %s", (tenant,))
    return {str(r[0]) for r in rows}


async def add(conn: Conn, tenant: str, r: Rejection) -> bool:
    """Tombstone a digest; False when it already was (the first reason stays)."""
    cursor = await conn.execute(
        f"INSERT INTO rejected_values (tenant_id, {_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (tenant_id, digest) DO NOTHING",
        (tenant, r.digest, r.reason, r.rejected_by, r.rejected_at, r.source_memory_id, r.normalized_chars),
    )
    return cursor.rowcount == 1


async def all_of(conn: Source, tenant: str) -> list[Rejection]:
    """The tenant's tombstones, newest first."""
    rows = await fetch(
        conn,
        f"SELECT {_COLS} FROM rejected_values WHERE tenant_id = %s "
        'ORDER BY rejected_at DESC, digest COLLATE "C"',
        (tenant,),
    )
    return [Rejection(*r) for r in rows]


async def matching(conn: Source, tenant: str, prefix: str) -> list[str]:
    """Digests of the tenant that start with prefix (lowercase hex)."""
    rows = await fetch(
        conn,
        "SELECT digest FROM rejected_values WHERE tenant_id = %s AND starts_with(digest, %s)",
        (tenant, prefix),
    )
    return [str(r[0]) for r in rows]


async def remove(conn: Conn, tenant: str, digest: str) -> bool:
    cursor = await conn.execute(
        "DELETE FROM rejected_values WHERE tenant_id = %s AND digest = %s", (tenant, digest)
    )
    return cursor.rowcount == 1


async def reject_copies(
    conn: Conn, tenant: str, tombstone: Rejection, value: str
) -> tuple[list[str], list[str], list[str]]:
    """Tombstone a value inside the caller's transaction and remove every copy of its text: live ones
    deleted, raw ones archived without their text. Returns (deleted, archived, dormant ids)."""
    await add(conn, tenant, tombstone)
    deleted: list[str] = []
    archived: list[str] = []
    for copy in await memories.with_digest(conn, tenant, tombstone.digest):
        if copy.kind == "raw":
            await memories.archive_raw(conn, copy, f"rejected: {tombstone.reason}", tombstone.rejected_at)
            archived.append(copy.id)
        elif copy.kind != "archived":
            await memories.delete(conn, tenant, copy.id)
            deleted.append(copy.id)
    return deleted, archived, await dormant.delete_digest(conn, tenant, tombstone.digest)
