"""Markdown mirrors of each memory, written after commits and coalesced per store (memory-model.md §2-§3).

Nothing reads the mirrors back; they exist for people, for grep and for the project's git. They hold
no usage numbers (mirrors/mirror_text.py), so a recall changes none of them, and a file is rewritten
only when its text changes. Writes happen in a worker thread about a second after the change, so
bursts of writes cost one pass; a verb that takes a text away writes its mirrors at once and synced
(`write_now`). After the store opens and after each sleep, a pass also heals the folders from the
database (mirrors/mirror_heal.py), and `status` reports how many mirrors are missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import aiosqlite

from hippod.base import clock
from hippod.mirrors import mirror_days, mirror_files, mirror_heal, mirror_pass
from hippod.mirrors.mirror_text import render
from hippod.model.memory import Memory
from hippod.store.sqlite import sqlite_errors

log = logging.getLogger("hippod.mirrors")


def dormant_file(memory_id: str) -> str:
    """Where a dormant memory's mirror lives, relative to the store root."""
    return f"dormant/{memory_id}.md"


COALESCE_SECONDS = 1.0
# At shutdown the pending mirrors are written for at most this long; the rest are stale until the
# next open heals them. A large import just before a stop leaves ~100,000 of them (a minute or more).
CLOSE_SECONDS = 10.0
LAYOUTS = ("memory", "day")


@dataclass(frozen=True, slots=True)
class MirrorCheck:
    """A store's mirrors now: how many the database calls for are missing, and what healing has
    written and removed since the store was opened (and when it last ran)."""

    missing: int
    healed: int
    removed: int
    healed_at: str | None


