"""SQL for `mark_batches` (migration 6): the keys of the batches of marks a team server has applied, so
a batch a laptop sends again (its answer lost) is applied once."""

from __future__ import annotations

from datetime import timedelta

from hippod.base import clock
from hippod.store.postgres.pg import Conn

# How long a batch's key is kept: a laptop sends a batch again within seconds to hours.
KEPT = timedelta(days=30)


async def first_time(conn: Conn, key: str, now: str) -> bool:
    """Note a batch's key in the caller's transaction; False when it was noted before. Keys older than
    KEPT go, a few at a time."""
    cursor = await conn.execute(
        "INSERT INTO mark_batches (tenant_id, batch_key, applied_at) "
        "VALUES (current_setting('hippo.tenant'), %s, %s) ON CONFLICT DO NOTHING",
        (key, now),
    )
    if cursor.rowcount != 1:
        return False
    before = clock.iso(clock.parse_iso(now) - KEPT)
    await conn.execute(
        "DELETE FROM mark_batches WHERE ctid IN "
        "(SELECT ctid FROM mark_batches WHERE applied_at < %s LIMIT 100)",
        (before,),
    )
    return True
