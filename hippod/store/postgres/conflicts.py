"""SQL for the team store's conflicts: the functions of `hippod.store.sqlite.conflicts`, on PostgreSQL."""

from __future__ import annotations

from typing import Any

import msgspec

from hippod.model.memory import Memory
from hippod.store.postgres.memories import Source, fetch
from hippod.store.postgres.pg import Conn
from hippod.store.records import ConflictRecord

_COLS = "id, tenant_id, memory_a_id, memory_b_id, reason, score, status, resolved_by, detected_at, updated_at"


def _record(row: Any) -> ConflictRecord:
    return ConflictRecord(*row)


async def listing(conn: Source, tenant: str | None, status: str) -> list[ConflictRecord]:
    """Conflicts of a tenant (the transaction's own when None) with this status (`all` for any), by id."""
    sql = f"SELECT {_COLS} FROM memory_conflicts WHERE true"
    params: list[Any] = []
    if tenant is not None:
        sql += " AND tenant_id = %s"
        params.append(tenant)
    if status != "all":
        sql += " AND status = %s"
        params.append(status)
    return [_record(r) for r in await fetch(conn, sql + " ORDER BY id", params)]


async def get(conn: Source, tenant: str, number: int) -> ConflictRecord | None:
    rows = await fetch(
        conn, f"SELECT {_COLS} FROM memory_conflicts WHERE id = %s AND tenant_id = %s", (number, tenant)
    )
    return _record(rows[0]) if rows else None


async def mark_user_resolved(conn: Conn, number: int, now: str) -> None:
    await conn.execute(
        "UPDATE memory_conflicts SET status = 'resolved', resolved_by = 'user', updated_at = %s "
        "WHERE id = %s",
        (now, number),
    )


async def set_conflicts_with(conn: Conn, memory: Memory, now: str) -> None:
    await conn.execute(
        "UPDATE memories SET conflicts_with = %s, updated_at = %s WHERE id = %s",
        (msgspec.json.encode(memory.conflicts_with).decode(), now, memory.id),
    )


async def halve_half_life(conn: Conn, memory: Memory, now: str) -> None:
    """Conflict loser on `resolve --keep`: max(1, hl / 2), not floored (memory-model.md §8)."""
    await conn.execute(
        "UPDATE memories SET half_life_days = %s, conflicts_with = %s, strength = %s, updated_at = %s "
        "WHERE id = %s",
        (
            memory.half_life_days,
            msgspec.json.encode(memory.conflicts_with).decode(),
            memory.strength,
            now,
            memory.id,
        ),
    )


async def contents(conn: Source, ids: list[str]) -> dict[str, str]:
    """id -> content of live memories (for listings)."""
    if not ids:
        return {}
    rows = await fetch(conn, "SELECT id, content FROM memories WHERE id = ANY(%s)", (ids,))
    return {str(i): str(c) for i, c in rows}
