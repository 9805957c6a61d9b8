"""SQL for the per-prompt hook's items (recall.md §9, pinned injection): pinned rows and the newest others."""

from __future__ import annotations

from typing import Any

import aiosqlite

from hippod.model.memory import COLUMNS, Memory
from hippod.model.share import COPY_SOURCES
from hippod.store.memory_codec import row_to_memory

_SELECT = ", ".join(f"m.{c}" for c in COLUMNS)
# Admitted as recall admits (recall.md §2), never superseded, and not from another project:
# a row of another project is neither this project's, '' nor null (project isolation, §9.5), unless
# it is a copy `share`, `promote` or auto-share made (model/share.py COPY_SOURCES), which holds
# beyond its project.
_ADMITTED = (
    "m.tenant_id = ? AND m.layer != 'buffer' AND m.kind != 'archived' AND m.superseded_by IS NULL "
    "AND (m.scope IS NULL OR (m.scope != 'unknown:legacy' AND m.scope NOT LIKE '%:private:%')) "
    "AND (m.origin_project IS NULL OR m.origin_project IN ('', ?) "
    + "".join(f"OR m.source GLOB '{prefix}*' " for prefix in COPY_SOURCES)
    + ")"
)


async def pinned(conn: aiosqlite.Connection, tenant: str, project: str) -> list[Memory]:
    """Every admitted pinned memory of the tenant, newest first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories m WHERE {_ADMITTED} AND m.pinned = 1 ORDER BY m.created DESC, m.id",
        (tenant, project),
    )
    return [row_to_memory(r) for r in rows]


async def recent(
    conn: aiosqlite.Connection, tenant: str, project: str, session_id: str | None, limit: int
) -> list[Memory]:
    """The `limit` newest admitted memories by `created` that are not pinned and were not saved by a
    compaction of `session_id` (that session just read them in its summary)."""
    if limit <= 0:
        return []
    sql = f"SELECT {_SELECT} FROM memories m WHERE {_ADMITTED} AND m.pinned = 0"
    params: list[Any] = [tenant, project]
    if session_id:
        sql += " AND NOT (m.source = 'compaction' AND m.source_session_id IS ?)"
        params.append(session_id)
    rows = await conn.execute_fetchall(sql + " ORDER BY m.created DESC, m.id LIMIT ?", [*params, limit])
    return [row_to_memory(r) for r in rows]
