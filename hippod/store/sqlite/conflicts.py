"""SQL for memory_conflicts and resolving one (sleep.md §7, memory-model.md §12)."""

from __future__ import annotations

from typing import Any

import aiosqlite
import msgspec

from hippod.model.memory import Memory
from hippod.store.records import ConflictRecord

_COLS = "id, tenant_id, memory_a_id, memory_b_id, reason, score, status, resolved_by, detected_at, updated_at"


def _record(row: Any) -> ConflictRecord:
    return ConflictRecord(*row)


async def listing(conn: aiosqlite.Connection, tenant: str | None, status: str) -> list[ConflictRecord]:
    """Conflicts of a tenant (every tenant when None) with this status (`all` for any), by id."""
    sql = f"SELECT {_COLS} FROM memory_conflicts WHERE 1 = 1"
    params: list[Any] = []
    if tenant is not None:
        sql += " AND tenant_id = ?"
        params.append(tenant)
    if status != "all":
        sql += " AND status = ?"
        params.append(status)
    rows = await conn.execute_fetchall(sql + " ORDER BY id", params)
    return [_record(r) for r in rows]


async def get(conn: aiosqlite.Connection, tenant: str, number: int) -> ConflictRecord | None:
    rows = list(
        await conn.execute_fetchall(
            f"SELECT {_COLS} FROM memory_conflicts WHERE id = ? AND tenant_id = ?", (number, tenant)
        )
    )
    return _record(rows[0]) if rows else None


async def count_open(conn: aiosqlite.Connection, tenant: str) -> int:
    rows = list(
        await conn.execute_fetchall(
            "SELECT count(*) FROM memory_conflicts WHERE status = 'open' AND tenant_id = ?", (tenant,)
        )
    )
    return int(rows[0][0])


async def count_dormant(conn: aiosqlite.Connection, tenant: str) -> int:
    rows = list(
        await conn.execute_fetchall("SELECT count(*) FROM dormant_memories WHERE tenant_id = ?", (tenant,))
    )
    return int(rows[0][0])


async def mark_user_resolved(conn: aiosqlite.Connection, number: int, now: str) -> None:
    await conn.execute(
        "UPDATE memory_conflicts SET status = 'resolved', resolved_by = 'user', updated_at = ? WHERE id = ?",
        (now, number),
    )


async def set_conflicts_with(conn: aiosqlite.Connection, memory: Memory, now: str) -> None:
    await conn.execute(
        "UPDATE memories SET conflicts_with = ?, updated_at = ? WHERE id = ?",
        (msgspec.json.encode(memory.conflicts_with).decode(), now, memory.id),
    )


async def halve_half_life(conn: aiosqlite.Connection, memory: Memory, now: str) -> None:
    """Conflict loser on `resolve --keep`: max(1, hl / 2), not floored (memory-model.md §8)."""
    await conn.execute(
        "UPDATE memories SET half_life_days = ?, conflicts_with = ?, strength = ?, updated_at = ? "
        "WHERE id = ?",
        (
            memory.half_life_days,
            msgspec.json.encode(memory.conflicts_with).decode(),
            memory.strength,
            now,
            memory.id,
        ),
    )


async def contents(conn: aiosqlite.Connection, ids: list[str]) -> dict[str, str]:
    """id -> content of live memories (for conflict mirrors and listings)."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = await conn.execute_fetchall(f"SELECT id, content FROM memories WHERE id IN ({marks})", ids)
    return {str(i): str(c) for i, c in rows}
