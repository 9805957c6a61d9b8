"""SQL for a sleep of one tenant of the team store: `hippod.store.sqlite.sleep`'s functions, on PostgreSQL.

A team server sleeps one tenant at a time, the tenant of the request (or of the daily run) that asked.
The plan is made from a snapshot; the write transaction then takes the tenant's sleep lock and locks
its memory rows, so that between the check that nothing changed and the last write nobody else
changes them, and a second server's sleep of the same tenant waits for this one and then plans again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from hippod.base import thread_stop
from hippod.model.conflicts import Detected
from hippod.model.sleep_plan import Plan, Settings, plan
from hippod.model.strength import RETRIEVAL_HALF_LIFE_BONUS
from hippod.store.postgres import dormant, memories
from hippod.store.postgres.memories import fetch
from hippod.store.postgres.migrations import MIGRATION_LOCK
from hippod.store.postgres.pg import Conn, TeamDatabase, current_tenant
from hippod.store.postgres.sleep_snapshot import TeamSnapshot
from hippod.store.sleep_rows import KEEP_RUNS, Planned, row_mark

_encode = msgspec.json.encode
# The first key of the tenant's sleep lock (the second is its name's hash); any fixed number.
SLEEP_LOCK = MIGRATION_LOCK & 0x7FFF_FFFF


def _plan_snapshot(
    db: TeamDatabase, tenant: str, snapshot: str | None, settings: Settings, new_id: Callable[[], str]
) -> Planned:
    with TeamSnapshot(db.conninfo, db.role, tenant, snapshot) as source:
        result = plan(source, settings, new_id)
        statuses = {c.id: c.status for c in source.conflicts()}
        return result, source.marks, statuses


async def planned(
    db: TeamDatabase, settings: Settings, new_id: Callable[[], str], conn: Conn | None = None
) -> Planned:
    """The plan of the request's tenant, from a snapshot of its own, or inside `conn`'s transaction
    (exported to the planning thread) when given."""
    snapshot: str | None = None
    if conn is not None:
        row = await (await conn.execute("SELECT pg_export_snapshot()")).fetchone()
        snapshot = str(row[0]) if row is not None else None
    return await thread_stop.run(_plan_snapshot, db, current_tenant(), snapshot, settings, new_id)


async def changed_since(conn: Conn, marks: Sequence[int], statuses: Mapping[int, str]) -> bool:
    """Take the tenant's sleep lock and lock its memory rows, then tell whether a memory the snapshot
    read changed or went away since, or the stored conflicts did (added memories do not count)."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(current_setting('hippo.tenant')))", (SLEEP_LOCK,)
    )
    cursor = await conn.execute("SELECT id, updated_at FROM memories ORDER BY seq FOR UPDATE")
    seen = {row_mark(str(i), str(u)) for i, u in await cursor.fetchall()}
    wanted = set(marks)
    if len(wanted & seen) != len(wanted):
        return True
    stored = await fetch(conn, "SELECT id, status FROM memory_conflicts", ())
    now = {int(i): str(s) for i, s in stored}
    # A conflict stored since counts too: another server's sleep of this tenant found it, and this
    # plan would store it again.
    return now.keys() != statuses.keys() or any(now[i] != status for i, status in statuses.items())


async def _many(conn: Conn, query: str, params: Iterable[Sequence[Any]]) -> None:
    rows = list(params)
    if rows:
        async with conn.cursor() as cursor:
            await cursor.executemany(query, rows)


async def _audit(
    conn: Conn, ts: str, op: str, rows: Iterable[tuple[str, str | None, dict[str, Any]]]
) -> None:
    """One audit row per (tenant, target, metadata); metadata never holds memory text."""
    await _many(
        conn,
        "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
        "VALUES (%s, %s, 'daemon', %s, %s, %s)",
        [(ts, tenant, op, target, _encode(meta).decode()) for tenant, target, meta in rows],
    )


