"""SQL for the continuity tables (continuity.md §1-§3): task snapshots, session events, handoffs.

Every read filters by tenant. The verbs live in handlers/continuity.py; `context`, the compaction
hooks and `compact-resume` read and write through these same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiosqlite
import msgspec

from hippod.model.next_step import next_step_of


@dataclass(slots=True)
class Snapshot:
    id: int
    task: str
    summary: str
    next_step: str | None
    status: str
    source: str
    session_id: str | None
    scope: str | None
    created_at: str
    updated_at: str


@dataclass(slots=True)
class Event:
    id: int
    session_id: str
    task: str | None
    event_type: str
    content: str
    source: str
    created_at: str


@dataclass(slots=True)
class Handoff:
    id: int
    session_id: str
    repo_root: str | None
    task_id: str | None
    summary: str
    next_action: str | None
    artifacts: list[str] = field(default_factory=list)
    created_at: str = ""


_SNAPSHOT = "id, task, summary, next_step, status, source, session_id, scope, created_at, updated_at"
_EVENT = "id, session_id, task, event_type, content, source, created_at"
_HANDOFF = "id, session_id, repo_root, task_id, summary, next_action, artifacts_json, created_at"


def _snapshot(row: Sequence[Any]) -> Snapshot:
    """A snapshot row; its next step without a `Next step:` label, which every layout prints itself
    (a step saved as a whole message, or with its label, would otherwise show the label twice)."""
    snapshot = Snapshot(*row)
    if snapshot.next_step:
        snapshot.next_step = next_step_of(snapshot.next_step) or None
    return snapshot


def _handoff(row: Sequence[Any]) -> Handoff:
    values = list(row)
    artifacts = msgspec.json.decode(values[6] or "[]", type=list[str])
    return Handoff(
        id=values[0],
        session_id=values[1],
        repo_root=values[2],
        task_id=values[3],
        summary=values[4],
        next_action=values[5],
        artifacts=artifacts,
        created_at=values[7],
    )


# --- task snapshots (§1) ---------------------------------------------------------------------------


async def save_snapshot(
    conn: aiosqlite.Connection,
    tenant: str,
    *,
    task: str,
    summary: str,
    next_step: str | None,
    source: str,
    session_id: str | None,
    scope: str | None,
    now: str,
) -> int:
    """Make a new active snapshot; the tenant's current active one becomes `superseded`."""
    await conn.execute(
        "UPDATE task_snapshots SET status = 'superseded', updated_at = ? "
        "WHERE tenant_id = ? AND status = 'active'",
        (now, tenant),
    )
    cursor = await conn.execute(
        "INSERT INTO task_snapshots (task, summary, next_step, status, source, session_id, scope, tenant_id, "
        "created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)",
        (task, summary, next_step, source, session_id, scope, tenant, now, now),
    )
    return int(cursor.lastrowid or 0)


async def active_snapshot(conn: aiosqlite.Connection, tenant: str) -> Snapshot | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_SNAPSHOT} FROM task_snapshots WHERE tenant_id = ? AND status = 'active' "
        "ORDER BY updated_at DESC, id DESC LIMIT 1",
        (tenant,),
    )
    return _snapshot(next(iter(rows))) if rows else None


async def clear_snapshot(conn: aiosqlite.Connection, tenant: str, status: str, now: str) -> bool:
    """Give the active snapshot another status (`cleared` by default); False when there was none."""
    cursor = await conn.execute(
        "UPDATE task_snapshots SET status = ?, updated_at = ? WHERE tenant_id = ? AND status = 'active'",
        (status, now, tenant),
    )
    return cursor.rowcount > 0


# --- session events (§2) ---------------------------------------------------------------------------


async def log_event(
    conn: aiosqlite.Connection,
    tenant: str,
    *,
    session_id: str,
    content: str,
    event_type: str = "note",
    task: str | None = None,
    source: str = "cli",
    scope: str | None = None,
    now: str,
) -> int:
    cursor = await conn.execute(
        "INSERT INTO session_events (session_id, task, event_type, content, source, scope, tenant_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, task, event_type, content, source, scope, tenant, now),
    )
    return int(cursor.lastrowid or 0)


async def recent_events(
    conn: aiosqlite.Connection,
    tenant: str,
    *,
    session_id: str | None = None,
    task: str | None = None,
    limit: int = 8,
) -> list[Event]:
    """The newest `limit` events of a session (or of a task), oldest first."""
    column, value = ("task", task) if session_id is None else ("session_id", session_id)
    rows = await conn.execute_fetchall(
        f"SELECT {_EVENT} FROM session_events WHERE tenant_id = ? AND {column} = ? ORDER BY id DESC LIMIT ?",
        (tenant, value, limit),
    )
    return [Event(*r) for r in reversed(list(rows))]


