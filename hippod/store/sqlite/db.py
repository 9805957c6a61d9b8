"""A store's database once open: its writer and reader connections, and its transactions (prepare.py
readies the file first)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import aiosqlite

from hippod.base.errors import HippoError
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.prepare import PRAGMAS, Prepared, prepare

log = logging.getLogger("hippod.store")


# The databases whose write lock the running task holds (inside `transaction()`).
_HOLDING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("holding", default=frozenset())


class CommitPoint:
    """Set once a request's first transaction starts to commit; the server then lets it finish."""

    reached = False


COMMIT_POINT: contextvars.ContextVar[CommitPoint | None] = contextvars.ContextVar(
    "commit_point", default=None
)


class Database:
    """One writer connection (behind a lock) and one reader connection to a store's hippo.db."""

    def __init__(self, path: str, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self.path = path
        self.writer = writer
        self.reader = reader
        self._write_lock = asyncio.Lock()
        self._deferred: set[asyncio.Task[None]] = set()
        # The deferred bookkeeping writes of replies already sent, which the next request waits for.
        self._after_reply: set[asyncio.Task[None]] = set()
        # Long writes (an import, a sleep's write phase) under way or waiting for the writer.
        self._long_writes = 0
        # A connection of its own for `commits`, opened at its first use.
        self._watch: sqlite3.Connection | None = None
        self._watch_lock = threading.Lock()

    @classmethod
    async def open(cls, path: str) -> tuple[Database, Prepared]:
        """Prepare the file in a worker thread, then connect the writer and the reader."""
        prepared = await asyncio.to_thread(prepare, path)
        # The writer begins IMMEDIATE transactions implicitly at its first write, which saves
        # a round trip to its thread per transaction; the write lock makes it the only writer.
        opened: list[aiosqlite.Connection] = []
        try:
            writer = await aiosqlite.connect(path, isolation_level="IMMEDIATE")
            opened.append(writer)
            reader = await aiosqlite.connect(path, isolation_level=None)
            opened.append(reader)
            for conn in (writer, reader):
                for pragma in PRAGMAS[1:]:
                    await conn.execute(pragma)
            await reader.execute("PRAGMA query_only=ON")
        except BaseException:
            # Each connection has a thread of its own, which would keep the daemon from exiting: one
            # opened before a failure (out of files, say) is closed, not left behind.
            for conn in opened:
                with contextlib.suppress(Exception):
                    await conn.close()
            raise
        return cls(path, writer, reader), prepared

    @asynccontextmanager
    async def long_transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """transaction() for a write that holds the writer for seconds; while it is under way or
        waiting, `long_write_pending()` is true, so short bookkeeping writes can queue behind it."""
        self._long_writes += 1
        try:
            async with self.transaction() as conn:
                yield conn
        finally:
            self._long_writes -= 1

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Serialise a write: yield the writer (its first write begins the transaction), COMMIT or ROLLBACK.

        Reaching COMMIT marks the request's commit point (see CommitPoint), after which a
        Cancel no longer interrupts it. A failed COMMIT rolls back before the lock is released,
        so the next writer never joins a leftover transaction.
        """
        async with self._write_lock:
            self._check_room()
            holding = _HOLDING.set(_HOLDING.get() | {id(self)})
            try:
                try:
                    yield self.writer
                except BaseException as exc:
                    await asyncio.shield(self.writer.rollback())
                    self._raise_named(exc)
                    raise
                point = COMMIT_POINT.get()
                if point is not None:
                    point.reached = True
                try:
                    await asyncio.shield(self.writer.commit())
                except BaseException as exc:
                    await asyncio.shield(self.writer.rollback())
                    self._raise_named(exc)
                    raise
            finally:
                _HOLDING.reset(holding)

    async def commits(self) -> int:
        """A number that moves whenever a commit changes the store, by this daemon's writer or any
        other connection: SQLite's data_version as a connection of its own sees it, which never
        writes and never holds a statement open (in a read transaction left open, as the reader's
        can be while a request pages through rows, the number would not move)."""
        return await asyncio.to_thread(self._data_version)

    def _data_version(self) -> int:
        with self._watch_lock:
            if self._watch is None:
                self._watch = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            rows = self._watch.execute("PRAGMA data_version").fetchall()  # all: the statement ends
        return int(rows[0][0])

    def checkpoint_soon(self) -> None:
        """Copy the WAL into the database and truncate it, in the background: the WAL's older frames
        still hold the pages a reject or forget just cleared. Skipped quietly while a reader holds
        an older snapshot (the next checkpoint copies those pages)."""

        async def run() -> None:
            try:
                async with self._write_lock:
                    # Without waiting: the writer lock is held meanwhile, and writes come first.
                    await self.writer.execute("PRAGMA busy_timeout=0")
                    try:
                        await self.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    finally:
                        await self.writer.execute("PRAGMA busy_timeout=5000")
            except sqlite3.Error:
                log.warning("checkpointing %s failed", self.path, exc_info=True)

        task = asyncio.get_running_loop().create_task(run())
        self._deferred.add(task)
        task.add_done_callback(self._deferred.discard)

    def _check_room(self) -> None:
        """Raise `disk_full` when the store's disk has less than MIN_FREE_BYTES free.

        Checked before the write: SQLite would otherwise fail part way through appending to the WAL,
        leaving the files changed though nothing committed. The margin also leaves room for the
        WAL's checkpoint and the mirrors. Where free space cannot be told, SQLite's own error stands.
        """
        free = sqlite_errors.free_bytes(self.path)
        if free is not None and free < sqlite_errors.MIN_FREE_BYTES:
            raise sqlite_errors.disk_full(
                self.path, f"{free // 1024} KiB free, under the 1 MiB a write needs"
            )

    def _raise_named(self, exc: BaseException) -> None:
        """Raise the named HippoError for a full disk or a corrupt file (sqlite_errors); else return."""
        named = sqlite_errors.named(self.path, exc)
        if named is not None:
            raise named from None

    def long_write_pending(self) -> bool:
        """True while a long write (`long_transaction`) holds or waits for the writer."""
        return self._long_writes > 0

    def write_soon(
        self,
        write: Callable[[aiosqlite.Connection], Awaitable[None]],
        after: Callable[[], None] | None = None,
    ) -> asyncio.Task[None]:
        """Run `write` in its own transaction in the background, then `after`; close() waits for it.

        For bookkeeping a reader should not wait on, such as recall's strengthening while a long
        import holds the writer. The write lock is first come, first served, so a later write of the
        same request's session (e.g. `outcome`) still runs after it.
        """

        async def run() -> None:
            try:
                async with self.transaction() as conn:
                    await write(conn)
            except HippoError as exc:
                log.warning("a deferred write was not made: %s", exc.message)
                return
            except Exception:
                log.exception("a deferred write to %s failed", self.path)
                return
            if after is not None:
                after()

        task = asyncio.get_running_loop().create_task(run())
        self._deferred.add(task)
        task.add_done_callback(self._deferred.discard)
        return task

    async def write_unless_long(
        self,
        write: Callable[[aiosqlite.Connection], Awaitable[None]],
        after: Callable[[], None] | None = None,
    ) -> None:
        """Run `write` in its own transaction now, then `after`; while a long write holds or waits for
        the writer, queue both behind it instead (`write_soon`), so a reply never waits for an import.
        """
        if self.long_write_pending():
            self.write_soon(write, after)
            return
        async with self.transaction() as conn:
            await write(conn)
        if after is not None:
            after()

    async def write_bookkeeping(
        self,
        write: Callable[[aiosqlite.Connection], Awaitable[None]],
        after: Callable[[], None] | None = None,
        *,
        after_reply: bool = False,
    ) -> HippoError | None:
        """`write_unless_long` for the bookkeeping a read does on the side (strengthening, counts):
        on a full disk the write is skipped and its error returned, never raised, so the read answers.

        With `after_reply` the write is made once the reply has gone, and the next request on this
        store waits for it (`settled`): the reply never waits for a write that cannot change it.
        """
        try:
            if after_reply:
                self._check_room()
                task = self.write_soon(write, after)
                self._after_reply.add(task)
                task.add_done_callback(self._after_reply.discard)
            else:
                await self.write_unless_long(write, after)
        except HippoError as exc:
            if exc.code != sqlite_errors.DISK_FULL:
                raise
            log.warning("bookkeeping write skipped: %s", exc.message)
            return exc
        return None

    async def settled(self) -> None:
        """Wait for the bookkeeping that earlier replies left to write, so what a request reads
        includes it; not while a long write holds the writer (it would wait for the whole import)."""
        # Not from inside a transaction of this store: the writes waited for need its lock.
        if self._after_reply and not self.long_write_pending() and id(self) not in _HOLDING.get():
            await asyncio.gather(*list(self._after_reply), return_exceptions=True)

    async def close(self) -> None:
        """Finish deferred writes, checkpoint the WAL, optimise, and close both connections."""
        while self._deferred:
            await asyncio.gather(*self._deferred, return_exceptions=True)
        async with self._write_lock:
            try:
                await self.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                await self.writer.execute("PRAGMA optimize")
            except sqlite3.Error as exc:
                if not sqlite_errors.is_disk_full(exc):
                    raise
                # The WAL keeps what the checkpoint could not copy; the next opening replays it.
                log.warning("closing %s without a checkpoint: the disk is full (%s)", self.path, exc)
            finally:
                with self._watch_lock:
                    if self._watch is not None:
                        self._watch.close()
                        self._watch = None
                await self.reader.close()
                await self.writer.close()
