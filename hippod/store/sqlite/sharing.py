"""SQL for sharing between a project store and the global store (sleep.md §8)."""

from __future__ import annotations

import aiosqlite

from hippod.model.memory import COLUMNS, Memory
from hippod.store import memory_codec

_SELECT = ", ".join(COLUMNS)


async def contents(conn: aiosqlite.Connection, tenant: str) -> list[tuple[str, str]]:
    """(id, text) of every memory of a tenant (callers reduce the text to the first-200-char key)."""
    rows = await conn.execute_fetchall("SELECT id, content FROM memories WHERE tenant_id = ?", (tenant,))
    return [(str(i), str(c)) for i, c in rows]


async def live_rows(conn: aiosqlite.Connection, tenant: str) -> list[Memory]:
    """Live, non-superseded memories of a tenant outside the buffer layer, oldest first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND superseded_by IS NULL "
        "AND layer != 'buffer' AND kind != 'archived' ORDER BY created, id",
        (tenant,),
    )
    return [memory_codec.row_to_memory(r) for r in rows]


async def contributions(conn: aiosqlite.Connection, tenant: str) -> list[tuple[str, str]]:
    """(source, created) of every global memory copied in by share, promote or auto-share."""
    rows = await conn.execute_fetchall(
        "SELECT source, created FROM memories WHERE tenant_id = ? "
        "AND (source GLOB 'shared:*' OR source GLOB 'promoted:*' OR source GLOB 'auto-shared:*')",
        (tenant,),
    )
    return [(str(s), str(c)) for s, c in rows]