# --- handoffs (§3) ---------------------------------------------------------------------------------


async def create_handoff(
    conn: aiosqlite.Connection,
    tenant: str,
    *,
    session_id: str,
    repo_root: str | None,
    task_id: str | None,
    summary: str,
    next_action: str | None,
    artifacts: Sequence[str],
    scope: str | None,
    now: str,
) -> int:
    cursor = await conn.execute(
        "INSERT INTO session_handoffs (session_id, repo_root, task_id, summary, next_action, artifacts_json, "
        "scope, tenant_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            repo_root,
            task_id,
            summary,
            next_action,
            msgspec.json.encode(list(artifacts)).decode(),
            scope,
            tenant,
            now,
        ),
    )
    return int(cursor.lastrowid or 0)


async def latest_handoff(
    conn: aiosqlite.Connection, tenant: str, session_id: str | None = None
) -> Handoff | None:
    """The newest handoff of the tenant (of one session when given)."""
    where, params = "tenant_id = ?", [tenant]
    if session_id is not None:
        where += " AND session_id = ?"
        params.append(session_id)
    rows = await conn.execute_fetchall(
        f"SELECT {_HANDOFF} FROM session_handoffs WHERE {where} ORDER BY id DESC LIMIT 1", params
    )
    return _handoff(next(iter(rows))) if rows else None


async def latest_task_handoff(conn: aiosqlite.Connection, tenant: str, task_id: str) -> Handoff | None:
    """The newest handoff filed with `--task task_id` (a card's is `card:<id>`)."""
    rows = await conn.execute_fetchall(
        f"SELECT {_HANDOFF} FROM session_handoffs WHERE tenant_id = ? AND task_id = ? "
        "ORDER BY id DESC LIMIT 1",
        (tenant, task_id),
    )
    return _handoff(next(iter(rows))) if rows else None


async def handoff(conn: aiosqlite.Connection, tenant: str, handoff_id: int) -> Handoff | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_HANDOFF} FROM session_handoffs WHERE tenant_id = ? AND id = ?", (tenant, handoff_id)
    )
    return _handoff(next(iter(rows))) if rows else None


async def snapshot_by_id(conn: aiosqlite.Connection, tenant: str, snapshot_id: int) -> Snapshot | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_SNAPSHOT} FROM task_snapshots WHERE tenant_id = ? AND id = ?", (tenant, snapshot_id)
    )
    return _snapshot(next(iter(rows))) if rows else None


async def latest_event_session(conn: aiosqlite.Connection, tenant: str) -> str | None:
    """The session of the tenant's newest event, if any."""
    rows = await conn.execute_fetchall(
        "SELECT session_id FROM session_events WHERE tenant_id = ? ORDER BY id DESC LIMIT 1", (tenant,)
    )
    return str(next(iter(rows))[0]) if rows else None


# --- one session's items, for `hippo_assemble` (integrations.md §11) --------------------------------


async def _session_rows(
    conn: aiosqlite.Connection,
    table: str,
    columns: str,
    tenant: str,
    session_id: str,
    scope: str | None,
    limit: int,
) -> list[Sequence[Any]]:
    """The newest `limit` rows of one session in a continuity table, oldest first: rows of any
    scope, or (given a scope) rows of that scope and rows without one."""
    where, params = ("", []) if scope is None else (" AND (scope IS NULL OR scope = ?)", [scope])
    rows = await conn.execute_fetchall(
        f"SELECT {columns} FROM {table} WHERE tenant_id = ? AND session_id = ?{where} "
        "ORDER BY id DESC LIMIT ?",
        (tenant, session_id, *params, limit),
    )
    return list(reversed(list(rows)))


async def session_events(
    conn: aiosqlite.Connection, tenant: str, session_id: str, *, scope: str | None, limit: int
) -> list[Event]:
    """The newest `limit` events of a session, oldest first."""
    rows = await _session_rows(conn, "session_events", _EVENT, tenant, session_id, scope, limit)
    return [Event(*r) for r in rows]


async def session_handoffs(
    conn: aiosqlite.Connection, tenant: str, session_id: str, *, scope: str | None, limit: int
) -> list[Handoff]:
    """The newest `limit` handoffs of a session, oldest first."""
    rows = await _session_rows(conn, "session_handoffs", _HANDOFF, tenant, session_id, scope, limit)
    return [_handoff(r) for r in rows]
