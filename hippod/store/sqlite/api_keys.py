"""SQL for `api_keys`: the HTTP API's keys, kept in the global store (integrations.md §9.4)."""

from __future__ import annotations

import aiosqlite

from hippod.store.records import ApiKey

_COLS = "id, key_id, key_hash, tenant_id, label, role, created_at, revoked_at"


async def insert(
    conn: aiosqlite.Connection,
    key_id: str,
    key_hash: str,
    tenant: str,
    label: str | None,
    role: str,
    now: str,
) -> ApiKey:
    cursor = await conn.execute(
        "INSERT INTO api_keys (key_id, key_hash, tenant_id, label, role, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (key_id, key_hash, tenant, label, role, now),
    )
    assert cursor.lastrowid is not None
    return ApiKey(cursor.lastrowid, key_id, key_hash, tenant, label, role, now, None)


async def by_key_id(conn: aiosqlite.Connection, key_id: str) -> ApiKey | None:
    rows = await conn.execute_fetchall(f"SELECT {_COLS} FROM api_keys WHERE key_id = ?", (key_id,))
    return ApiKey(*next(iter(rows))) if rows else None


async def listed(
    conn: aiosqlite.Connection, tenant: str, *, active_only: bool, limit: int | None, before: int | None
) -> list[ApiKey]:
    """The tenant's keys, newest first; `before` is the row number a previous page ended at."""
    sql = f"SELECT {_COLS} FROM api_keys WHERE tenant_id = ?"
    params: list[object] = [tenant]
    if active_only:
        sql += " AND revoked_at IS NULL"
    if before is not None:
        sql += " AND id < ?"
        params.append(before)
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [ApiKey(*r) for r in await conn.execute_fetchall(sql, params)]


async def revoke(conn: aiosqlite.Connection, key_id: str, now: str) -> None:
    await conn.execute(
        "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL", (now, key_id)
    )
