"""The team store's connections: a psycopg pool, and every transaction run as one tenant.

Each transaction begins by taking the application role and naming its tenant, both with
`set_config(..., true)`, which lasts to the end of the transaction alone. So nothing outlives it
on a pooled connection, and a transaction-mode pooler (PgBouncer) in front of the database works.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg_pool import AsyncConnectionPool

from hippod.team.migrations import APP_ROLE, migrate

T = TypeVar("T")
Conn = AsyncConnection[tuple[object, ...]]

# A write that lost a deadlock or a serialization check is run again from the start, this many times.
WRITE_ATTEMPTS = 5
_RETRYABLE = (errors.DeadlockDetected, errors.SerializationFailure)


class TeamDatabase:
    """A pool of connections to the team's database, opened after migrating it."""

    def __init__(self, pool: AsyncConnectionPool[Conn], role: str) -> None:
        self.pool = pool
        self.role = role

    @classmethod
    async def open(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 10, role: str = APP_ROLE, timeout: float = 30.0
    ) -> TeamDatabase:
        """Migrate the database, then open a pool of `min_size` to `max_size` connections."""
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            await migrate(conn, role)
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False, timeout=timeout
        )
        await pool.open(wait=True, timeout=timeout)
        return cls(pool, role)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def tenant(self, tenant: str) -> AsyncIterator[Conn]:
        """One transaction seeing only `tenant`'s rows: committed when the block ends, rolled back
        when it raises."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "SELECT set_config('role', %s, true), set_config('hippo.tenant', %s, true)",
                (self.role, tenant),
            )
            yield conn

    async def write(self, tenant: str, work: Callable[[Conn], Awaitable[T]]) -> T:
        """Run `work` in one transaction of `tenant`, again from the start when it loses a deadlock
        or a serialization check to another writer (at most WRITE_ATTEMPTS times)."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                async with self.tenant(tenant) as conn:
                    return await work(conn)
            except _RETRYABLE:
                if attempt == WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")
