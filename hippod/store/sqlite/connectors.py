"""SQL for the webhooks (integrations.md §10): delivery logs, dead letters, tenant routing, the raw
rows an edit or deletion at the source reaches, and Slack's backfill cursors."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from hippod.model.memory import COLUMNS, Memory
from hippod.store import memory_codec

_SELECT = ", ".join(COLUMNS)

# The delivery log of each source: its table and the column its delivery key is in.
_LOGS = {"slack": ("slack_event_log", "event_id"), "github": ("github_event_log", "delivery_id")}
_ROUTES = {"slack": ("slack_workspaces", "team_id"), "github": ("github_installations", "installation_id")}


@dataclass(frozen=True, slots=True)
class Logged:
    """A delivery seen before, and the memory it made (None: it made none)."""

    memory_id: str | None


async def logged(conn: aiosqlite.Connection, source: str, key: str) -> Logged | None:
    table, column = _LOGS[source]
    rows = list(await conn.execute_fetchall(f"SELECT memory_id FROM {table} WHERE {column} = ?", (key,)))
    return Logged(rows[0][0]) if rows else None


async def log_delivery(
    conn: aiosqlite.Connection,
    source: str,
    key: str,
    tenant: str,
    now: str,
    memory_id: str | None,
    event: str,
) -> None:
    if source == "slack":
        await conn.execute(
            "INSERT INTO slack_event_log (event_id, tenant_id, ingested_at, memory_id) VALUES (?, ?, ?, ?)",
            (key, tenant, now, memory_id),
        )
    else:
        await conn.execute(
            "INSERT INTO github_event_log (delivery_id, tenant_id, event_name, ingested_at, memory_id) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, tenant, event, now, memory_id),
        )


async def routed_tenant(conn: aiosqlite.Connection, source: str, key: str | None) -> tuple[str | None, bool]:
    """(the tenant mapped to a Slack team or GitHub installation, whether any mapping exists)."""
    table, column = _ROUTES[source]
    rows = list(await conn.execute_fetchall(f"SELECT {column}, tenant_id FROM {table}"))
    mapped = {str(k): str(t) for k, t in rows}
    return (mapped.get(key) if key is not None else None), bool(mapped)


async def raw_rows(conn: aiosqlite.Connection, tenant: str, artifact_ref: str) -> list[Memory]:
    """The live raw receipts of one source item (an edit may have left more than one)."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND artifact_ref = ? AND kind = 'raw'",
        (tenant, artifact_ref),
    )
    return [memory_codec.row_to_memory(r) for r in rows]


async def dead_letter(
    conn: aiosqlite.Connection,
    *,
    source: str,
    tenant: str,
    now: str,
    bucket: str,
    error: str,
    payload: bytes,
    headers_json: str,
) -> int:
    cursor = await conn.execute(
        "INSERT INTO dead_letters (source, tenant_id, received_at, bucket, error, raw_payload, headers_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (source, tenant, now, bucket, error, payload, headers_json),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


@dataclass(frozen=True, slots=True)
class DeadLetter:
    id: int
    source: str
    tenant: str
    received_at: str
    bucket: str
    error: str
    retry_count: int


async def dead_letters(conn: aiosqlite.Connection, source: str, tenant: str, limit: int) -> list[DeadLetter]:
    """One source's dead letters for a tenant, oldest first."""
    rows = await conn.execute_fetchall(
        "SELECT id, source, tenant_id, received_at, bucket, error, retry_count FROM dead_letters "
        "WHERE source = ? AND tenant_id = ? ORDER BY received_at, id LIMIT ?",
        (source, tenant, limit),
    )
    return [DeadLetter(*r) for r in rows]


async def cursor(conn: aiosqlite.Connection, tenant: str, channel: str) -> str | None:
    rows = list(
        await conn.execute_fetchall(
            "SELECT latest_ts FROM slack_cursors WHERE tenant_id = ? AND channel_id = ?", (tenant, channel)
        )
    )
    return str(rows[0][0]) if rows else None


async def set_cursor(conn: aiosqlite.Connection, tenant: str, channel: str, latest_ts: str, now: str) -> None:
    await conn.execute(
        "INSERT INTO slack_cursors (tenant_id, channel_id, latest_ts, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (tenant_id, channel_id) DO UPDATE SET latest_ts = excluded.latest_ts, "
        "updated_at = excluded.updated_at",
        (tenant, channel, latest_ts, now),
    )
