"""The team store's connections: a psycopg pool, and every transaction run as one tenant.

Each transaction begins by taking the application role and naming its tenant, both with
`set_config(..., true)`, which lasts to the end of the transaction alone. So nothing outlives it
on a pooled connection, and a transaction-mode pooler (PgBouncer) in front of the database works.

Round trips are what a request costs here, so the connections are in autocommit mode and a
transaction is begun by hand: BEGIN and the settings go in one round trip, and a read through the
reader sends BEGIN, the settings, its statement and COMMIT in one (client-side binding, psycopg's
ClientCursor, which lets several statements share one message).

`TeamDatabase` is a `StoreDatabase` (store/backend.py): handlers use it as they use a SQLite
store's, and it takes the tenant from the request being served (hippod/base/tenancy.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from hippoctl.protocol.errors import COMMIT_UNKNOWN, TEAM_UNREACHABLE
from hippod.base.errors import HippoError
from hippod.base.tenancy import REQUEST_TENANT
from hippod.store.postgres.migrations import APP_ROLE, migrate

log = logging.getLogger("hippod.team")

T = TypeVar("T")
Conn = AsyncConnection[tuple[object, ...]]
Cursor = psycopg.AsyncClientCursor[tuple[object, ...]]

# A write that lost a deadlock or a serialization check is run again from the start, this many times.
WRITE_ATTEMPTS = 5
# Seconds to wait for the server when connecting (else an unreachable host waits on TCP).
CONNECT_TIMEOUT = 10
# Seconds a starting server waits for its pool's first connections.
OPEN_TIMEOUT = 30.0
_RETRYABLE = (errors.DeadlockDetected, errors.SerializationFailure)
# A transaction's start: its role and tenant, each for the transaction alone.
_SETTINGS = "SELECT set_config('role', %s, true), set_config('hippo.tenant', %s, true)"
_BEGIN = f"BEGIN; {_SETTINGS}"
# A read whose statements must all see one snapshot (a recall's statistics and its candidates).
_BEGIN_SNAPSHOT = f"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {_SETTINGS}"


class TeamDatabase:
    """A pool of connections to the team's database, opened after migrating it."""

    def __init__(self, pool: AsyncConnectionPool[Conn], role: str, dsn: str) -> None:
        self.pool = pool
        # For a connection of its own outside the pool (a sleep's planning thread).
        self.conninfo = dsn
        self.role = role
        self.path = describe(dsn)
        self.reader = TeamReader(self)
        # Bookkeeping writes made after their reply (recall's strengthening), which the next request
        # of the same server waits for.
        self._after_reply: set[asyncio.Task[None]] = set()
        self._deferred: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 10, role: str = APP_ROLE, timeout: float = 30.0
    ) -> TeamDatabase:
        """Migrate the database, then open a pool of `min_size` to `max_size` connections, from which a
        request waits `timeout` seconds at most for one."""
        async with await psycopg.AsyncConnection.connect(dsn, connect_timeout=CONNECT_TIMEOUT) as conn:
            await migrate(conn, role)
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            open=False,
            timeout=timeout,
            # Transactions are begun by hand (see `_begun`), so that beginning one costs no round
            # trip of its own.
            kwargs={"connect_timeout": CONNECT_TIMEOUT, "autocommit": True},
        )
        await pool.open(wait=True, timeout=max(timeout, OPEN_TIMEOUT))
        return cls(pool, role, dsn)

    async def close(self) -> None:
        while self._deferred:
            await asyncio.gather(*self._deferred, return_exceptions=True)
        await self.pool.close()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Conn]:
        """A pooled connection; HippoError `team_unreachable` when none comes within the pool's timeout
        (the database is down or refuses connections)."""
        async with contextlib.AsyncExitStack() as stack:
            try:
                conn = await stack.enter_async_context(self.pool.connection())
            except PoolTimeout:
                raise HippoError(
                    TEAM_UNREACHABLE, f"the team database {self.path} gives no connection now; try again"
                ) from None
            yield conn

    @asynccontextmanager
    async def _begun(self, statements: str, params: Sequence[Any]) -> AsyncIterator[tuple[Conn, Cursor]]:
        """A pooled connection on which `statements` (which begin a transaction) have run, in one round
        trip, with their results in the cursor. A connection the server dropped (a restart, a
        failover) is found out here and another taken: nothing was done on it. A statement that
        fails rolls the transaction back."""
        for _ in range(self.pool.max_size + 1):
            async with self._connection() as conn:
                cursor = psycopg.AsyncClientCursor(conn)
                try:
                    await cursor.execute(statements, params)
                except psycopg.OperationalError:
                    if not conn.broken:
                        await _rollback(conn)
                        raise
                    continue  # the pool drops a broken connection as it comes back
                except BaseException:
                    await _rollback(conn)
                    raise
                yield conn, cursor
                return
        raise HippoError(TEAM_UNREACHABLE, f"no connection to the team database {self.path} answers")

    @asynccontextmanager
    async def tenant(self, tenant: str, *, read_only: bool = False) -> AsyncIterator[Conn]:
        """One transaction seeing only `tenant`'s rows: committed when the block ends, rolled back
        when it raises. Its connection lost on the way is HippoError `team_unreachable` (the database
        rolled the transaction back), or `commit_unknown` when it was lost while COMMIT was in flight
        (unless `read_only`: the caller only reads)."""
        async with self._begun(_BEGIN, (self.role, tenant)) as (conn, _):
            async with self._kept(conn):
                yield conn
            await self._commit(conn, wrote=not read_only)

    @asynccontextmanager
    async def _kept(self, conn: Conn) -> AsyncIterator[None]:
        """A transaction's work on `conn`, rolled back when it raises; a connection lost meanwhile is
        named (`team_unreachable`) instead of failing the request as a bug."""
        try:
            yield
        except BaseException as exc:
            await _rollback(conn)
            if isinstance(exc, psycopg.Error) and conn.broken:
                raise HippoError(
                    TEAM_UNREACHABLE,
                    f"the connection to the team database {self.path} was lost: {_reason(exc)}; "
                    "nothing was written, try again",
                ) from None
            raise

    async def _commit(self, conn: Conn, *, wrote: bool = True) -> None:
        """COMMIT; a write whose connection was lost before its answer came has an unknown outcome,
        said as such (a read has its rows already: nothing is lost with its end)."""
        try:
            await conn.execute("COMMIT")
        except psycopg.Error as exc:
            if not conn.broken:
                raise
            if not wrote:
                return
            raise HippoError(
                COMMIT_UNKNOWN,
                f"the connection to the team database {self.path} was lost while committing "
                f"({_reason(exc)}): the write may or may not be stored",
                hint="send it again with the same Idempotency-Key, which stores it once either way",
            ) from None

    @asynccontextmanager
    async def snapshot(
        self, tenant: str, query: str, params: Sequence[Any]
    ) -> AsyncIterator[tuple[Conn, list[tuple[Any, ...]]]]:
        """A read-only transaction of `tenant` in which every statement sees the same snapshot
        (REPEATABLE READ), begun with `query` in the same round trip; yields the connection and
        `query`'s rows. It ends with the block."""
        statements = f"{_BEGIN_SNAPSHOT}; {query}"
        async with self._begun(statements, (self.role, tenant, *params)) as (conn, cursor):
            found = await _third_result(cursor)
            async with self._kept(conn):
                yield conn, found
            await self._commit(conn, wrote=False)

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

    # --- the StoreDatabase interface (store/backend.py), as the request's tenant -------------------

    def transaction(self) -> AbstractAsyncContextManager[Conn]:
        """One transaction of the tenant being served."""
        return self.tenant(current_tenant())

    def long_transaction(self) -> AbstractAsyncContextManager[Conn]:
        # Writers do not queue behind one another here: a long write is an ordinary transaction.
        return self.transaction()

    async def write_bookkeeping(
        self,
        write: Callable[[Conn], Awaitable[None]],
        after: Callable[[], None] | None = None,
        *,
        after_reply: bool = False,
    ) -> HippoError | None:
        """A read's bookkeeping write, in its own transaction (run again if it loses a deadlock); with
        `after_reply`, made once the reply has gone (the task keeps the request's tenant), and waited
        for by the next request."""

        if not after_reply:
            await self.write(current_tenant(), write)
            if after is not None:
                after()
            return None
        task = self.write_soon(write, after)
        self._after_reply.add(task)
        task.add_done_callback(self._after_reply.discard)
        return None

    def write_soon(
        self, write: Callable[[Conn], Awaitable[None]], after: Callable[[], None] | None = None
    ) -> asyncio.Task[None]:
        """Run `write` in its own transaction in the background (as the request's tenant, which the
        task inherits), then `after`; close() waits for it."""

        async def run() -> None:
            try:
                await self.write(current_tenant(), write)
            except Exception:
                log.exception("a deferred write to %s failed", self.path)
                return
            if after is not None:
                after()

        task = asyncio.get_running_loop().create_task(run())
        self._deferred.add(task)
        task.add_done_callback(self._deferred.discard)
        return task

    async def settled(self) -> None:
        if self._after_reply:
            await asyncio.gather(*list(self._after_reply), return_exceptions=True)

    def checkpoint_soon(self) -> None:
        """Nothing to do: PostgreSQL's own VACUUM reclaims what removals leave."""


