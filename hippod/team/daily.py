"""The daily run on a team server: each tenant's sleep, once a day whichever servers run it.

Every server of a team runs its own schedule, so two may start the same tenant's nightly sleep. A
tenant is slept by the server that takes its daily lock (a session advisory lock, let go if that
server dies); another server skips it while the lock is held, or when the tenant's last daily sleep
is younger than SLEPT_WITHIN.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from hippod import clock
from hippod.team import memories
from hippod.team.migrations import MIGRATION_LOCK
from hippod.team.pg import TeamDatabase

# The first key of a tenant's daily lock (the second is its name's hash); not the sleep lock's.
DAILY_LOCK = (MIGRATION_LOCK >> 8) & 0x7FFF_FFFF
# A daily sleep this recent counts as today's (another server's, a few minutes apart from this one).
SLEPT_WITHIN = timedelta(hours=12)
LAST_DAILY_KEY = "last_daily_sleep"


async def tenants(db: TeamDatabase) -> list[str]:
    """Every tenant of the team's database that has had a key, and `default`."""
    rows = await db.reader.fetch_untenanted("SELECT hippo_tenants()", ())
    return [str(r[0]) for r in rows]


@asynccontextmanager
async def claimed(db: TeamDatabase, tenant: str, now: datetime) -> AsyncIterator[str | None]:
    """Hold the tenant's daily lock for the block; gives None when this server is to sleep it, else
    why not."""
    async with db.pool.connection() as conn:  # autocommit: the lock is the session's
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (DAILY_LOCK, tenant))
        row = await cursor.fetchone()
        if row is None or not row[0]:
            yield "another server is sleeping it"
            return
        try:
            async with db.tenant(tenant) as tx:
                last = await memories.get_meta(tx, LAST_DAILY_KEY)
            if last is not None and now - clock.parse_iso(last) < SLEPT_WITHIN:
                yield f"slept at {last}"
                return
            yield None
            async with db.tenant(tenant) as tx:
                await memories.set_meta(tx, LAST_DAILY_KEY, clock.iso(now))
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (DAILY_LOCK, tenant))
