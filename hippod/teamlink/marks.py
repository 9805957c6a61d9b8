"""Retrievals and outcome marks of team memories, kept for the team server (store/sqlite/team_marks.py).

A laptop's recall reads team memories from its copy and never strengthens them there: the copy
follows the server. It queues a `retrieved` mark for each team memory it returned instead, and
`outcome` queues a `good` or `bad` one; the sender (teamlink/sender.py) delivers them in batches to
`POST /v1/team/marks`, and the strengthened rows come back with the next sync.
"""

from __future__ import annotations

import aiosqlite
import msgspec

from hippod.base import clock
from hippod.store.sqlite import team_marks
from hippod.store.stores import SqliteStore, StoreRegistry
from hippod.teamlink import cache, membership


def batch_key(tenant: str, session: str) -> str:
    """Where the global store keeps the team memories a session's last recall returned."""
    return f"last_team_batch:{tenant}:{session}"


async def record_recall(
    conn: aiosqlite.Connection,
    global_store: SqliteStore,
    ids: list[str],
    tenant: str,
    session: str,
    now: str,
    *,
    strengthen: bool,
) -> None:
    """Inside the global store's bookkeeping write after a recall: the session's last team batch (what
    `outcome` without ids marks), and, when the recall strengthens, a retrieval mark on each team
    memory it returned."""
    await global_store.rows.set_meta(conn, batch_key(tenant, session), msgspec.json.encode(ids).decode())
    if strengthen and ids:
        await team_marks.add(conn, team_marks.RETRIEVED, ids, now)


async def last_batch(global_store: SqliteStore, tenant: str, session: str) -> list[str] | None:
    """The team memories the session's last recall returned; None when it has recalled none."""
    raw = await global_store.rows.get_meta(global_store.db.reader, batch_key(tenant, session))
    return None if raw is None else msgspec.json.decode(raw, type=list[str])


async def in_copy(registry: StoreRegistry, memory_id: str) -> bool:
    """Whether the id is a team memory in this laptop's copy."""
    if not membership.in_team(registry):
        return False
    copy = await cache.open_cache(registry, create=False)
    return copy is not None and await copy.rows.get(copy.db.reader, cache.TENANT, memory_id) is not None


async def queue_outcome(global_store: SqliteStore, ids: list[str], good: bool) -> None:
    """A good or bad mark on each team memory, for the sender to deliver."""
    async with global_store.db.transaction() as conn:
        await team_marks.add(conn, team_marks.GOOD if good else team_marks.BAD, ids, clock.iso(clock.now()))
