"""SQL for trace memories (memory-model.md §6: layer `trace`, `trace_outcome`)."""

from __future__ import annotations

import aiosqlite


async def outcomes_with_tag(
    conn: aiosqlite.Connection, tenant: str, tag: str
) -> list[tuple[str, str | None]]:
    """(content digest, `trace_outcome`) of every live trace memory of the tenant carrying `tag`."""
    rows = await conn.execute_fetchall(
        "SELECT m.content_digest, m.trace_outcome FROM memories m WHERE m.tenant_id = ? "
        "AND m.layer = 'trace' AND m.superseded_by IS NULL AND m.kind != 'archived' "
        "AND EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value = ?)",
        (tenant, tag),
    )
    return [(str(row[0]), row[1]) for row in rows]
