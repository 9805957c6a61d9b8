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


async def dead_letters(
    conn: aiosqlite.Connection, source: str, tenants: tuple[str, ...], limit: int
) -> list[DeadLetter]:
    """One source's dead letters not yet replayed, for these tenants, oldest first."""
    marks = ", ".join("?" for _ in tenants)
    rows = await conn.execute_fetchall(
        "SELECT id, source, tenant_id, received_at, bucket, error, retry_count FROM dead_letters "
        f"WHERE source = ? AND tenant_id IN ({marks}) AND replayed_at IS NULL "
        "ORDER BY received_at, id LIMIT ?",
        (source, *tenants, limit),
    )
    return [DeadLetter(*r) for r in rows]


@dataclass(frozen=True, slots=True)
class Letter:
    """A dead letter as a replay reads it: what was received, with its signed headers."""

    id: int
    tenant: str
    retry_count: int
    payload: bytes
    headers_json: str


async def letters_to_replay(
    conn: aiosqlite.Connection, source: str, tenants: tuple[str, ...], letter_id: int | None
) -> list[Letter]:
    """The dead letters a replay takes, in the order they were received (one, with `letter_id`)."""
    marks = ", ".join("?" for _ in tenants)
    where = f"source = ? AND tenant_id IN ({marks}) AND replayed_at IS NULL"
    args: list[object] = [source, *tenants]
    if letter_id is not None:
        where += " AND id = ?"
        args.append(letter_id)
    rows = await conn.execute_fetchall(
        f"SELECT id, tenant_id, retry_count, raw_payload, headers_json FROM dead_letters WHERE {where} "
        "ORDER BY received_at, id",
        args,
    )
    return [Letter(int(r[0]), str(r[1]), int(r[2]), bytes(r[3]), str(r[4])) for r in rows]


async def mark_replayed(
    conn: aiosqlite.Connection, letter_id: int, status: str, memory_id: str | None, now: str
) -> None:
    """The letter is done: applied (or found applied) by a replay; it is never replayed again."""
    await conn.execute(
        "UPDATE dead_letters SET replayed_at = ?, replay_status = ?, replay_memory_id = ?, "
        "retry_count = retry_count + 1, retried_at = ? WHERE id = ? AND replayed_at IS NULL",
        (now, status, memory_id, now, letter_id),
    )


async def mark_failed_again(
    conn: aiosqlite.Connection, letter_id: int, tenant: str, bucket: str, error: str, now: str
) -> int:
    """A replay that failed: the letter stays, with its new error and one more attempt; the count."""
    await conn.execute(
        "UPDATE dead_letters SET tenant_id = ?, bucket = ?, error = ?, retry_count = retry_count + 1, "
        "retried_at = ? WHERE id = ? AND replayed_at IS NULL",
        (tenant, bucket, error, now, letter_id),
    )
    rows = list(
        await conn.execute_fetchall("SELECT retry_count FROM dead_letters WHERE id = ?", (letter_id,))
    )
    return int(rows[0][0]) if rows else 0


async def record_removal(
    conn: aiosqlite.Connection, tenant: str, artifact_ref: str, now: str, key: str
) -> None:
    """The source deleted this item: no delivery that comes later brings it back."""
    await conn.execute(
        "INSERT OR IGNORE INTO connector_removals (tenant_id, artifact_ref, removed_at, delivery) "
        "VALUES (?, ?, ?, ?)",
        (tenant, artifact_ref, now, key),
    )


async def removed(conn: aiosqlite.Connection, tenant: str, artifact_ref: str) -> bool:
    rows = await conn.execute_fetchall(
        "SELECT 1 FROM connector_removals WHERE tenant_id = ? AND artifact_ref = ?", (tenant, artifact_ref)
    )
    return bool(list(rows))


@dataclass(frozen=True, slots=True)
class Kept:
    """A source item's receipt as the connectors left it: the live memory (None: they left none)
    and the source's time of the newest edit applied (µs since the epoch; None: no edit yet)."""

    memory_id: str | None
    source_edited_us: int | None

    def stale(self, edited: int | None) -> bool:
        """Whether an edit made at `edited` is no newer than the one applied (an edit or a stored
        edit without a time is not ordered)."""
        return edited is not None and self.source_edited_us is not None and edited <= self.source_edited_us


async def kept(conn: aiosqlite.Connection, tenant: str, artifact_ref: str) -> Kept | None:
    rows = list(
        await conn.execute_fetchall(
            "SELECT memory_id, source_edited_us FROM connector_receipts "
            "WHERE tenant_id = ? AND artifact_ref = ?",
            (tenant, artifact_ref),
        )
    )
    return Kept(rows[0][0], rows[0][1]) if rows else None


async def keep(
    conn: aiosqlite.Connection,
    tenant: str,
    artifact_ref: str,
    memory_id: str | None,
    edited: int | None,
    key: str,
    now: str,
) -> None:
    """Note the receipt a delivery left live (None: none) and, for an edit, its time at the source."""
    await conn.execute(
        "INSERT INTO connector_receipts (tenant_id, artifact_ref, memory_id, source_edited_us, delivery, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, artifact_ref) DO UPDATE SET "
        "memory_id = excluded.memory_id, delivery = excluded.delivery, updated_at = excluded.updated_at, "
        "source_edited_us = coalesce(excluded.source_edited_us, source_edited_us)",
        (tenant, artifact_ref, memory_id, edited, key, now),
    )


async def archived_only(conn: aiosqlite.Connection, tenant: str, artifact_ref: str) -> bool:
    """Whether the item was stored and every receipt of it archived since (deleted, or archived by
    the user): a late delivery of it does not bring it back."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT kind FROM memories WHERE tenant_id = ? AND artifact_ref = ?", (tenant, artifact_ref)
        )
    )
    return bool(rows) and all(kind == "archived" for (kind,) in rows)


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
