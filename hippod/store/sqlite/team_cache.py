"""SQL for a laptop's copy of its team's memories: a store of its own beside the global store
(teamlink/cache.py), whose rows follow the team server's."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from hippod.model.memory import Memory
from hippod.store.sqlite import memories


async def apply(conn: aiosqlite.Connection, changed: Sequence[Memory], deleted: Sequence[str]) -> None:
    """Make the copy hold each changed memory as the server has it, and none of the deleted ones."""
    for memory in changed:
        if await memories.get(conn, memory.tenant_id, memory.id) is None:
            await memories.insert(conn, memory)
        else:
            await memories.update(conn, memory)
    if deleted:
        await conn.executemany("DELETE FROM memories WHERE id = ?", [(memory_id,) for memory_id in deleted])


async def count(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM memories"))
    return int(rows[0][0])
