"""The daily run on a team server: each tenant's sleep, once a day whichever servers run it.

Every server of a team runs its own schedule, so two may start the same tenant's nightly sleep. A
server claims a tenant in one short transaction, behind the tenant's daily lock (held for that
transaction alone, so a transaction-mode pooler is no trouble): it writes the claim's time in the
tenant's meta, unless a claim younger than SLEPT_WITHIN is there, and then the tenant is skipped. A
sleep that fails gives its claim back, so the next run (of this server or another) tries again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from hippod.base import clock
from hippod.store.postgres import memories
from hippod.store.postgres.migrations import MIGRATION_LOCK
from hippod.store.postgres.pg import Conn, TeamDatabase

# The first key of a tenant's daily lock (the second is its name's hash); not the sleep lock's.
DAILY_LOCK = (MIGRATION_LOCK >> 8) & 0x7FFF_FFFF
# A claim this recent counts as today's (another server's, a few minutes apart from this one).
SLEPT_WITHIN = timedelta(hours=12)
LAST_DAILY_KEY = "last_daily_sleep"


async def tenants(db: TeamDatabase) -> list[str]:
    """Every tenant of the team's database that has had a key, and `default`."""
    rows = await db.reader.fetch_untenanted("SELECT hippo_tenants()", ())
    return [str(r[0]) for r in rows]


@asynccontextmanager
async def claimed(db: TeamDatabase, tenant: str, now: datetime) -> AsyncIterator[str | None]:
    """Claim the tenant's daily sleep for the block; gives None when this server is to sleep it,
    else why not. When the block raises, the claim is given back."""

    async def claim(conn: Conn) -> str | None:
        await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (DAILY_LOCK, tenant))
        last = await memories.get_meta(conn, LAST_DAILY_KEY)
        if last is not None and now - clock.parse_iso(last) < SLEPT_WITHIN:
            return f"slept at {last}"
        await memories.set_meta(conn, LAST_DAILY_KEY, clock.iso(now))
        return None

    async def give_back(conn: Conn) -> None:
        # An earlier claim is older than SLEPT_WITHIN (else this one was not made): it counts for nothing.
        await conn.execute("DELETE FROM meta WHERE key = %s", (LAST_DAILY_KEY,))

    skipped = await db.write(tenant, claim)
    if skipped is not None:
        yield skipped
        return
    try:
        yield None
    except BaseException:
        await db.write(tenant, give_back)
        raise
