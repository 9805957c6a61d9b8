"""Just the text of a tenant's live memories, for exact-text checks that need no other field."""

from __future__ import annotations

import aiosqlite


async def live_contents(conn: aiosqlite.Connection, tenant: str) -> list[str]:
    """The content of every live memory of the tenant (not superseded, not archived)."""
    rows = await conn.execute_fetchall(
        "SELECT content FROM memories WHERE tenant_id = ? AND superseded_by IS NULL AND kind != 'archived'",
        (tenant,),
    )
    return [str(row[0]) for row in rows]
