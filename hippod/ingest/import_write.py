"""An import's plan stored part by part while the rest of it is planned.

The plan is made a batch of chunks at a time (ingest/planner.py), in a worker thread or, for a large
import, in a process of its own (plan_process.py); each part is handed to the event loop, where one
transaction stores it while the planner judges the next. Every part goes into the same
transaction, so an import is still the whole file or nothing (ingest.md §1), and the file's digest
is recorded in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Collection, Iterable

import aiosqlite

from hippod.base import clock
from hippod.calls.progress import Steps
from hippod.calls.request import RequestContext
from hippod.ingest.import_core import overlapping_sets, token_set
from hippod.ingest.planner import Plan
from hippod.model.digest import refused
from hippod.store.sqlite import imports as sql
from hippod.store.sqlite import memories, rejections
from hippod.store.sqlite.imports import ImportedFile
from hippod.store.stores import SqliteStore

# What a plan was checked against: the highest row number of the store it saw, and the tombstones.
Seen = tuple[int, set[str]]
# Rows a second that the write transaction stores, about (bench/RESULTS.md): what `_Pace` expects.
WRITE_RATE = 4_000


class Handoff:
    """The parts of one plan, passed in order from its planner to the event loop: a planning thread
    calls `put` and `close`, and so does the task reading a planning process's parts; the daemon
    closes it too when a planner ends without having done so."""

    def __init__(self, loop: asyncio.AbstractEventLoop, chunks: int) -> None:
        self._loop = loop
        self.chunks = chunks  # how many the plan judges
        self._queue: asyncio.Queue[Plan | None] = asyncio.Queue()
        self._error: BaseException | None = None
        # Set by the planner before its first part.
        self.seen: Seen = (0, set())
        # Rows handed over so far, and whether the plan is complete (read by the loop).
        self.rows = 0
        self.done = False
        self.finished = 0.0  # time.monotonic() when the plan was complete

    def hand_over(self, items: Iterable[Seen | Plan]) -> None:
        """Run a plan here (blocking: in a worker thread), what it was checked against first, then
        each part as it is made; closed at its end, or with its error."""
        try:
            for item in items:
                if isinstance(item, Plan):
                    self.put(item)
                else:
                    self.seen = item
        except BaseException as exc:
            self.close(exc)
            raise
        self.close()

    def put(self, part: Plan) -> None:
        """Hand over the next part (from the planner)."""
        self.rows += len(part.rows)
        self._send(part)

    def close(self, error: BaseException | None = None) -> None:
        """The plan is complete, or failed with `error`. The first call counts: the planner's, after
        its last part, or the daemon's when the planner ended without one (a planner cancelled
        once its parts are no longer wanted may still call it, and put a part, unheard)."""
        if self.done:
            return
        self._error = error
        self.finished = time.monotonic()
        self.done = True
        self._send(None)

    def _send(self, item: Plan | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def parts(self) -> AsyncIterator[Plan]:
        """The parts as they come; the planner's error, if it failed, after the last."""
        while (part := await self._queue.get()) is not None:
            yield part
        if self._error is not None:
            raise self._error


async def collect(handoff: Handoff) -> Plan:
    """The whole plan, stored nowhere (a dry run)."""
    return Plan.joined([part async for part in handoff.parts()])


async def store_parts(
    ctx: RequestContext, store: SqliteStore, handoff: Handoff, fmt: str, path: str, digest: str, steps: Steps
) -> Plan:
    """Store each part's memories as it comes, and the file's digest, in one transaction; return
    the whole plan as stored (its rows, once stored, are dropped: the reply needs the memories).

    The transaction begins once a part has a memory and the plan is near enough its end (`_Pace`):
    a file whose chunks are all stored already only records its digest. Each part gets a last look
    at what changed since the plan read the store (memories other requests stored meanwhile, whose
    near-copies are skipped, and new tombstones).
    """
    plan = Plan()
    parts = handoff.parts()
    pace = _Pace(handoff.chunks)
    ready: list[Plan] = []
    async for part in parts:
        ready.append(part)
        if pace.write_now(part) and any(p.memories for p in ready):
            break
    if not any(p.memories for p in ready):  # the whole plan, and not one memory to store
        for part in ready:
            plan.extend(part)
        _complete(plan, handoff)
        async with store.db.transaction() as conn:
            seen = ImportedFile(digest, plan.total, clock.iso(clock.now()))
            await sql.record_file(conn, ctx.tenant, fmt, path, seen)
        return plan
    async with store.db.long_transaction() as conn:
        look = await _LastLook.read(conn, ctx.tenant, handoff.seen)
        progress = _Progress(steps, handoff)
        async for part in _chain(ready, parts):
            await look.apply(part)
            await sql.insert_rows(conn, part.rows, progress.tick)
            progress.stored(len(part.rows))
            part.rows = []  # stored: the reply needs the memories alone
            plan.extend(part)
        progress.end()
        _complete(plan, handoff)
        now = clock.iso(clock.now())
        await memories.audit_many(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="import",
            targets=[memory.id for memory in plan.memories],
            metadata={"format": fmt},
        )
        await sql.record_file(conn, ctx.tenant, fmt, path, ImportedFile(digest, plan.total, now))
    return plan


