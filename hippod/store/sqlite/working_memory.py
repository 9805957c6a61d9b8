"""SQL for working memory (continuity.md §5): a bounded scratchpad per scope, never recalled.

Every read filters by tenant; eviction never crosses scopes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

SCOPE_CAPACITY = 20

_COLUMNS = "id, scope, session_id, importance, content, created_at"


@dataclass(slots=True)
class Entry:
    id: int
    scope: str
    session_id: str | None
    importance: float
    content: str
    created_at: str


def _entry(row: Sequence[Any]) -> Entry:
    return Entry(*row)


async def push(
    conn: aiosqlite.Connection,
    tenant: str,
    *,
    scope: str,
    content: str,
    importance: float,
    session_id: str | None,
    now: str,
) -> tuple[int, int]:
    """Insert an entry, then evict down to the scope's capacity: (new id, entries evicted).

    The evicted ones are those of lowest importance, the oldest first among equals.
    """
    cursor = await conn.execute(
        "INSERT INTO working_memory (scope, session_id, importance, content, tenant_id, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (scope, session_id, importance, content, tenant, now, now),
    )
    new_id = int(cursor.lastrowid or 0)
    rows = await conn.execute_fetchall(
        "SELECT COUNT(*) FROM working_memory WHERE tenant_id = ? AND scope = ?", (tenant, scope)
    )
    excess = int(next(iter(rows))[0]) - SCOPE_CAPACITY
    if excess <= 0:
        return new_id, 0
    cursor = await conn.execute(
        "DELETE FROM working_memory WHERE id IN (SELECT id FROM working_memory "
        "WHERE tenant_id = ? AND scope = ? ORDER BY importance ASC, created_at ASC, id ASC LIMIT ?)",
        (tenant, scope, excess),
    )
    return new_id, cursor.rowcount


async def read(conn: aiosqlite.Connection, tenant: str, scope: str) -> list[Entry]:
    """A scope's entries: importance descending, then newest first, at most the capacity."""
    rows = await conn.execute_fetchall(
        f"SELECT {_COLUMNS} FROM working_memory WHERE tenant_id = ? AND scope = ? "
        "ORDER BY importance DESC, created_at DESC, id DESC LIMIT ?",
        (tenant, scope, SCOPE_CAPACITY),
    )
    return [_entry(r) for r in rows]


async def remove(conn: aiosqlite.Connection, tenant: str, scope: str, session_id: str | None) -> list[Entry]:
    """Delete a scope's entries (of one session when given) and return them, in read order."""
    where, params = "tenant_id = ? AND scope = ?", [tenant, scope]
    if session_id is not None:
        where += " AND session_id = ?"
        params.append(session_id)
    rows = await conn.execute_fetchall(
        f"SELECT {_COLUMNS} FROM working_memory WHERE {where} "
        "ORDER BY importance DESC, created_at DESC, id DESC",
        params,
    )
    await conn.execute(f"DELETE FROM working_memory WHERE {where}", params)
    return [_entry(r) for r in rows]
