"""The later half of a large sleep's first pass, read by a process of its own (sleep.md §2).

On a large store the first pass over the snapshot (decay, flags, the tokens of every memory
numbered) is most of a daily sleep's plan, and it is pure Python: one core. So the planning process
(sleep_process.py) hands the memories after a rowid to this helper, reads those up to it itself,
and joins the two scans in rowid order, which is what one scan would have made. Both run below the
daemon's priority.

Once its half is read, the helper stays to find every other share of the pairs of merge and dedupe
(`Helper.pairs`: pairjoin's size classes split between the two), the planner the rest.

The two read transactions begin a moment apart, the helper's first, and the planner's own is the
one every later phase reads whole rows from. Between the two, a memory of the later half that
changed leaves the helper's mark behind, which the sleep's check before writing sees (it plans
again); one that went away is missing when asked for (`sleep_snapshot.Moved`), and the planner then
plans again from one snapshot; one added is left for the next sleep, as any memory added during a plan.
This holds while a memory keeps its rowid: nothing renumbers the rows of a live store (VACUUM runs
on a restored copy only). A helper that ends without its half leaves the plan to one process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sqlite3
import struct
import subprocess
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from hippod.base import child, priority, subprocesses
from hippod.model.sleep_plan import read_pages
from hippod.model.sleep_scan import Scan, ScanSettings
from hippod.model.wordsets import TokenColumn, pairs
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

# Memories a store needs before its first pass is read by two processes; below, the helper's start
# (about 0.2 s) and the scan's trip back would cost more than they save.
SPLIT_FROM = 200_000
# Rows a join needs before the helper takes a share of it: below, sending the column costs more.
SHARED_FROM = 50_000
READY = b"r"
_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True, slots=True)
class Job:
    """What the helper reads: the store, the tenant, its rows, where its traits go, the scan's settings."""

    path: str
    tenant: str | None
    after: int  # the last rowid of the planner's half
    spill: str | None  # None: a dry run, or a planner that keeps no traits
    settings: ScanSettings
    dry_run: bool
    parent: int


@dataclass(slots=True)
class Half:
    """What the helper read: its scan, its rows' marks, and the traits it spilled."""

    scan: Scan
    marks: array[int]
    spilled: int


def two_cores() -> bool:
    """Whether this process may run on two cores at least."""
    allowed = getattr(os, "sched_getaffinity", None)
    return (len(allowed(0)) if allowed is not None else (os.cpu_count() or 1)) >= 2


