"""SQL for sleep: reading its snapshot and applying its plan in one transaction (sleep.md §2)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, overload

import aiosqlite
import msgspec

from hippod.model.conflicts import Detected
from hippod.model.sleep_plan import Plan, Settings
from hippod.model.strength import RETRIEVAL_HALF_LIFE_BONUS
from hippod.store.roots import global_root
from hippod.store.sleep_rows import KEEP_RUNS, Planned, row_mark
from hippod.store.sqlite import dormant, memories, sleep_traits
from hippod.store.sqlite.db import Database
from hippod.store.sqlite.sleep_process import plan_in_child

_encode = msgspec.json.encode


async def planned(
    db: Database, settings: Settings, new_id: Callable[[], str], conn: aiosqlite.Connection | None = None
) -> Planned:
    """The plan of a snapshot of the store. Given the sleep's write transaction (`conn`), the snapshot
    is taken under its write lock, so it sees what that transaction sees.

    Reading the snapshot and the pure phases are slow on a large store: a child process (with its
    own connection) does both, so the daemon answers at full speed meanwhile (sleep_process.py).
    """
    # The file for the traits the planner works out is named here, so that it goes whatever
    # becomes of the planner (killed by a cancel, timed out); the caller owns it once it has the plan.
    spill = (
        None
        if settings.dry_run
        else sleep_traits.new_path(os.path.join(global_root(), sleep_traits.SPILL_DIR))
    )
    before = await db.commits()  # read before the planner's snapshot begins
    try:
        result, marks, statuses = await plan_in_child(db.path, settings, new_id, spill)
    except BaseException:
        sleep_traits.discard(spill)
        raise
    if result.traits_file is None:
        sleep_traits.discard(spill)
    return result, _Marks(marks, db, before), statuses


class _Marks(Sequence[int]):
    """A snapshot's marks, and where to ask whether anything was committed since it began."""

    def __init__(self, marks: Sequence[int], db: Database, commits: int) -> None:
        self.marks, self.db, self.commits = marks, db, commits

    def __len__(self) -> int:
        return len(self.marks)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        return self.marks[index]


async def changed_since(
    conn: aiosqlite.Connection, marks: Sequence[int], statuses: Mapping[int, str]
) -> bool:
    """Whether a memory a snapshot read (its `row_mark`s) changed or went away since, or a stored
    conflict's status moved; memories added since do not count.

    Runs inside the sleep's write transaction; each page of rows is marked and matched on a thread,
    so the event loop goes on answering recalls meanwhile (a million rows take seconds).
    """
    import numpy as np  # loaded with the sleep's plan already

    if isinstance(marks, _Marks):
        if await marks.db.commits() == marks.commits:
            return False  # nothing committed since before the snapshot began: it is the store as it is
        marks = marks.marks
    # Sorted on a thread (a million marks: 0.06 s of numpy), the loop answering meanwhile.
    wanted = await asyncio.to_thread(_unique, marks)
    seen: list[Any] = []
    cursor = await conn.execute("SELECT id, updated_at FROM memories")
    while rows := list(await cursor.fetchmany(5000)):
        seen.append(await asyncio.to_thread(_still_there, rows, wanted))
    await cursor.close()
    still = await asyncio.to_thread(_unique, np.concatenate(seen)) if seen else np.empty(0, dtype=np.int64)
    if len(still) != len(wanted):
        return True
    stored = await conn.execute_fetchall("SELECT id, status FROM memory_conflicts")
    now = {int(i): str(s) for i, s in stored}
    return any(now.get(i) != status for i, status in statuses.items())


def _unique(marks: Any) -> Any:
    """The distinct marks, sorted, as an int64 array.

    By a sort, which numpy runs without the GIL: `np.unique` (hash-based from numpy 2.3) takes over
    ten times as long on a million marks (0.8 s against 0.06 s) and holds the GIL 0.2 s at a stretch.
    """
    import numpy as np

    ordered = np.sort(np.asarray(marks, dtype=np.int64))
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def _still_there(rows: Sequence[Any], wanted: Any) -> Any:
    """The marks of these (id, updated_at) rows that the snapshot holds too."""
    import numpy as np

    found = np.fromiter((row_mark(str(i), str(u)) for i, u in rows), dtype=np.int64, count=len(rows))
    # `wanted` is sorted: a binary search per row. (np.isin sorts both sides on every call, which
    # for the pages of a million rows against a million marks took minutes.)
    at = np.minimum(np.searchsorted(wanted, found), max(len(wanted) - 1, 0))
    return found[wanted[at] == found] if len(wanted) else found[:0]


