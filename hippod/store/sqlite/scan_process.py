"""The later half of a large sleep's first pass, read by a process of its own (sleep.md §2).

On a large store the first pass over the snapshot (decay, flags, the tokens of every memory
numbered) is most of a daily sleep's plan, and it is pure Python: one core. So the planning process
(sleep_process.py) hands the memories after a rowid to this helper, reads those up to it itself,
and joins the two scans in rowid order, which is what one scan would have made. Both run below the
daemon's priority.

The two read transactions begin a moment apart, the helper's first, and the planner's own is the
one every later phase reads whole rows from. Between the two, a memory of the later half that
changed leaves the helper's mark behind, which the sleep's check before writing sees (it plans
again); one that went away is missing when asked for (`sleep_snapshot.Moved`), and the planner then
plans again from one snapshot; one added is left for the next sleep, as any memory added during a plan.
"""

from __future__ import annotations

import gc
import os
import pickle
import sqlite3
import subprocess
import sys
from array import array
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from hippod.base import child, priority, subprocesses
from hippod.base.errors import HippoError
from hippod.model.sleep_plan import read_pages
from hippod.model.sleep_scan import Scan, ScanSettings
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

# Memories a store needs before its first pass is read by two processes; below, the helper's start
# (about 0.2 s) and the scan's trip back would cost more than they save.
SPLIT_FROM = 200_000
READY = b"r"


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
    (`ready`), read the earlier half, then take its `half`."""

    def __init__(self, job: Job) -> None:
        self._proc = subprocess.Popen(
            child.argv(__name__),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            creationflags=subprocesses.window_flags(),
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._out: IO[bytes] = self._proc.stdout
        with self._proc.stdin as sent:
            pickle.dump(job, sent, protocol=pickle.HIGHEST_PROTOCOL)

    def ready(self) -> bool:
        """Wait until the helper's read transaction has begun; False if it ended first."""
        return self._out.read(1) == READY

    def half(self) -> Half:
        """The helper's outcome. Raises its SQLite error again, or HippoError if it failed otherwise."""
        try:
            outcome = pickle.load(self._out)
        except (EOFError, pickle.UnpicklingError) as exc:
            self._proc.wait()
            why = f"sleep's scan helper exited with {self._proc.returncode}"
            raise HippoError("sleep_failed", why) from exc
        self._proc.wait()
        if outcome[0] == "sqlite":
            raise child.sqlite_error(*outcome[1:])
        half: Half = outcome[1]
        return half

    def stop(self) -> None:
        """End the helper if it still runs (the plan failed or went another way)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._out.close()


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
    """The helper: a Job on stdin; READY on stdout once its snapshot is open, then ("half", Half) or
    ("sqlite", the error's fields)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed lands on stderr, never in the outcome
    priority.lower_process()
    job: Job = pickle.loads(sys.stdin.buffer.read())
    child.die_with(job.parent)
    gc.disable()  # as the planner: millions of short-lived objects, none in a cycle
    outcome: tuple[Any, ...]
    try:
        outcome = ("half", _read(job, out))
    except sqlite3.Error as exc:
        outcome = ("sqlite", *child.sqlite_fields(exc))
    pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
    out.flush()
    os._exit(0)
