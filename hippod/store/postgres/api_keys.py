"""SQL for the team store's `api_keys`: the functions of `hippod.store.sqlite.api_keys`, on PostgreSQL.

Keys belong to tenants like every other row. Looking one up by its id, before its tenant is known,
goes through `hippo_api_key()` (migration 2), the one statement that is not limited to a tenant.
"""

from __future__ import annotations

from typing import Any

from hippod.store.postgres.memories import fetch
from hippod.store.postgres.pg import Conn, TeamReader
from hippod.store.records import ApiKey

_COLS = "id, key_id, key_hash, tenant_id, label, role, created_at, revoked_at"


def _key(row: tuple[Any, ...]) -> ApiKey:
    return ApiKey(int(row[0]), *row[1:])


async def insert(
    conn: Conn, key_id: str, key_hash: str, tenant: str, label: str | None, role: str, now: str
) -> ApiKey:
    cursor = await conn.execute(
        "INSERT INTO api_keys (key_id, key_hash, tenant_id, label, role, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
        (key_id, key_hash, tenant, label, role, now),
    )
    row = await cursor.fetchone()
    assert row is not None
    return ApiKey(int(row[0]), key_id, key_hash, tenant, label, role, now, None)  # type: ignore[call-overload]


async def by_key_id(conn: Conn | TeamReader, key_id: str) -> ApiKey | None:
    """The key with this id, whichever tenant holds it (the caller checks the tenant it needs)."""
    query, params = "SELECT * FROM hippo_api_key(%s)", (key_id,)
    if isinstance(conn, TeamReader):
        rows = await conn.fetch_untenanted(query, params)
    else:
        rows = list(await (await conn.execute(query, params)).fetchall())
    return _key(rows[0]) if rows else None


async def listed(
    conn: Conn | TeamReader, tenant: str, *, active_only: bool, limit: int | None, before: int | None
) -> list[ApiKey]:
    """The tenant's keys, newest first; `before` is the row number a previous page ended at."""
    query = f"SELECT {_COLS} FROM api_keys WHERE tenant_id = %s"
    params: list[object] = [tenant]
    if active_only:
        query += " AND revoked_at IS NULL"
    if before is not None:
        query += " AND id < %s"
        params.append(before)
    query += " ORDER BY id DESC"
    if limit is not None:
        query += " LIMIT %s"
        params.append(limit)
    return [_key(r) for r in await fetch(conn, query, params)]


async def revoke(conn: Conn, key_id: str, now: str) -> None:
    await conn.execute(
        "UPDATE api_keys SET revoked_at = %s WHERE key_id = %s AND revoked_at IS NULL", (now, key_id)
    )
