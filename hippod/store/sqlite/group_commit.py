"""Group commit: the small writes of concurrent requests to one store, made in one transaction.

Each write through the store's writer connection costs a round trip to its thread per statement
and one commit (WAL frames, FTS segment, now and then a checkpoint). When several clients write at
once, the requests that arrive while a batch is being written wait for the next one, and that
batch is written by one set of statements and one COMMIT. Each request's own rows are all in the
one transaction that holds them, and its reply is sent only after that transaction committed.

A batch that fails as a whole (a row the database refuses, a full disk) is written again one item
per transaction, so one request's failure is its own and the others still land or fail for
their own reasons.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import aiosqlite

from hippod.store.sqlite.db import COMMIT_POINT, CommitPoint, Database

if TYPE_CHECKING:
    from hippod.store.backend import StoreDatabase

Item = TypeVar("Item")
Result = TypeVar("Result")

# A bound on one transaction's size, so the first request of a burst is not held behind hundreds.
MAX_BATCH = 64


@dataclass(eq=False)
class _Waiting(Generic[Item, Result]):
    """One request's item, the future its request awaits, and the request's commit point."""

    item: Item
    done: asyncio.Future[Result]
    point: CommitPoint | None


class GroupCommit(Generic[Item, Result]):
    """Queue of one kind of write to one store, drained a batch per transaction by one task.

    `write(conn, items)` makes the rows of every item inside the transaction it is given and
    returns one result per item, in order.
    """

    def __init__(
        self, db: Database, write: Callable[[aiosqlite.Connection, list[Item]], Awaitable[list[Result]]]
    ) -> None:
        self._db = db
        self._write = write
        self._queue: list[_Waiting[Item, Result]] = []
        self._task: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        """Write `item` with whatever else is waiting; its result once the transaction committed.

        Cancelled while still queued, nothing of it is written. Once its batch is taken, the
        request has passed its commit point (the server no longer cancels it) and the write lands.
        """
        loop = asyncio.get_running_loop()
        waiting: _Waiting[Item, Result] = _Waiting(item, loop.create_future(), COMMIT_POINT.get())
        self._queue.append(waiting)
        if self._task is None or self._task.done():
            # A context of its own: the transaction must not mark the first requester's commit
            # point (each item's is marked when its batch is taken) or see its held locks.
            self._task = loop.create_task(self._drain(), context=contextvars.Context())
        try:
            return await asyncio.shield(waiting.done)
        except asyncio.CancelledError:
            if waiting in self._queue:
                self._queue.remove(waiting)
            # Nobody reads its outcome now; taking it keeps asyncio from logging it as lost.
            waiting.done.add_done_callback(_consume)
            raise

    async def close(self) -> None:
        """Wait for the batches under way (before the store's database closes)."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            for waiting in batch:
                if waiting.point is not None:
                    waiting.point.reached = True
            try:
                await self._batch(batch)
            except asyncio.CancelledError:
                for waiting in [*batch, *self._queue]:
                    if not waiting.done.done():
                        waiting.done.cancel()
                self._queue.clear()
                raise

    async def _batch(self, batch: list[_Waiting[Item, Result]]) -> None:
        try:
            results = await self._transaction([waiting.item for waiting in batch])
        except Exception as exc:
            if len(batch) == 1:
                _fail(batch[0], exc)
                return
            # Nothing of the batch was committed: each item again, alone, so a failure is only its own.
            for waiting in batch:
                try:
                    [result] = await self._transaction([waiting.item])
                except Exception as alone:
                    _fail(waiting, alone)
                else:
                    _settle(waiting, result)
            return
        for waiting, result in zip(batch, results, strict=True):
            _settle(waiting, result)

    async def _transaction(self, items: list[Item]) -> list[Result]:
        async with self._db.transaction() as conn:
            return await self._write(conn, items)


def _settle(waiting: _Waiting[Item, Result], result: Result) -> None:
    """Hand a request its result, unless it was cancelled meanwhile."""
    if not waiting.done.done():
        waiting.done.set_result(result)


def _fail(waiting: _Waiting[Item, Result], exception: Exception) -> None:
    """Hand a request its error, unless it was cancelled meanwhile."""
    if not waiting.done.done():
        waiting.done.set_exception(exception)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class DirectCommit(Generic[Item, Result]):
    """GroupCommit's interface, one item per transaction in the requester's own task: for the team
    store, where each transaction belongs to the tenant of the request that makes it."""

    def __init__(
        self, db: StoreDatabase, write: Callable[[Any, list[Item]], Awaitable[list[Result]]]
    ) -> None:
        self._db = db
        self._write = write

    async def submit(self, item: Item) -> Result:
        async with self._db.transaction() as conn:
            [result] = await self._write(conn, [item])
        return result

    async def close(self) -> None:
        """Nothing is queued: each write ended with its request."""
