"""SQL behind the dashboard's views (integrations.md §13): every read is one tenant's, aggregated or
paged in SQL where it can be, so a view of a 100,000-memory store reads what the page shows (the
map's strength figures read reports.status_rows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite
import msgspec

from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory
from hippod.store.records import DormantMemory

_SELECT = ", ".join(COLUMNS)
_decode = msgspec.json.Decoder(dict[str, Any]).decode
# Audit ops by which a sleep retires a memory (hippod/store/sqlite/sleep.py writes them at the run's time).


async def data_version(conn: aiosqlite.Connection) -> int:
    """A number that changes whenever another connection (the daemon's writer) commits."""
    rows = await conn.execute_fetchall("PRAGMA data_version")
    return int(next(iter(rows))[0])


async def _by_id(
    conn: aiosqlite.Connection, columns: str, table: str, tenant: str, ids: Sequence[str]
) -> Any:
    marks = ", ".join("?" * len(ids))
    # `+tenant_id`: by the id's own index. Left to itself, SQLite walks the tenant's index instead,
    # every row of the tenant (a quarter of a second at 100,000 memories).
    sql = f"SELECT {columns} FROM {table} WHERE id IN ({marks}) AND +tenant_id = ?"
    return await conn.execute_fetchall(sql, [*ids, tenant]) if ids else []


async def memories_by_id(conn: aiosqlite.Connection, tenant: str, ids: Sequence[str]) -> dict[str, Memory]:
    """The tenant's memories with these ids (missing ones left out)."""
    found = (row_to_memory(r) for r in await _by_id(conn, _SELECT, "memories", tenant, ids))
    return {m.id: m for m in found}


async def pinned_page(
    conn: aiosqlite.Connection, tenant: str, limit: int, offset: int
) -> tuple[int, list[Memory]]:
    """(how many pinned memories the tenant has, one page of them, newest first)."""
    where = "WHERE tenant_id = ? AND pinned = 1 AND kind != 'archived'"
    count = await conn.execute_fetchall(f"SELECT count(*) FROM memories {where}", (tenant,))
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories {where} ORDER BY created DESC, id LIMIT ? OFFSET ?",
        (tenant, limit, offset),
    )
    return int(next(iter(count))[0]), [row_to_memory(r) for r in rows]


async def dormant_page(
    conn: aiosqlite.Connection, tenant: str, limit: int, offset: int
) -> list[DormantMemory]:
    """One page of the tenant's dormant memories, newest dormant first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT}, dormant_at, dormant_reason FROM dormant_memories WHERE tenant_id = ? "
        "ORDER BY dormant_at DESC, id LIMIT ? OFFSET ?",
        (tenant, limit, offset),
    )
    return [DormantMemory(row_to_memory(r), str(r[-2]), str(r[-1])) for r in rows]


async def dormant_per_day(conn: aiosqlite.Connection, tenant: str) -> list[tuple[str, int]]:
    """(day, memories that went dormant that day) for the days any did, oldest first."""
    rows = await conn.execute_fetchall(
        "SELECT substr(dormant_at, 1, 10) AS day, count(*) FROM dormant_memories WHERE tenant_id = ? "
        "GROUP BY day ORDER BY day",
        (tenant,),
    )
    return [(str(d), int(n)) for d, n in rows]


async def dormant_contents(conn: aiosqlite.Connection, tenant: str, ids: Sequence[str]) -> dict[str, str]:
    """The text of those ids still in the tenant's dormant store."""
    rows = await _by_id(conn, "id, content", "dormant_memories", tenant, ids)
    return {str(i): str(c) for i, c in rows}


@dataclass(frozen=True, slots=True)
class SleepRun:
    ts: str
    results: dict[str, Any]


async def sleep_runs(conn: aiosqlite.Connection, limit: int) -> list[SleepRun]:
    """The newest recorded sleeps (their counts cover the whole store), newest first."""
    rows = await conn.execute_fetchall(
        "SELECT ts, results_json FROM consolidation_runs ORDER BY id DESC LIMIT ?", (limit,)
    )
    return [SleepRun(str(ts), _decode(raw)) for ts, raw in rows]


async def merges_at(conn: aiosqlite.Connection, tenant: str, times: Sequence[str]) -> list[Memory]:
    """The merged memories sleeps made at these times: consolidation rows created at a run's time."""
    if not times:
        return []
    marks = ", ".join("?" * len(times))
    # `pinned IN (0, 1)` lets the (tenant_id, pinned, created) index find them, not a scan of every row.
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND pinned IN (0, 1) AND created IN ({marks}) "
        "AND source = 'consolidation' ORDER BY created DESC, id",
        [tenant, *times],
    )
    return [row_to_memory(r) for r in rows]


@dataclass(frozen=True, slots=True)
class Retired:
    ts: str
    op: str
    target: str
    metadata: dict[str, Any]


async def retired_at(
    conn: aiosqlite.Connection, tenant: str, times: Sequence[str], ops: Sequence[str], per_op: int
) -> tuple[dict[tuple[str, str], int], list[Retired]]:
    """What sleeps at these times retired through the audit ops `ops`: (how many per (time, op),
    the first `per_op` of each)."""
    if not times:
        return {}, []
    where = f"tenant_id = ? AND op IN ({', '.join('?' * len(ops))}) AND ts IN ({', '.join('?' * len(times))})"
    params = [tenant, *ops, *times]
    counts = await conn.execute_fetchall(
        f"SELECT ts, op, count(*) FROM audit_log WHERE {where} GROUP BY ts, op", params
    )
    rows = await conn.execute_fetchall(
        "SELECT ts, op, target_id, metadata_json FROM (SELECT ts, op, target_id, metadata_json, "
        f"row_number() OVER (PARTITION BY ts, op ORDER BY id) AS n FROM audit_log WHERE {where}) "
        "WHERE n <= ?",
        [*params, per_op],
    )
    return (
        {(str(t), str(o)): int(n) for t, o, n in counts},
        [Retired(str(t), str(o), str(i), _decode(meta)) for t, o, i, meta in rows],
    )


async def ledger_per_day(
    conn: aiosqlite.Connection, tenant: str, since: str
) -> list[tuple[str, str, bool, int]]:
    """(day, kind, skipped, tokens) sums of the token ledger from local day `since` on."""
    rows = await conn.execute_fetchall(
        "SELECT day, kind, skipped, sum(tokens) FROM token_ledger WHERE tenant_id = ? AND day >= ? "
        "GROUP BY day, kind, skipped ORDER BY day",
        (tenant, since),
    )
    return [(str(d), str(k), bool(s), int(t)) for d, k, s, t in rows]
