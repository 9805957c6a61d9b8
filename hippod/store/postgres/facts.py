"""The facts extracted from a memory, which go with it when it is forgotten or rejected: the team
store's twin of `hippod.store.sqlite.memories.delete_facts_of`, kept apart from memories.py for size.
A team server's sleep extracts nothing, but a fact shared to it from a laptop goes with its source."""

from __future__ import annotations

from collections.abc import Sequence

from hippod.store.postgres.pg import Conn


async def delete_facts_of(conn: Conn, tenant: str, sources: Sequence[str]) -> list[str]:
    """Delete the facts extracted from `sources` (a pinned one stays); the ids deleted."""
    if not sources:
        return []
    cursor = await conn.execute(
        "DELETE FROM memories WHERE tenant_id = %s AND pinned = 0 AND extracted_from = ANY(%s) RETURNING id",
        (tenant, list(sources)),
    )
    return [str(row[0]) for row in await cursor.fetchall()]
