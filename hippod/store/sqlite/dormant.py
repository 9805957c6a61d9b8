"""SQL for the dormant store (memory-model.md §13): faded memories kept out of every use but findable."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from hippod.model.memory import COLUMNS
from hippod.store.memory_codec import row_to_memory
from hippod.store.records import DormantMemory
from hippod.store.sqlite import graph_index

# Every stored column of memories, so a row moves between the two tables whole.
_MOVED = ", ".join([*COLUMNS, "content_digest", "fts_content", "fts_tags"])
_SELECT = ", ".join(COLUMNS)


async def copy_in(conn: aiosqlite.Connection, ids: Sequence[str], reason: str, now: str) -> None:
    """Copy live memories into the dormant store; the caller deletes them from memories."""
    await conn.executemany(
        f"INSERT OR REPLACE INTO dormant_memories ({_MOVED}, dormant_at, dormant_reason) "
        f"SELECT {_MOVED}, ?, ? FROM memories WHERE id = ?",
        [(now, reason, memory_id) for memory_id in ids],
    )


async def move_in(conn: aiosqlite.Connection, ids: Sequence[str], reason: str, now: str) -> int:
    """Move live memories to the dormant store (out of the FTS index with them); returns how many moved."""
    moved = 0
    for memory_id in ids:
        cursor = await conn.execute(
            f"INSERT INTO dormant_memories ({_MOVED}, dormant_at, dormant_reason) "
            f"SELECT {_MOVED}, ?, ? FROM memories WHERE id = ?",
            (now, reason, memory_id),
        )
        if cursor.rowcount == 1:
            await conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
            moved += 1
    return moved


async def move_out(conn: aiosqlite.Connection, memory_id: str) -> bool:
    """Move a dormant memory back among the live ones."""
    cursor = await conn.execute(
        f"INSERT INTO memories ({_MOVED}) SELECT {_MOVED} FROM dormant_memories WHERE id = ?", (memory_id,)
    )
    if cursor.rowcount != 1:
        return False
    await conn.execute("DELETE FROM dormant_memories WHERE id = ?", (memory_id,))
    await graph_index.index(conn, [memory_id])
    return True


def _row(row: Sequence[object]) -> DormantMemory:
    return DormantMemory(row_to_memory(row), str(row[-2]), str(row[-1]))


async def get(conn: aiosqlite.Connection, tenant: str, memory_id: str) -> DormantMemory | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT}, dormant_at, dormant_reason FROM dormant_memories WHERE id = ? AND tenant_id = ?",
        (memory_id, tenant),
    )
    return _row(next(iter(rows))) if rows else None


async def newest(conn: aiosqlite.Connection, tenant: str) -> list[DormantMemory]:
    """The tenant's dormant memories, newest dormant_at first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT}, dormant_at, dormant_reason FROM dormant_memories WHERE tenant_id = ? "
        "ORDER BY dormant_at DESC, id",
        (tenant,),
    )
    return [_row(r) for r in rows]


async def delete(conn: aiosqlite.Connection, tenant: str, memory_id: str) -> bool:
    cursor = await conn.execute(
        "DELETE FROM dormant_memories WHERE id = ? AND tenant_id = ?", (memory_id, tenant)
    )
    return cursor.rowcount == 1


async def delete_digest(conn: aiosqlite.Connection, tenant: str, digest: str) -> list[str]:
    """Delete the tenant's dormant copies of a value; returns their ids."""
    rows = await conn.execute_fetchall(
        "SELECT id FROM dormant_memories WHERE tenant_id = ? AND content_digest = ?", (tenant, digest)
    )
    ids = [str(r[0]) for r in rows]
    await conn.execute(
        "DELETE FROM dormant_memories WHERE tenant_id = ? AND content_digest = ?", (tenant, digest)
    )
    return ids


async def count(conn: aiosqlite.Connection, tenant: str) -> int:
    rows = await conn.execute_fetchall("SELECT count(*) FROM dormant_memories WHERE tenant_id = ?", (tenant,))
    return int(next(iter(rows))[0])