def _complete(plan: Plan, handoff: Handoff) -> None:
    """Every chunk was judged, or nothing is stored (not even the file's digest, which would make
    the chunks never judged look imported)."""
    if plan.total != handoff.chunks:
        raise RuntimeError(f"an import's plan judged {plan.total} of its {handoff.chunks} chunks")


async def _chain(first: list[Plan], rest: AsyncIterator[Plan]) -> AsyncIterator[Plan]:
    for part in first:
        yield part
    async for part in rest:
        yield part


class _Pace:
    """When the write transaction should begin: once the plan's time left, at its pace so far, is no
    longer than writing all its rows will take. Begun sooner, the transaction would hold the store's
    writer (every other request's writes) waiting on the plan longer than the write itself does: a
    file of many near-copies of each other plans for minutes and stores little."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.planned = 0
        self.rows = 0
        # The pace is timed from the first part on: before it, the planner was starting.
        self.first: tuple[float, int] | None = None  # when it came, and its chunks

    def write_now(self, part: Plan) -> bool:
        """Whether to begin writing, given the part just received."""
        self.planned += part.total
        self.rows += len(part.rows)
        if self.first is None:
            self.first = (time.monotonic(), part.total)
        since, before = self.first
        paced, seconds = self.planned - before, time.monotonic() - since
        return worth_writing(self.chunks, self.planned, self.rows, paced, seconds)


def worth_writing(chunks: int, planned: int, rows: int, paced: int, seconds: float) -> bool:
    """Whether `planned` of an import's `chunks`, holding `rows` rows to store, are far enough into
    the plan to begin writing: `paced` chunks were planned in the last `seconds`."""
    if planned >= chunks:
        return True
    if paced <= 0 or seconds <= 0.0 or rows <= 0:
        return False
    left = (chunks - planned) * seconds / paced
    return left <= rows * chunks / planned / WRITE_RATE


class _LastLook:
    """What changed in the store between the plan's read and the write transaction."""

    def __init__(self, since: list[frozenset[str]], tombstones: set[str]) -> None:
        self.since = since
        self.tombstones = tombstones

    @classmethod
    async def read(cls, conn: aiosqlite.Connection, tenant: str, seen: Seen) -> _LastLook:
        top, rejected = seen
        _, since = await sql.live_texts(conn, tenant, top)
        # Tokenized once, not once a part.
        sets = await asyncio.to_thread(lambda: [token_set(text) for text in since])
        # The plan already refused what the tombstones it saw refuse; hashing every text again
        # on the event loop would hold up other requests for nothing.
        return cls(sets, await rejections.all_digests(conn, tenant) - rejected)

    async def apply(self, part: Plan) -> None:
        """Drop the part's memories that a memory stored meanwhile or a new tombstone refuses."""
        if self.since:
            part.drop(await asyncio.to_thread(_overlapping, part, self.since), as_rejected=False)
        if self.tombstones:
            part.drop(await asyncio.to_thread(_refused, part, self.tombstones), as_rejected=True)


def _overlapping(plan: Plan, since: list[frozenset[str]]) -> set[int]:
    """Positions of the planned memories that overlap a memory stored since the plan read the store."""
    return overlapping_sets([token_set(memory.content) for memory in plan.memories], since)


def _refused(plan: Plan, tombstones: Collection[str]) -> set[int]:
    """Positions of the planned memories these tombstones refuse."""
    return {i for i, memory in enumerate(plan.memories) if refused(memory.content, tombstones)}


class _Progress:
    """The "writing memories" step: shown once the plan is complete (the planner's step, "checking
    for duplicates", is the one shown until then), from the rows already stored to all the plan's
    rows."""

    def __init__(self, steps: Steps, handoff: Handoff) -> None:
        self._steps = steps
        self._handoff = handoff
        self._before = 0
        self._shown = False

    def tick(self, done: int) -> None:
        if not self._shown and self._handoff.done:
            self._steps.begin("writing memories", self._handoff.rows)
            self._shown = True
        if self._shown:
            self._steps.tick(self._before + done)

    def stored(self, rows: int) -> None:
        self._before += rows

    def end(self) -> None:
        if not self._shown:
            # The last rows went in before the plan was seen to end: the step still ends complete.
            self._steps.begin("writing memories", self._handoff.rows)
        self._steps.end()
