"""Opening a store's database: checks, pragmas, migrations, the FTS index, and transactions."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiosqlite

from hippod.base.errors import HippoError
from hippod.recall.terms import TERMS_VERSION, fts_columns
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.migrations import SCHEMA_VERSION, migrate

log = logging.getLogger("hippod.store")

APPLICATION_ID = 0x48505044
PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA wal_autocheckpoint=100",
    # Deleted rows are overwritten with zeros, so a rejected or forgotten text leaves no bytes behind.
    "PRAGMA secure_delete=ON",
)
# Our tokenizer already split the text (CJK bigrams included); FTS only has to keep its tokens whole.
FTS_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
FTS_SETUP = (
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts
        USING fts5(id UNINDEXED, content, tags, tokenize="{FTS_TOKENIZER}")""",
    # How many rows hold each term, read by recall to leave very common terms out of a match.
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row')",
    # How many rows the store holds, kept by its writes: recall's IDF reads it, and count(*) would
    # walk every row (3 ms at 100k).
    "CREATE TABLE IF NOT EXISTS memories_rows (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)",
    """CREATE TRIGGER IF NOT EXISTS memories_rows_insert AFTER INSERT ON memories BEGIN
        UPDATE memories_rows SET n = n + 1;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_rows_delete AFTER DELETE ON memories BEGIN
        UPDATE memories_rows SET n = n - 1;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, id, content, tags)
            VALUES (new.rowid, new.id, new.fts_content, new.fts_tags);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.rowid;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_update
        AFTER UPDATE OF fts_content, fts_tags ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.rowid;
        INSERT INTO memories_fts (rowid, id, content, tags)
            VALUES (new.rowid, new.id, new.fts_content, new.fts_tags);
    END""",
)


# The databases whose write lock the running task holds (inside `transaction()`).
_HOLDING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("holding", default=frozenset())


@dataclass(frozen=True, slots=True)
class Prepared:
    """What opening learned about a database."""

    schema: int
    fts5: bool


def prepare(path: str) -> Prepared:
    """Create or check the database at `path`, migrate it and set up FTS (blocking; run in a thread).

    A file SQLite cannot read and a disk with no room raise the HippoError of sqlite_errors.
    """
    fresh = not os.path.exists(path)
    try:
        return _prepare(path, fresh)
    except sqlite3.Error as exc:
        named = sqlite_errors.named(path, exc)
        if named is None:
            raise
        if fresh:
            # A store that could not be made leaves no empty file to be taken for one.
            for leftover in (path, path + "-wal", path + "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
        raise named from None


def _prepare(path: str, fresh: bool) -> Prepared:
    if fresh:
        # Create the file 0600 before SQLite touches it.
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _check_identity(conn, path)
        for pragma in PRAGMAS:
            conn.execute(pragma)
        schema = migrate(conn)
        fts5 = _setup_fts(conn)
        return Prepared(schema, fts5)
    finally:
        conn.close()


def _check_identity(conn: sqlite3.Connection, path: str) -> None:
    app_id: int = conn.execute("PRAGMA application_id").fetchone()[0]
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id == 0:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables:
            raise _foreign(path)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    elif app_id != APPLICATION_ID:
        raise _foreign(path)
    if version > SCHEMA_VERSION:
        raise HippoError(
            "store_too_new",
            f"{path} has schema {version}; this hippod knows schema {SCHEMA_VERSION} at most",
            hint="upgrade hippod, then run: hippoctl daemon restart",
        )


def _foreign(path: str) -> HippoError:
    return HippoError(
        "foreign_store",
        f"{path} was not written by hippod and will not be opened",
        hint="export it from the tool that wrote it, then run: hippoctl import --json <export>",
    )


def _refresh_terms(conn: sqlite3.Connection) -> None:
    """Recompute every row's index terms when the text-to-terms mapping changed since they were made."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'terms_version'").fetchone()
    if row is not None and row[0] == str(TERMS_VERSION):
        return
    rows = conn.execute("SELECT rowid, content, tags FROM memories").fetchall()
    updates = [(*fts_columns(content, json.loads(tags)), rowid) for rowid, content, tags in rows]
    conn.executemany("UPDATE memories SET fts_content = ?, fts_tags = ? WHERE rowid = ?", updates)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('terms_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(TERMS_VERSION),),
    )


def _setup_fts(conn: sqlite3.Connection) -> bool:
    available = bool(conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0])
    conn.execute("BEGIN IMMEDIATE")
    try:
        _refresh_terms(conn)
        if available:
            for statement in FTS_SETUP:
                conn.execute(statement)
            indexed = conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
            stored = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            if indexed != stored:
                conn.execute("DELETE FROM memories_fts")
                conn.execute(
                    "INSERT INTO memories_fts (rowid, id, content, tags) "
                    "SELECT rowid, id, fts_content, fts_tags FROM memories"
                )
            counted = conn.execute("SELECT n FROM memories_rows").fetchone()
            if counted is None or counted[0] != stored:
                conn.execute("INSERT OR REPLACE INTO memories_rows (one, n) VALUES (1, ?)", (stored,))
        conn.execute(
            # Written only when it changes: opening a store on a full disk must not need a write.
            "INSERT INTO meta (key, value) VALUES ('fts5_available', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value",
            ("1" if available else "0",),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return available


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
                await self.reader.close()
                await self.writer.close()
