"""The reads of `status` and `export` on a SQLite store: the `ReportRows` of store/backend.py, whose
team twin is hippod/store/postgres/reports.py."""

from typing import Any

import aiosqlite

from hippod.store.sqlite.conflicts import count_open as count_open
from hippod.store.sqlite.imports import exported as exported


async def all_meta(conn: aiosqlite.Connection) -> dict[str, str]:
    """The store's meta keys and values, recall's last batches left out."""
    rows = await conn.execute_fetchall("SELECT key, value FROM meta WHERE key NOT LIKE 'last_batch:%'")
    return {str(k): str(v) for k, v in rows}


async def status_rows(conn: aiosqlite.Connection, tenant: str) -> list[tuple[Any, ...]]:
    """What `status` and the dashboard's map need from every memory of a tenant (archived rows left
    out): (id, layer, pinned, superseded_by, last_retrieved, half_life_days, outcome_positive,
    outcome_negative, retrieval_count, emotional_valence)."""
    rows = await conn.execute_fetchall(
        "SELECT id, layer, pinned, superseded_by, last_retrieved, half_life_days, outcome_positive, "
        "outcome_negative, retrieval_count, emotional_valence FROM memories "
        "WHERE tenant_id = ? AND kind != 'archived'",
        (tenant,),
    )
    return [tuple(r) for r in rows]
