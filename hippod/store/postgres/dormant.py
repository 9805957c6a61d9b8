"""SQL for the team store's dormant memories: the functions of `hippod.store.sqlite.dormant`, on PostgreSQL.

A row moves between `memories` and `dormant_memories` whole, its index terms with it; moving it in
or out runs the memories' triggers, so the term statistics and the members' feed follow.
"""

from __future__ import annotations

from collections.abc import Sequence

from hippod.model.memory import COLUMNS
from hippod.store.memory_codec import row_to_memory
from hippod.store.postgres.memories import Source, fetch
from hippod.store.postgres.pg import Conn
from hippod.store.records import DormantMemory

_MOVED = ", ".join([*COLUMNS, "content_digest", "terms", "nterms"])
_SELECT = ", ".join(COLUMNS)


async def copy_in(conn: Conn, ids: Sequence[str], reason: str, now: str) -> None:
    """Copy live memories into the dormant store; the caller deletes them from memories."""
    await conn.execute(
        f"INSERT INTO dormant_memories ({_MOVED}, dormant_at, dormant_reason) "
        f"SELECT {_MOVED}, %s, %s FROM memories WHERE id = ANY(%s) "
        "ON CONFLICT (tenant_id, id) DO UPDATE SET dormant_at = excluded.dormant_at, "
        "dormant_reason = excluded.dormant_reason",
        (now, reason, list(ids)),
    )


async def move_out(conn: Conn, memory_id: str) -> bool:
    """Move a dormant memory back among the live ones."""
    cursor = await conn.execute(
        f"INSERT INTO memories ({_MOVED}) SELECT {_MOVED} FROM dormant_memories WHERE id = %s "
        "ON CONFLICT (tenant_id, id) DO NOTHING",
        (memory_id,),
    )
    if cursor.rowcount != 1:
        return False
    await conn.execute("DELETE FROM dormant_memories WHERE id = %s", (memory_id,))
    return True


def _row(row: Sequence[object]) -> DormantMemory:
    return DormantMemory(row_to_memory(row), str(row[-2]), str(row[-1]))


async def get(conn: Source, tenant: str, memory_id: str) -> DormantMemory | None:
    rows = await fetch(
        conn,
        f"SELECT {_SELECT}, dormant_at, dormant_reason FROM dormant_memories "
        "WHERE id = %s AND tenant_id = %s",
        (memory_id, tenant),
    )
    return _row(rows[0]) if rows else None


async def newest(conn: Source, tenant: str) -> list[DormantMemory]:
    """The tenant's dormant memories, newest dormant_at first."""
    rows = await fetch(
        conn,
        f"SELECT {_SELECT}, dormant_at, dormant_reason FROM dormant_memories WHERE tenant_id = %s "
        'ORDER BY dormant_at DESC, id COLLATE "C"',
        (tenant,),
    )
    return [_row(r) for r in rows]


async def delete(conn: Conn, tenant: str, memory_id: str) -> bool:
    cursor = await conn.execute(
        "DELETE FROM dormant_memories WHERE id = %s AND tenant_id = %s", (memory_id, tenant)
    )
    return cursor.rowcount == 1


async def delete_digest(conn: Conn, tenant: str, digest: str) -> list[str]:
    """Delete the tenant's dormant copies of a value; returns their ids."""
    cursor = await conn.execute(
        "DELETE FROM dormant_memories WHERE tenant_id = %s AND content_digest = %s RETURNING id",
        (tenant, digest),
    )
    return [str(r[0]) for r in await cursor.fetchall()]


async def count(conn: Source, tenant: str) -> int:
    rows = await fetch(conn, "SELECT count(*) FROM dormant_memories WHERE tenant_id = %s", (tenant,))
    return int(rows[0][0])
