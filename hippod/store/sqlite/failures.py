"""SQL for the failed-tool-call log and the shapes of stored tool failures
(continuity.md §8, ingest.md §7)."""

from __future__ import annotations

from typing import NamedTuple

import aiosqlite

# Rows older than this are deleted whenever a new one is written (continuity.md §8).
KEEP_DAYS = 90


class FailureRow(NamedTuple):
    """One row of the failures log: the session, the tool, the outcome and two hashes; never the text."""

    ts: str
    tenant_id: str
    session_id: str | None
    project: str
    tool: str
    outcome: str
    exact_hash: str
    shape_hash: str


async def log(conn: aiosqlite.Connection, row: FailureRow) -> None:
    await conn.execute(
        "INSERT INTO tool_failures "
        "(ts, tenant_id, session_id, project, tool, outcome, exact_hash, shape_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        tuple(row),
    )


async def prune(conn: aiosqlite.Connection, tenant: str, before: str) -> None:
    """Delete a tenant's rows logged before `before`."""
    await conn.execute("DELETE FROM tool_failures WHERE tenant_id = ? AND ts < ?", (tenant, before))


async def stored_shape(conn: aiosqlite.Connection, tenant: str, shape_hash: str) -> str | None:
    """The live capture-error memory already stored for this shape, if any.

    A memory forgotten since (or sent to dormant) no longer counts, so the failure is stored again.
    """
    rows = list(
        await conn.execute_fetchall(
            "SELECT s.memory_id FROM error_shapes s JOIN memories m ON m.id = s.memory_id "
            "WHERE s.tenant_id = ? AND s.shape_hash = ?",
            (tenant, shape_hash),
        )
    )
    return str(rows[0][0]) if rows else None


async def set_shape(conn: aiosqlite.Connection, tenant: str, shape_hash: str, memory_id: str) -> None:
    await conn.execute(
        "INSERT INTO error_shapes (tenant_id, shape_hash, memory_id) VALUES (?, ?, ?) "
        "ON CONFLICT (tenant_id, shape_hash) DO UPDATE SET memory_id = excluded.memory_id",
        (tenant, shape_hash, memory_id),
    )


async def window(conn: aiosqlite.Connection, tenant: str, since: str) -> list[FailureRow]:
    """A tenant's rows logged at or after `since`, oldest first."""
    rows = await conn.execute_fetchall(
        "SELECT ts, tenant_id, session_id, project, tool, outcome, exact_hash, shape_hash "
        "FROM tool_failures WHERE tenant_id = ? AND ts >= ? ORDER BY ts, id",
        (tenant, since),
    )
    return [FailureRow(*r) for r in rows]


async def first_sessions(conn: aiosqlite.Connection, tenant: str, shapes: list[str]) -> dict[str, str | None]:
    """For each shape hash, the session of its earliest retained row."""
    found: dict[str, str | None] = {}
    for start in range(0, len(shapes), 500):
        chunk = shapes[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = await conn.execute_fetchall(
            "SELECT shape_hash, session_id FROM ("
            "  SELECT shape_hash, session_id, "
            "  row_number() OVER (PARTITION BY shape_hash ORDER BY ts, id) AS n "
            f"  FROM tool_failures WHERE tenant_id = ? AND shape_hash IN ({marks})"
            ") WHERE n = 1",
            (tenant, *chunk),
        )
        found.update({str(s): sess for s, sess in rows})
    return found
