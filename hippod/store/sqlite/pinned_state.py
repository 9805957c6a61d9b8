"""The per-prompt hook's memory of what it last sent (recall.md §9.5), per (tenant, session)."""

from __future__ import annotations

import aiosqlite


async def get(conn: aiosqlite.Connection, tenant: str, session_id: str) -> tuple[str, int] | None:
    """(digest of the last block sent, skips since), or None when nothing was sent in this session."""
    rows = await conn.execute_fetchall(
        "SELECT digest, skips FROM pinned_inject_state WHERE tenant_id = ? AND session_id = ?",
        (tenant, session_id),
    )
    for digest, skips in rows:
        return str(digest), int(skips)
    return None


async def put(
    conn: aiosqlite.Connection, tenant: str, session_id: str, digest: str, skips: int, now: str
) -> None:
    await conn.execute(
        "INSERT INTO pinned_inject_state (tenant_id, session_id, digest, skips, updated_at) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant_id, session_id) DO UPDATE SET digest = excluded.digest, skips = excluded.skips, "
        "updated_at = excluded.updated_at",
        (tenant, session_id, digest, skips, now),
    )


async def clear(conn: aiosqlite.Connection, tenant: str, session_id: str) -> None:
    """Forget the session's state, so its next prompt sends the block (after a compaction)."""
    await conn.execute(
        "DELETE FROM pinned_inject_state WHERE tenant_id = ? AND session_id = ?", (tenant, session_id)
    )