async def _audit(
    conn: aiosqlite.Connection, ts: str, op: str, rows: Iterable[tuple[str, str | None, dict[str, Any]]]
) -> None:
    """One audit row per (tenant, target, metadata); metadata never holds memory text."""
    await conn.executemany(
        "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
        "VALUES (?, ?, 'daemon', ?, ?, ?)",
        [(ts, tenant, op, target, _encode(meta).decode()) for tenant, target, meta in rows],
    )


async def _delete(
    conn: aiosqlite.Connection, now: str, op: str, rows: Sequence[tuple[str, str, dict[str, Any]]]
) -> None:
    """Delete memories, given as (id, tenant, audit metadata), and audit each deletion under `op`."""
    await conn.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i, _, _ in rows])
    await _audit(conn, now, op, ((tenant, i, meta) for i, tenant, meta in rows))


async def _upsert_conflicts(conn: aiosqlite.Connection, plan: Plan) -> None:
    changes, now = plan.conflicts, plan.now

    def values(found: Detected) -> tuple[str, float]:
        return found.reason, found.score

    await conn.executemany(
        "INSERT INTO memory_conflicts (tenant_id, memory_a_id, memory_b_id, reason, score, status, "
        "detected_at, updated_at) VALUES (?, ?, ?, ?, ?, 'open', ?, ?)",
        [(d.tenant, d.a, d.b, *values(d), now, now) for d in changes.insert],
    )
    await conn.executemany(
        "UPDATE memory_conflicts SET status = 'open', resolved_by = NULL, reason = ?, score = ?, "
        "detected_at = ?, updated_at = ? WHERE id = ?",
        [(*values(d), now, now, n) for n, d in changes.reopen],
    )
    await conn.executemany(
        "UPDATE memory_conflicts SET reason = ?, score = ? WHERE id = ? AND (reason != ? OR score != ?)",
        [(*values(d), n, *values(d)) for n, d in changes.refresh],
    )
    await conn.executemany(
        "UPDATE memory_conflicts SET status = 'resolved', resolved_by = 'auto', updated_at = ? WHERE id = ?",
        [(now, n) for n in changes.auto_resolve],
    )
    await conn.executemany(
        "UPDATE memories SET conflicts_with = ? WHERE id = ?",
        [(_encode(peers).decode(), i) for i, peers in changes.conflicts_with.items()],
    )


