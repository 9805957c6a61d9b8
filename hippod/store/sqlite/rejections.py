"""SQL for tombstoned values (`rejected_values`): digests only, never the text (memory-model.md §12)."""

from __future__ import annotations

from dataclasses import replace

import aiosqlite

from hippod.model.digest import content_digest, digests, normalize
from hippod.store.records import Rejection
from hippod.store.sqlite import dormant, memories, scrub

# Every tombstoned digest of a tenant (a `?` for the tenant).
ALL_DIGESTS = "SELECT digest FROM rejected_values WHERE tenant_id = ?"


async def all_digests(conn: aiosqlite.Connection, tenant: str) -> set[str]:
    """Every tombstoned digest of the tenant."""
    rows = await conn.execute_fetchall(ALL_DIGESTS, (tenant,))
    return {str(r[0]) for r in rows}


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


async def refuses(conn: aiosqlite.Connection, tenant: str, text: str) -> bool:
    """True when the tenant has tombstoned this text's value (in its current or legacy digest)."""
    rows = await conn.execute_fetchall(
        "SELECT 1 FROM rejected_values WHERE tenant_id = ? AND digest IN (?, ?) LIMIT 1",
        (tenant, *digests(text)),
    )
    return bool(rows)


async def _remove_copies(
    conn: aiosqlite.Connection, tenant: str, digest: str, reason: str, now: str
) -> tuple[list[str], list[str]]:
    """Delete the live copies of a value and archive its raw ones, keeping no text in either."""
    deleted: list[str] = []
    archived: list[str] = []
    for copy in await memories.with_digest(conn, tenant, digest):
        if copy.kind == "raw":
            await memories.archive_raw(conn, copy, f"rejected: {reason}", now)
            archived.append(copy.id)
        elif copy.kind != "archived":
            await memories.delete(conn, tenant, copy.id)
            deleted.append(copy.id)
        if copy.kind in ("raw", "archived"):
            await memories.clear_content(conn, copy.id)
    return deleted, archived


async def reject_copies(
    conn: aiosqlite.Connection, tenant: str, tombstone: Rejection, value: str
) -> tuple[list[str], list[str], list[str]]:
    """Tombstone a value inside the caller's transaction and remove every copy of its text.

    Returns (deleted live ids, archived raw ids, deleted dormant ids). Raw receipts are archived,
    never deleted, and lose their text. Decisions holding the value go with their memories; a
    rejected decision memory also tombstones the decision's own text, so `decide` with another
    `--context` cannot bring it back. The facts extraction took from a removed memory go with it (a
    pinned one stays). Compaction summaries and items, working memory and session
    events lose it too (hippod.store.sqlite.scrub).
    """
    await add(conn, tenant, tombstone)
    deleted, archived = await _remove_copies(
        conn, tenant, tombstone.digest, tombstone.reason, tombstone.rejected_at
    )
    dormant_ids = await dormant.delete_digest(conn, tenant, tombstone.digest)
    decided = await scrub.decisions(conn, tenant, {tombstone.digest}, deleted)
    for text in decided.texts:
        also = content_digest(text)
        if also != tombstone.digest:
            await add(conn, tenant, replace(tombstone, digest=also, normalized_chars=len(normalize(text))))
            more, raw = await _remove_copies(conn, tenant, also, tombstone.reason, tombstone.rejected_at)
            deleted += more
            archived += raw
            dormant_ids += await dormant.delete_digest(conn, tenant, also)
    for memory_id in decided.memories:
        if memory_id not in deleted and await memories.delete(conn, tenant, memory_id):
            deleted.append(memory_id)
    # The facts sleep's extraction took from what was removed paraphrase the rejected value.
    deleted += await memories.delete_facts_of(conn, tenant, [*deleted, *dormant_ids])
    await scrub.elsewhere(conn, tenant, [value, *decided.texts])
    return deleted, archived, dormant_ids
