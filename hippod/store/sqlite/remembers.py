"""The rows of `remember` requests, written a batch per transaction (store/sqlite/group_commit.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import aiosqlite

from hippod.model.memory import Memory
from hippod.store import memory_codec
from hippod.store.records import Remembered
from hippod.store.sqlite import graph_index, memories

if TYPE_CHECKING:
    from hippod.store.backend import MemoryRows


async def write(conn: Any, items: list[Remembered], rows: MemoryRows = memories) -> list[bool]:
    """Insert each memory unless its text is tombstoned, with its audit row; which were stored.

    One request alone takes the one-row statements (one round trip fewer than a batch needs).
    Batches come from a SQLite store's group commit; the team store writes each request alone
    (`DirectCommit`), through its own `rows`.
    """
    if len(items) == 1:
        [item] = items
        stored = [await rows.insert(conn, item.memory)]
    else:
        stored = await insert_many(conn, [item.memory for item in items])
    await rows.audit_rows(
        conn,
        [
            (
                item.memory.created,
                item.memory.tenant_id,
                item.actor,
                "remember" if kept else "reject_refusal",
                item.memory.id if kept else None,
            )
            for item, kept in zip(items, stored, strict=True)
        ],
    )
    return stored


async def insert_many(conn: aiosqlite.Connection, batch: list[Memory]) -> list[bool]:
    """memories.insert() for several memories in two round trips; for each, whether it was stored."""
    await conn.executemany(memory_codec.INSERT_SQL, [memory_codec.insert_row(memory) for memory in batch])
    ids = [memory.id for memory in batch]
    marks = ", ".join("?" * len(ids))
    rows = await conn.execute_fetchall(f"SELECT id FROM memories WHERE id IN ({marks})", ids)
    stored = {str(row[0]) for row in rows}
    await graph_index.index(conn, [memory.id for memory in batch if memory.id in stored], fresh=True)
    return [memory.id in stored for memory in batch]