async def _delete(conn: Conn, now: str, op: str, rows: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """Delete memories, given as (id, tenant, audit metadata), and audit each deletion under `op`."""
    if rows:
        await conn.execute("DELETE FROM memories WHERE id = ANY(%s)", ([i for i, _, _ in rows],))
    await _audit(conn, now, op, ((tenant, i, meta) for i, tenant, meta in rows))


async def _upsert_conflicts(conn: Conn, plan: Plan) -> None:
    changes, now = plan.conflicts, plan.now

    def values(found: Detected) -> tuple[str, float]:
        return found.reason, found.score

    await _many(
        conn,
        "INSERT INTO memory_conflicts (tenant_id, memory_a_id, memory_b_id, reason, score, status, "
        "detected_at, updated_at) VALUES (%s, %s, %s, %s, %s, 'open', %s, %s)",
        [(d.tenant, d.a, d.b, *values(d), now, now) for d in changes.insert],
    )
    await _many(
        conn,
        "UPDATE memory_conflicts SET status = 'open', resolved_by = NULL, reason = %s, score = %s, "
        "detected_at = %s, updated_at = %s WHERE id = %s",
        [(*values(d), now, now, n) for n, d in changes.reopen],
    )
    await _many(
        conn,
        "UPDATE memory_conflicts SET reason = %s, score = %s WHERE id = %s AND (reason != %s OR score != %s)",
        [(*values(d), n, *values(d)) for n, d in changes.refresh],
    )
    await _many(
        conn,
        "UPDATE memory_conflicts SET status = 'resolved', resolved_by = 'auto', updated_at = %s "
        "WHERE id = %s",
        [(now, n) for n in changes.auto_resolve],
    )
    await _many(
        conn,
        "UPDATE memories SET conflicts_with = %s WHERE id = %s",
        [(_encode(peers).decode(), i) for i, peers in changes.conflicts_with.items()],
    )


async def apply(conn: Conn, plan: Plan, *, dormant_at: str, step: Callable[[str], Awaitable[None]]) -> None:
    """Write phases 2-11 of a plan (the caller holds the transaction); `step` hears each phase start."""
    now = plan.now
    await step("sleep: writing phase 3 (decay)")
    await _many(
        conn,
        "UPDATE memories SET half_life_days = %s, legacy_base = 0, updated_at = %s WHERE id = %s",
        [(r.half_life, now, r.id) for r in plan.rebased],
    )
    await _audit(
        conn,
        now,
        "half_life_rebase",
        ((r.tenant, r.id, {"half_life_days": r.half_life}) for r in plan.rebased),
    )
    faded = plan.faded
    if faded.dormant:
        await dormant.copy_in(conn, [m.id for m, _ in faded.dormant], "faded", dormant_at)
    for op, items in (
        ("dormant_move", faded.dormant),
        ("decay_delete_secret", faded.secret_deleted),
        ("decay_delete", faded.deleted),
    ):
        await _delete(
            conn, now, op, [(m.id, m.tenant_id, {"strength": round(value, 4)}) for m, value in items]
        )
    if plan.expired:
        await conn.execute("DELETE FROM dormant_memories WHERE id = ANY(%s)", ([i for i, _ in plan.expired],))
    await _audit(conn, now, "dormant_expire", ((t, i, {}) for i, t in plan.expired))
    await step("sleep: writing phase 6 (replay)")
    if plan.replayed:
        await memories.strengthen(
            conn, [m.id for m in plan.replayed], now, RETRIEVAL_HALF_LIFE_BONUS, retrieval=False
        )
    await step("sleep: writing phase 8 (merge)")
    for merge in plan.merges:
        await memories.insert(conn, merge.semantic)
    await _many(
        conn,
        "UPDATE memories SET half_life_days = %s, merged_into = %s, strength = %s, updated_at = %s "
        "WHERE id = %s",
        [
            (m.half_life_days, m.merged_into, m.strength, now, m.id)
            for merge in plan.merges
            for m in merge.members
        ],
    )
    await step("sleep: writing phase 9 (dedupe)")
    await _delete(
        conn,
        now,
        "dedupe_delete",
        [
            (d.deleted.id, d.deleted.tenant_id, {"kept": d.kept.id, "overlap": round(d.overlap, 4)})
            for d in plan.duplicates
        ],
    )
    # As in SQLite: the sources of a deleted merged memory point at the copy dedupe kept.
    await _many(
        conn,
        "UPDATE memories SET merged_into = %s WHERE merged_into = %s",
        [(d.kept.id, d.deleted.id) for d in plan.duplicates],
    )
    await step("sleep: writing phase 10 (junk)")
    await _delete(
        conn, now, "junk_delete", [(j.id, j.tenant, {"reason": j.reason}) for j in plan.junk_removed]
    )
    await step("sleep: writing phase 11 (conflicts)")
    await _upsert_conflicts(conn, plan)
    await _many(
        conn, "UPDATE memories SET strength = %s WHERE id = %s", [(value, i) for i, value in plan.refreshed]
    )


async def set_shared(conn: Conn, shared: int) -> None:
    """Put the count of phase 12 in the tenant's newest run row."""
    await conn.execute(
        "UPDATE consolidation_runs SET results_json = "
        "jsonb_set(results_json::jsonb, '{shared}', to_jsonb(%s::int))::text "
        "WHERE id = (SELECT max(id) FROM consolidation_runs)",
        (shared,),
    )


async def record(
    conn: Conn,
    *,
    now: str,
    results: dict[str, Any],
    tenants: Sequence[str],
    only_tenant: str | None = None,
) -> None:
    """Phases 14-15 for the transaction's tenant: the run row (its newest 50 kept), sleep_count + 1,
    last sleep, audit `consolidate`. `tenants` and `only_tenant` are ignored: every sleep of the team
    store is of one tenant, whose own rows (and meta) are all it may write."""
    tenant = current_tenant()
    await conn.execute(
        "INSERT INTO consolidation_runs (tenant_id, ts, results_json) VALUES (%s, %s, %s)",
        (tenant, now, _encode(results).decode()),
    )
    await conn.execute(
        "DELETE FROM consolidation_runs WHERE id NOT IN "
        "(SELECT id FROM consolidation_runs ORDER BY id DESC LIMIT %s)",
        (KEEP_RUNS,),
    )
    count = int(await memories.get_meta(conn, "sleep_count") or 0)
    await memories.set_meta(conn, "sleep_count", str(count + 1))
    await memories.set_meta(conn, "last_sleep", now)
    counters = {k: v for k, v in results.items() if k != "details"}
    await _audit(conn, now, "consolidate", [(tenant, None, counters)])
