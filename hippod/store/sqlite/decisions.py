"""SQL for the `decisions` table: architectural decisions and the memories that mirror them."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

_COLS = "n, text, context, status, memory_id, superseded_by, created_at, closed_at, superseded_at, tenant_id"


@dataclass(slots=True)
class Decision:
    n: int
    text: str
    context: str | None
    status: str
    memory_id: str | None
    superseded_by: int | None
    created_at: str
    closed_at: str | None
    superseded_at: str | None
    tenant: str


async def insert(
    conn: aiosqlite.Connection, tenant: str, text: str, context: str | None, memory_id: str, now: str
) -> int:
    """Record an active decision; returns its number."""
    cursor = await conn.execute(
        "INSERT INTO decisions (tenant_id, text, context, status, memory_id, created_at) "
        "VALUES (?, ?, ?, 'active', ?, ?)",
        (tenant, text, context, memory_id, now),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


async def get(conn: aiosqlite.Connection, tenant: str, n: int) -> Decision | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_COLS} FROM decisions WHERE n = ? AND tenant_id = ?", (n, tenant)
    )
    return Decision(*next(iter(rows))) if rows else None


async def listed(conn: aiosqlite.Connection, tenant: str, status: str | None) -> list[Decision]:
    """The tenant's decisions, newest first, optionally of one status."""
    if status is None:
        rows = await conn.execute_fetchall(
            f"SELECT {_COLS} FROM decisions WHERE tenant_id = ? ORDER BY n DESC", (tenant,)
        )
    else:
        rows = await conn.execute_fetchall(
            f"SELECT {_COLS} FROM decisions WHERE tenant_id = ? AND status = ? ORDER BY n DESC",
            (tenant, status),
        )
    return [Decision(*r) for r in rows]


async def supersede_active_for(
    conn: aiosqlite.Connection, tenant: str, memory_id: str, by: int, now: str
) -> list[int]:
    """Mark the active decisions mirrored by a memory superseded by decision `by`; returns their numbers."""
    rows = await conn.execute_fetchall(
        "SELECT n FROM decisions WHERE tenant_id = ? AND memory_id = ? AND status = 'active' AND n != ?",
        (tenant, memory_id, by),
    )
    numbers = [int(r[0]) for r in rows]
    for n in numbers:
        await supersede(conn, n, by, now)
    return numbers


async def supersede(conn: aiosqlite.Connection, n: int, by: int, now: str) -> None:
    await conn.execute(
        "UPDATE decisions SET status = 'superseded', superseded_by = ?, superseded_at = ? WHERE n = ?",
        (by, now, n),
    )


async def close(conn: aiosqlite.Connection, tenant: str, n: int, now: str) -> bool:
    cursor = await conn.execute(
        "UPDATE decisions SET status = 'closed', closed_at = ? "
        "WHERE n = ? AND tenant_id = ? AND status != 'closed'",
        (now, n, tenant),
    )
    return cursor.rowcount == 1