def current_tenant() -> str:
    """The tenant of the request being served; an error when none is (a bug, never a default)."""
    tenant = REQUEST_TENANT.get()
    if not tenant:
        raise HippoError("internal", "the team store was used outside a request's tenant")
    return tenant


class TeamReader:
    """`TeamDatabase.reader`: the rows' read functions take it in place of a connection, and run
    their statement in a short transaction of the tenant being served (store/postgres/memories.py `_rows`)."""

    def __init__(self, db: TeamDatabase) -> None:
        self.db = db

    async def fetch(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of one statement, in a transaction of the tenant being served: one round trip."""
        statements = f"{_BEGIN}; {query}; COMMIT"
        async with self.db._begun(statements, (self.db.role, current_tenant(), *params)) as (_, cursor):
            return await _third_result(cursor)

    async def fetch_untenanted(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """A statement in a transaction that names no tenant: it sees no tenant's rows, so only a
        function made to cross tenants (an API key by its id) finds anything."""
        statements = f"BEGIN; SELECT set_config('role', %s, true); {query}; COMMIT"
        async with self.db._begun(statements, (self.db.role, *params)) as (_, cursor):
            return await _third_result(cursor)


async def _third_result(cursor: Cursor) -> list[tuple[Any, ...]]:
    """The rows of the statement after BEGIN and the settings."""
    cursor.nextset()
    cursor.nextset()
    return list(await cursor.fetchall())


async def _rollback(conn: Conn) -> None:
    """End a failed transaction, unless its connection is gone (the server ended it then)."""
    if not conn.broken:
        with contextlib.suppress(psycopg.Error):
            await conn.execute("ROLLBACK")


def _reason(exc: BaseException) -> str:
    """The first line of a database error, for a one-line message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def describe(dsn: str) -> str:
    """The database a DSN names, without its password, for messages: postgresql://host:port/name."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(dsn)
    host = parts.get("host") or "localhost"
    port = parts.get("port") or 5432
    return f"postgresql://{host}:{port}/{parts.get('dbname') or ''}"


# What a read function reads through: a connection in a transaction, or the database's reader.
Source = Conn | TeamReader


def reading(conn: Source) -> AbstractAsyncContextManager[Conn]:
    """One transaction for several reads: the reader's own, or the one `conn` is in already."""
    if isinstance(conn, TeamReader):
        return conn.db.tenant(current_tenant(), read_only=True)
    return nullcontext(conn)


async def fetch(conn: Source, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of one statement, through a connection or the database's reader."""
    if isinstance(conn, TeamReader):
        return await conn.fetch(query, params)
    cursor = await conn.execute(query, params)
    return list(await cursor.fetchall())