class MirrorWriter:
    """Collects changed and deleted memories and writes their mirrors in one coalesced pass.

    Writers hand over the Memory they just committed (`changed`), or only its id when they
    changed it in SQL (`changed_ids`); those rows are read back at the pass, as committed then.
    Passes never overlap, so healing never sees a pass half done.

    `layout` gives the store's `mirrors.layout`, read at each pass: `memory` (a file per memory,
    memory-model.md §2) or `day` (a file per layer and day, mirrors/mirror_days.py). A change of
    layout heals the folders into the new one.
    """

    def __init__(
        self,
        root: str,
        load: Callable[[list[str]], Awaitable[list[Memory]]],
        stats: Callable[[], Awaitable[dict[str, object]]],
        reader: Callable[[], aiosqlite.Connection],
        layout: Callable[[], str] = lambda: "memory",
        *,
        enabled: bool = True,
    ) -> None:
        self.root = root
        # A store without files beside it (the team store) keeps nothing for a pass.
        self.enabled = enabled
        self._layout = layout
        self.layout: str | None = None  # as of the last pass
        self._days = mirror_days.DayMirrors(root)
        self._load = load
        self._stats = stats
        self._reader = reader
        self._pass = asyncio.Lock()
        self._heal_due = False
        self.healed = self.removed = 0
        self.healed_at: str | None = None
        self._changed: dict[str, Memory | None] = {}
        self._deleted: set[str] = set()
        # Other files under the root (dormant and conflict mirrors): relative path -> text, None = remove.
        self._files: dict[str, str | None] = {}
        self._stats_due = False
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # write now (flush_now, close)
        self._closed = False
        self._close_by: float | None = None  # time.monotonic() past which a closing pass stops
        self._refused: object = None  # the unknown layout last warned about

    @classmethod
    def without_files(cls, root: str) -> MirrorWriter:
        """A writer for a store that keeps no files beside it (the team store): every pass is empty."""

        async def nothing(ids: list[str]) -> list[Memory]:
            return []

        async def no_stats() -> dict[str, object]:
            return {}

        def no_reader() -> aiosqlite.Connection:
            raise AssertionError("a store without files has no mirrors to read rows for")

        return cls(root, nothing, no_stats, no_reader, enabled=False)

    def changed(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            self._changed[memory.id] = memory
            self._deleted.discard(memory.id)
        self._schedule()

    def changed_ids(self, ids: Iterable[str]) -> None:
        for memory_id in ids:
            self._changed[memory_id] = None
            self._deleted.discard(memory_id)
        self._schedule()

    def deleted(self, ids: Iterable[str]) -> None:
        for memory_id in ids:
            self._deleted.add(memory_id)
            self._changed.pop(memory_id, None)
        self._schedule()

    def files(self, changes: dict[str, str | None]) -> None:
        """Write (text) or remove (None) files at paths relative to the root; an empty dict still
        schedules a pass, which rewrites stats.json."""
        self._files.update(changes)
        self._stats_due = True
        self._schedule()

    def heal(self) -> None:
        """Bring the folders in line with the database at the next pass."""
        self._heal_due = True
        self._schedule()

    def _schedule(self) -> None:
        if not self.enabled:
            self._changed.clear()
            self._deleted.clear()
            self._files.clear()
            self._stats_due = self._heal_due = False
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def _pending(self) -> bool:
        return bool(self._changed or self._deleted or self._files or self._stats_due or self._heal_due)

    async def _run(self) -> None:
        # Changes that arrive during a pass are picked up by the next turn of the loop.
        while self._pending():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), COALESCE_SECONDS)
            if not self._closed:
                self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        """Write everything pending now (also called at shutdown, where healing waits for the next open)."""
        async with self._pass:
            pending: dict[str, Memory | None] = dict(self._changed)
            deleted, files = list(self._deleted), dict(self._files)
            self._changed.clear()
            self._deleted.clear()
            self._files.clear()
            stats_due, self._stats_due = self._stats_due, False
            heal, self._heal_due = self._heal_due and not self._closed, False
            heal = self._layout_now() or heal
            await self._apply(pending, deleted, files, stats_due, heal)

    async def write_now(
        self,
        deleted: Iterable[str] = (),
        changed: Iterable[str] = (),
        files: dict[str, str | None] | None = None,
    ) -> None:
        """Remove the mirrors of these deleted memories, rewrite those of these changed ones (read
        back as committed) and write or remove these other files, synced to disk, before returning.

        A verb that takes a text away (reject, forget, resolve) awaits this before it answers, so a
        daemon killed right after the reply leaves no copy of the text in the mirror folders. It
        waits for a pass under way, which may have read the rows before the change committed.
        """
        deleted, changed, files = list(deleted), list(changed), dict(files or {})
        if not self.enabled:
            return
        async with self._pass:
            # Whatever was pending for these is done here, as committed now.
            for memory_id in deleted:
                self._deleted.discard(memory_id)
            for memory_id in (*deleted, *changed):
                self._changed.pop(memory_id, None)
            for relative in files:
                self._files.pop(relative, None)
            if self._layout_now():  # the layout changed: the next pass heals the folders into it
                self._heal_due = True
                self._schedule()
            with mirror_files.durable():
                await self._apply(dict.fromkeys(changed), deleted, files, stats_due=False, heal=False)

    def _layout_now(self) -> bool:
        """Take the store's layout now; whether it changed since the last pass, which heals the
        folders into the new one (not at shutdown: the next open does)."""
        layout = self._current_layout()
        if layout == self.layout:
            return False
        moved = self.layout is not None  # not the first pass
        if moved:
            log.info("mirrors of %s: layout %s -> %s; healing", self.root, self.layout, layout)
        self.layout = layout
        self._days.forget()
        return moved and not self._closed

    async def _apply(
        self,
        pending: dict[str, Memory | None],
        deleted: list[str],
        files: dict[str, str | None],
        stats_due: bool,
        heal: bool,
    ) -> None:
        """One pass (under the pass lock): these changed memories (None: read back), deleted ones,
        other files, stats.json, and a heal, in the layout taken last."""
        try:
            if self.layout == "day":
                await self._day_pass(pending, files, stats_due or bool(pending or deleted), heal)
                return
            changed = [memory for memory in pending.values() if memory is not None]
            to_load = [memory_id for memory_id, memory in pending.items() if memory is None]
            batch = mirror_heal.BATCH
            if pending or deleted or files or stats_due:
                # A pass that only heals leaves stats.json as it is.
                stats = await self._stats()
                await self._write(changed[:batch], deleted, stats)
            left = await self._write_rest(changed[batch:], to_load)
            if left:
                log.info("%d mirrors of %s not written at shutdown; the next open heals", left, self.root)
            if files:
                await asyncio.to_thread(mirror_pass.write_files, self.root, files)
            if heal:
                healed = await mirror_heal.reconcile(self._reader(), self.root, render)
                self.healed += healed.written
                self.removed += healed.removed
                self.healed_at = clock.iso(clock.now())
        except OSError as exc:
            self._days.forget()  # what it had learnt may not have reached the files: heal next
            if exc.errno != errno.ENOSPC:
                log.exception("mirror pass failed for a store")
                return
            # A full disk is the store's condition, not a fault of the pass: one line, no stack.
            log.warning("mirror pass skipped for %s: the disk is full (%s)", self.root, exc.strerror)
        except Exception as exc:
            self._days.forget()
            if not sqlite_errors.is_corrupt(exc):
                log.exception("mirror pass failed for a store")
            else:  # the request that met it set the store aside and named it
                log.warning("mirror pass skipped for %s: its database is corrupt (%s)", self.root, exc)

    async def _day_pass(
        self, pending: dict[str, Memory | None], files: dict[str, str | None], stats_due: bool, heal: bool
    ) -> None:
        """A pass in the day layout: stats.json, the day files of changed memories and of the days that
        lost one (or, when healing, all of them), then the other files."""
        if stats_due:
            stats = await self._stats()
            await self._write([], [], stats)
        if files:
            await asyncio.to_thread(mirror_pass.write_files, self.root, files)
        if self._days.mark is None and self._closed:
            return  # never healed in this layout: the next open heals
        if heal or self._days.mark is None:
            healed = await self._days.reconcile(self._reader())
            self.healed += healed.written
            self.removed += healed.removed
            self.healed_at = clock.iso(clock.now())
        else:
            await self._days.write(self._reader(), pending)

    def _current_layout(self) -> str:
        """The store's mirror layout now; an unreadable config keeps the last one."""
        try:
            value = self._layout()
        except Exception:
            return self.layout or "memory"
        if value not in LAYOUTS:
            if value != self._refused:
                log.warning("mirrors of %s: unknown mirrors.layout %r; using %r", self.root, value, "memory")
                self._refused = value
            return "memory"
        return value

    async def _write_rest(self, changed: list[Memory], to_load: list[str]) -> int:
        """Write these mirrors a batch at a time, the rows of `to_load` read back as committed now
        (a sleep can change every memory of a large store). A closing pass stops once CLOSE_SECONDS
        have passed; returns how many mirrors it left for the next open's heal."""
        batch = mirror_heal.BATCH
        for start in range(0, len(changed), batch):
            if self._late():
                return len(changed) - start + len(to_load)
            await self._write(changed[start : start + batch], [], None)
        for start in range(0, len(to_load), batch):
            if self._late():
                return len(to_load) - start
            rows = await self._load(to_load[start : start + batch])
            await self._write(rows, [], None)
        return 0

    async def _write(
        self, memories: list[Memory], deleted: list[str], stats: dict[str, object] | None
    ) -> None:
        """Write these mirrors, remove the deleted ones' and write stats.json, in a worker thread."""
        await asyncio.to_thread(mirror_pass.write_memories, self.root, memories, deleted, stats)

    async def check(self) -> MirrorCheck:
        """Count the mirrors missing now, without waiting for a pass: a heal under way shows as
        missing files and no `healed_at` yet."""
        if self._current_layout() == "day":
            names = await mirror_days.wanted(self._reader())
        else:
            names = await mirror_heal.wanted(self._reader())
        missing = await asyncio.to_thread(mirror_heal.count_missing, self.root, names)
        return MirrorCheck(missing, self.healed, self.removed, self.healed_at)

    async def flush_now(self) -> None:
        """Write what is pending now and wait for it, instead of at the end of the coalescing window.

        The running pass is woken and awaited rather than cancelled, so no batch is dropped
        and no two passes write the same files at once.
        """
        self._wake.set()
        if self._task is not None:
            await self._task
        await self.flush()

    async def close(self, by: float | None = None) -> None:
        """Write what is pending, for at most CLOSE_SECONDS (and not past `by`, a time.monotonic():
        a stopping daemon's budget), before the store's database closes; later passes run at once."""
        self._closed = True
        self._close_by = time.monotonic() + CLOSE_SECONDS
        if by is not None:
            self._close_by = min(self._close_by, by)
        self._wake.set()
        if self._task is not None:
            _, running = await asyncio.wait({self._task}, timeout=max(0.0, self._close_by - time.monotonic()))
            if running:
                # A pass that does not stop at the time (a heal walks every mirror): cut it short.
                self._task.cancel()
                await asyncio.wait(running)
                log.info("mirror pass of %s cut short at shutdown; the next open heals", self.root)
        await self.flush()

    def _late(self) -> bool:
        """A closing pass has run out of time."""
        return self._close_by is not None and time.monotonic() > self._close_by