async def apply(
    conn: aiosqlite.Connection, plan: Plan, *, dormant_at: str, step: Callable[[str], Awaitable[None]]
) -> None:
    """Write phases 2-11 of a plan (the caller holds the transaction); `step` hears each phase start."""
    now = plan.now
    await step("sleep: writing phase 3 (decay)")
    await conn.executemany(
        "UPDATE memories SET half_life_days = ?, legacy_base = 0, updated_at = ? WHERE id = ?",
        [(r.half_life, now, r.id) for r in plan.rebased],
    )
    await _audit(
        conn,
        now,
        "half_life_rebase",
        ((r.tenant, r.id, {"half_life_days": r.half_life}) for r in plan.rebased),
    )
    faded = plan.faded
    await dormant.copy_in(conn, [m.id for m, _ in faded.dormant], "faded", dormant_at)
    for op, items in (
        ("dormant_move", faded.dormant),
        ("decay_delete_secret", faded.secret_deleted),
        ("decay_delete", faded.deleted),
    ):
        await _delete(
            conn, now, op, [(m.id, m.tenant_id, {"strength": round(value, 4)}) for m, value in items]
        )
    await conn.executemany("DELETE FROM dormant_memories WHERE id = ?", [(i,) for i, _ in plan.expired])
    await _audit(conn, now, "dormant_expire", ((t, i, {}) for i, t in plan.expired))
    await step("sleep: writing phase 6 (replay)")
    await memories.strengthen(
        conn, [m.id for m in plan.replayed], now, RETRIEVAL_HALF_LIFE_BONUS, retrieval=False
    )
    await step("sleep: writing phase 8 (merge)")
    for merge in plan.merges:
        await memories.insert(conn, merge.semantic)
    await conn.executemany(
        "UPDATE memories SET half_life_days = ?, merged_into = ?, strength = ?, updated_at = ? WHERE id = ?",
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
    # The sources of a deleted merged memory point at the copy dedupe kept in its place (a kept row
    # is never deleted by dedupe), so they stay merged (sleep.md §5.1): freed, they would merge again
    # at the next sleep and lose 70 % of their half-life each time the new merge is deduped again.
    await conn.executemany(
        "UPDATE memories SET merged_into = ? WHERE merged_into = ?",
        [(d.kept.id, d.deleted.id) for d in plan.duplicates],
    )
    await step("sleep: writing phase 10 (junk)")
    await _delete(
        conn, now, "junk_delete", [(j.id, j.tenant, {"reason": j.reason}) for j in plan.junk_removed]
    )
    await step("sleep: writing phase 11 (conflicts)")
    await _upsert_conflicts(conn, plan)
    await conn.executemany(
        "UPDATE memories SET strength = ? WHERE id = ?", [(value, i) for i, value in plan.refreshed]
    )
    await _name_compared(conn, plan)


async def _name_compared(conn: aiosqlite.Connection, plan: Plan) -> None:
    """Name the merged episodes and semantic memories this plan wrote with its time (migrations_traits.py,
    migration 25), after every write of the plan to them: the plan compared them as it wrote them
    (`Rows.fresh` holds a merge's rows changed), so the next sleep need not compare them again.

    Replayed and rebased rows are not named: the plan moved their strength without comparing them
    again, and a strength that rose may make a conflict candidate of one. A tenant's own sleep names
    nothing and keeps the names of the last sleep of the store: it leaves `last_sleep` where it was.
    """
    if plan.tenant is not None:
        return
    await conn.execute("DELETE FROM sleep_compared")
    written = [i for merge in plan.merges for i in (merge.semantic.id, *(m.id for m in merge.members))]
    await conn.executemany(
        "INSERT OR IGNORE INTO sleep_compared (id) SELECT id FROM memories WHERE id = ? AND updated_at = ?",
        [(i, plan.now) for i in written],
    )


async def set_shared(conn: aiosqlite.Connection, shared: int) -> None:
    """Phase 12 commits after the run row is written (another database): put its count in that row."""
    await conn.execute(
        "UPDATE consolidation_runs SET results_json = json_set(results_json, '$.shared', ?) "
        "WHERE id = (SELECT max(id) FROM consolidation_runs)",
        (shared,),
    )


async def record(
    conn: aiosqlite.Connection,
    *,
    now: str,
    results: dict[str, Any],
    tenants: Sequence[str],
    only_tenant: str | None = None,
) -> None:
    """Phases 14-15: the run row (newest 50 kept), audit `consolidate`; for a run over the whole store
    (`only_tenant` None), sleep_count + 1 and the last sleep too."""
    await conn.execute(
        "INSERT INTO consolidation_runs (ts, results_json, tenant_id) VALUES (?, ?, ?)",
        (now, _encode(results).decode(), only_tenant),
    )
    await conn.execute(
        "DELETE FROM consolidation_runs WHERE id NOT IN "
        "(SELECT id FROM consolidation_runs ORDER BY id DESC LIMIT ?)",
        (KEEP_RUNS,),
    )
    if only_tenant is None:
        count = int(await memories.get_meta(conn, "sleep_count") or 0)
        await memories.set_meta(conn, "sleep_count", str(count + 1))
        await memories.set_meta(conn, "last_sleep", now)
    counters = {k: v for k, v in results.items() if k != "details"}
    await _audit(conn, now, "consolidate", ((t, None, counters) for t in tenants))


async def recent_runs(conn: aiosqlite.Connection) -> list[dict[str, Any]]:
    """stats.json `consolidation_runs`: newest 50, {timestamp, decayed, merged, removed}."""
    rows = await conn.execute_fetchall(
        "SELECT ts, results_json FROM consolidation_runs ORDER BY id DESC LIMIT ?", (KEEP_RUNS,)
    )
    runs: list[dict[str, Any]] = []
    for ts, raw in rows:
        data = msgspec.json.decode(raw)
        runs.append(
            {
                "timestamp": ts,
                "decayed": int(data.get("removed", 0)),
                "merged": int(data.get("merged", 0)),
                "removed": int(data.get("removed", 0))
                + int(sum(data.get("deduped", {}).values()))
                + int(data.get("junk_removed", 0)),
            }
        )
    return runs
