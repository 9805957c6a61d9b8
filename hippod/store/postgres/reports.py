"""SQL for the reads of `status` and `export` on the team store: the functions of
hippod/store/sqlite/reports.py, on PostgreSQL."""

from __future__ import annotations

from typing import Any

from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory
from hippod.store.postgres.memories import Source, fetch

# The tenant's meta keys, and the totals a SQLite store keeps in its meta by a trigger on its audit
# log, counted here from the tenant's audit log (an `audit prune` lowers them): each remember would
# otherwise update one row per tenant, and every recall too.
_META = (
    "SELECT key, value FROM meta WHERE NOT starts_with(key, 'last_batch:') "
    "UNION ALL SELECT CASE op WHEN 'remember' THEN 'total_remembered' WHEN 'recall' THEN 'total_recalled' "
    "ELSE 'total_forgotten' END, count(*)::text FROM audit_log "
    "WHERE op IN ('remember', 'recall', 'forget') GROUP BY op"
)


async def all_meta(conn: Source) -> dict[str, str]:
    """The tenant's meta keys (not the recall batches), with its totals of remembers, recalls and
    forgets."""
    return {str(k): str(v) for k, v in await fetch(conn, _META, ())}


async def status_rows(conn: Source, tenant: str) -> list[tuple[Any, ...]]:
    """What `status` needs from every memory of a tenant (archived rows left out): (id, layer, pinned,
    superseded_by, last_retrieved, half_life_days, outcome_positive, outcome_negative,
    retrieval_count, emotional_valence)."""
    rows = await fetch(
        conn,
        "SELECT id, layer, pinned, superseded_by, last_retrieved, half_life_days, outcome_positive, "
        "outcome_negative, retrieval_count, emotional_valence FROM memories "
        "WHERE tenant_id = %s AND kind != 'archived'",
        (tenant,),
    )
    return [tuple(r) for r in rows]


async def count_open(conn: Source, tenant: str) -> int:
    """The tenant's open conflicts."""
    rows = await fetch(
        conn, "SELECT count(*) FROM memory_conflicts WHERE status = 'open' AND tenant_id = %s", (tenant,)
    )
    return int(rows[0][0])


async def exported(conn: Source, tenant: str) -> list[Memory]:
    """The tenant's live and superseded memories (not archived; dormant ones live elsewhere), oldest first."""
    rows = await fetch(
        conn,
        f"SELECT {', '.join(COLUMNS)} FROM memories WHERE tenant_id = %s AND kind != 'archived' "
        "ORDER BY created, seq",
        (tenant,),
    )
    return [row_to_memory(r) for r in rows]
