"""SQL for tombstoned values (`rejected_values`): digests only, never the text (memory-model.md §12)."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from hippod.store import dormant, memories


@dataclass(frozen=True, slots=True)
class Rejection:
    digest: str
    reason: str
    rejected_by: str
    rejected_at: str
    source_memory_id: str | None
    normalized_chars: int


async def add(conn: aiosqlite.Connection, tenant: str, r: Rejection) -> bool:
    """Tombstone a digest; False when it already was (the first reason stays)."""
    cursor = await conn.execute(
        "INSERT INTO rejected_values (tenant_id, digest, reason, rejected_by, rejected_at, source_memory_id, "
        "normalized_chars) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, digest) DO NOTHING",
        (tenant, r.digest, r.reason, r.rejected_by, r.rejected_at, r.source_memory_id, r.normalized_chars),
    )
    return cursor.rowcount == 1


async def all_of(conn: aiosqlite.Connection, tenant: str) -> list[Rejection]:
    """The tenant's tombstones, newest first."""
    rows = await conn.execute_fetchall(
        "SELECT digest, reason, rejected_by, rejected_at, source_memory_id, normalized_chars "
        "FROM rejected_values WHERE tenant_id = ? ORDER BY rejected_at DESC, digest",
        (tenant,),
    )
    return [Rejection(*r) for r in rows]


async def matching(conn: aiosqlite.Connection, tenant: str, prefix: str) -> list[str]:
    """Digests of the tenant that start with prefix (lowercase hex)."""
    rows = await conn.execute_fetchall(
        "SELECT digest FROM rejected_values WHERE tenant_id = ? AND substr(digest, 1, ?) = ?",
        (tenant, len(prefix), prefix),
    )
    return [str(r[0]) for r in rows]


async def remove(conn: aiosqlite.Connection, tenant: str, digest: str) -> bool:
    cursor = await conn.execute(
        "DELETE FROM rejected_values WHERE tenant_id = ? AND digest = ?", (tenant, digest)
    )
    return cursor.rowcount == 1


async def reject_copies(
    conn: aiosqlite.Connection, tenant: str, tombstone: Rejection
) -> tuple[list[str], list[str], list[str]]:
    """Tombstone a value inside the caller's transaction and remove its copies.

    Returns (deleted live ids, archived raw ids, deleted dormant ids). Raw receipts are archived,
    never deleted; already archived rows are left as they are.
    """
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