class Helper:
    """The process reading the later half. Blocking: start it, wait until its snapshot is open
    (`ready`), read the earlier half, take its `half`, then join pairs with it (`pairs`)."""

    def __init__(self, job: Job) -> None:
        """Start the helper; OSError if it cannot start."""
        # Its stderr is not the planner's: where nothing ends it with its planner (not Linux), a
        # helper left running would hold the daemon's pipe open, and the daemon would wait on it.
        self._proc = subprocess.Popen(
            child.argv(__name__),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            creationflags=subprocesses.window_flags(),
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self._ask(job)

    def ready(self) -> bool:
        """Wait until the helper's read transaction has begun; False if it ended first."""
        return self._out.read(1) == READY

    def half(self) -> Half | None:
        """The helper's half; None if it ended without sending it. Raises its SQLite error again."""
        outcome = _receive(self._out)
        if outcome is None:
            return None
        if outcome[0] == "sqlite":
            raise child.sqlite_error(*outcome[1:])
        half: Half = outcome[1]
        return half

    def pairs(
        self,
        column: TokenColumn,
        rows: Iterable[int],
        threshold: float,
        *,
        strict: bool = False,
        probe: Sequence[bool] | None = None,
    ) -> list[tuple[int, int]]:
        """`wordsets.pairs`, the helper finding one share of the pairs while this process finds the
        other; a helper that is gone leaves its share to this process."""
        chosen = array("q", rows)
        if len(chosen) < SHARED_FROM:  # a small tenant's: not worth sending the column
            return pairs(column, chosen, threshold, strict=strict, probe=probe)
        flags = None if probe is None else bytes(probe)
        # The arrays go out of band (`_send`); their views are let go at once, since an array
        # exporting its buffer cannot grow, and the merge appends to the column after its join.
        arrays = [pickle.PickleBuffer(a) for a in (column.indptr, column.tokens, chosen)]
        try:
            asked = self._ask((*arrays, threshold, strict, flags))
        finally:
            for view in arrays:
                view.release()
        mine = pairs(column, chosen, threshold, strict=strict, probe=probe, part=(0, 2))
        theirs: list[tuple[int, int]] | None = _receive(self._out) if asked else None
        if theirs is None:
            theirs = pairs(column, chosen, threshold, strict=strict, probe=probe, part=(1, 2))
        return sorted(mine + theirs)

    def stop(self) -> None:
        """End the helper (the plan is made, failed or went another way)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for pipe in (self._in, self._out):
            with contextlib.suppress(OSError):
                pipe.close()

    def _ask(self, value: object) -> bool:
        try:
            _send(self._in, value)
        except OSError:  # the helper is gone (a broken pipe)
            return False
        return True


def _send(out: IO[bytes], value: object) -> None:
    """Write `value` as a pickle whose PickleBuffers go down the pipe out of band, before it: each
    written from where it lies in memory, so a column of a million memories is sent without a copy
    of its own. The pickle itself ends where its STOP opcode is; nothing else marks its length."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    out.write(_LENGTH.pack(len(buffers)))
    for buffer in buffers:
        raw = buffer.raw()
        out.write(_LENGTH.pack(raw.nbytes))
        out.write(raw)
    out.write(data)
    out.flush()


def _receive(source: IO[bytes]) -> Any:
    """The next value sent (its PickleBuffers as bytes), or None at the end of the pipe (its
    writer is gone). The pickle is read from the pipe as it is loaded, not whole first: a helper's
    half is a hundred megabytes, which would otherwise be held twice, as bytes and as objects."""
    count = _read_exactly(source, _LENGTH.size)
    if count is None:
        return None
    buffers: list[bytes] = []
    for _ in range(_LENGTH.unpack(count)[0]):
        size = _read_exactly(source, _LENGTH.size)
        buffer = None if size is None else _read_exactly(source, _LENGTH.unpack(size)[0])
        if buffer is None:
            return None
        buffers.append(buffer)
    try:
        # Reads no further than the pickle's end, so the next value stays in the pipe for the next call.
        return pickle.Unpickler(source, buffers=buffers).load()
    except (EOFError, pickle.UnpicklingError):
        return None


def _read_exactly(source: IO[bytes], size: int) -> bytes | None:
    """`size` bytes; None if the pipe ends first (a buffered read waits for all of them)."""
    data = source.read(size)
    return data if len(data) == size else None


def _share(request: tuple[Any, ...]) -> list[tuple[int, int]]:
    """The helper's share of a `Helper.pairs` request."""
    import numpy as np  # the helper's joins, as the planner's (wordsets.pairs)

    from hippod.model import pairjoin

    indptr, tokens, chosen, threshold, strict, flags = request
    sets = pairjoin.TokenSets(np.frombuffer(indptr, dtype=np.int64), np.frombuffer(tokens, dtype=np.int32))
    probe = None if flags is None else np.frombuffer(flags, dtype=np.bool_)
    rows = np.frombuffer(chosen, dtype=np.int64)
    found = pairjoin.similar_pairs(sets, rows, threshold, strict=strict, probe=probe, part=(1, 2))
    return [(int(i), int(j)) for i, j in found.tolist()]


def _read(job: Job, out: IO[bytes]) -> Half:
    with SnapshotReader(job.path, tenant=job.tenant, spill=job.spill, rows=(job.after, None)) as source:
        source.last_sleep()  # the read transaction begins with a first read
        out.write(READY)
        out.flush()
        scan = Scan(job.settings)
        read_pages(source, scan, dry_run=job.dry_run)
        source.spill.close()
        return Half(scan, source.marks, source.spill.written)


def main() -> NoReturn:
    """The helper. On stdin: a Job, then `Helper.pairs` requests until the pipe ends. On stdout:
    READY once its snapshot is open, ("half", Half) or ("sqlite", the error's fields), then its share
    of each request's pairs. Each value but READY goes as `_send` writes it."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed lands on stderr, never in the outcome
    priority.lower_process()
    asked = sys.stdin.buffer
    job: Job | None = _receive(asked)
    if job is None:
        os._exit(1)
    child.die_with(job.parent)
    gc.disable()  # as the planner: millions of short-lived objects, none in a cycle
    outcome: tuple[Any, ...]
    try:
        outcome = ("half", _read(job, out))
    except sqlite3.Error as exc:
        outcome = ("sqlite", *child.sqlite_fields(exc))
    _send(out, outcome)
    del outcome  # the planner has it now
    while (request := _receive(asked)) is not None:
        _send(out, _share(request))
    os._exit(0)
