"""A sleep's plan, computed in a process of its own (sleep.md §2).

Planning a large store is seconds of pure Python and scipy that hold the interpreter's lock. In a
thread of the daemon it slowed every request answered meanwhile, the per-prompt hook included,
several times over. So the daemon starts this module's `main` in a child process, hands it the store's
path and the plan's settings on stdin, and reads the plan back on stdout; the child runs below the
daemon's priority (priority.py). The child only reads: it opens its own read-only snapshot of the
store, as the planning thread did, and every write stays in the daemon's one transaction.

Both sides speak pickle: the plan is the daemon's own data (records and dataclasses), going from
one of its processes to another through a pipe nobody else holds.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import pickle
import sqlite3
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from hippod.base import child, priority, subprocesses
from hippod.base.errors import HippoError
from hippod.model.sleep_plan import Plan, Settings, plan, read_pages, scan_settings
from hippod.model.sleep_scan import Scan
from hippod.store.sleep_rows import Planned
from hippod.store.sqlite import scan_process, sleep_traits
from hippod.store.sqlite.sleep_snapshot import Moved, SnapshotReader

log = logging.getLogger("hippod.sleep")

# A first sleep of a million memories plans in minutes; nothing sensible takes an hour.
TIMEOUT = 3600.0
FAILED = "sleep_failed"


def plan_snapshot(
    path: str, settings: Settings, new_id: Callable[[], str], spill: str | None = None, *, split: bool = True
) -> Planned:
    """Blocking: reads a snapshot of the store at `path` and computes its plan; the traits it works
    out go to the file `spill`, if given (the plan's `traits_file` names it when it holds any).

    With `split`, a large store's first pass is read by two processes (scan_process.py) on a
    machine with two cores or more.
    """
    if split and scan_process.two_cores():
        planned = _split_plan(path, settings, new_id, spill)
        if planned is not None:
            return planned
    with SnapshotReader(path, tenant=settings.tenant, spill=spill) as source:
        return _finish(source, plan(source, settings, new_id))


def _finish(source: SnapshotReader, result: Plan) -> Planned:
    statuses = {c.id: c.status for c in source.conflicts()}
    source.spill.close()
    result.traits_file = source.spill.path if source.spill.written else None
    return result, source.marks, statuses


def _split_plan(
    path: str, settings: Settings, new_id: Callable[[], str], spill: str | None
) -> Planned | None:
    """The plan with the later half of its first pass read by a helper process; None when the store
    is too small to split, the helper ended before its snapshot began, or a memory went away between
    the two snapshots (the caller then plans from one)."""
    with SnapshotReader(path, tenant=settings.tenant) as first:
        after = first.halfway(scan_process.SPLIT_FROM)
        if after is None:
            return None
        scanning = scan_settings(first, settings)
    later = None if spill is None else f"{spill}-later"
    job = scan_process.Job(path, settings.tenant, after, later, scanning, settings.dry_run, os.getpid())
    try:
        helper = scan_process.Helper(job)
    except OSError as exc:
        log.warning("sleep of %s: its scan helper did not start (%s); planning in one process", path, exc)
        return None
    try:
        if not helper.ready():
            return None
        with SnapshotReader(path, tenant=settings.tenant, spill=spill, rows=(0, after)) as source:
            scan = Scan(scanning)
            read_pages(source, scan, dry_run=settings.dry_run)
            half = helper.half()
            if half is None:
                log.warning("sleep of %s: its scan helper ended early; planning in one process", path)
                return None
            scan.extend(half.scan)
            source.marks.extend(half.marks)
            source.spill.absorb(later, half.spilled)
            del half  # its scan is in `scan` now: not held twice through the joins
            try:
                return _finish(source, plan(source, settings, new_id, scanned=scan, join=helper.pairs))
            except Moved:
                log.info("sleep of %s: a memory went away between the two snapshots; planning again", path)
                return None
    finally:
        helper.stop()
        sleep_traits.discard(later)


async def plan_in_child(
    path: str, settings: Settings, new_id: Callable[[], str], spill: str | None = None
) -> Planned:
    """What `plan_snapshot(path, settings, new_id, spill)` returns, computed by a child process.

    `new_id` goes by reference (pickle): a function at the top level of a module. Cancelling the
    caller kills the child. A SQLite error of the child's is raised again here; any other failure
    raises HippoError(sleep_failed) naming it in one line.
    """
    sent = pickle.dumps((path, settings, new_id, spill, os.getpid()), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        done = await subprocesses.run(child.argv(__name__), timeout=TIMEOUT, stdin=sent)
    except TimeoutError:
        raise HippoError(FAILED, f"sleep could not plan {path}: its planner ran past {TIMEOUT:g} s") from None
    if done.returncode != 0 or not done.out:
        why = done.err.decode("utf-8", "replace").strip()
        log.error("sleep's planner for %s exited with %d:\n%s", path, done.returncode, why)
        last = why.splitlines()[-1] if why else "no message"
        message = f"sleep could not plan {path}: its planner exited with {done.returncode} ({last})"
        raise HippoError(FAILED, message)
    # Reading a large plan back takes a while: not on the loop, and a page at a time.
    outcome = await asyncio.to_thread(child.unpickle, done.out)
    if outcome[0] == "sqlite":
        raise child.sqlite_error(*outcome[1:])
    planned: Planned
    _, planned, peak_mb = outcome
    # The plan's memory is the child's now, not the daemon's: the log keeps its peak in sight.
    log.info("sleep's planner for %s: %d bytes of plan, peak %.0f MB", path, len(done.out), peak_mb)
    return planned


def main() -> NoReturn:
    """The child: read (path, settings, new_id, spill path, daemon pid) on stdin, write the outcome on stdout:
    ("plan", the plan, its peak MB) or ("sqlite", the error's class name, its SQLite name and code,
    message)."""
    # The plan goes down a copy of stdout; anything else printed lands on stderr, never in it.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    priority.lower_process()
    path, settings, new_id, spill, parent = pickle.loads(sys.stdin.buffer.read())
    child.die_with(parent)
    # A plan makes millions of short-lived objects (a page of rows at a time), freed by their counts:
    # the cyclic collector's passes over them cost time, and the peak is the same without them. The
    # process ends once its plan is written.
    gc.disable()
    outcome: tuple[Any, ...]
    try:
        outcome = ("plan", plan_snapshot(path, settings, new_id, spill), child.peak_mb())
    except sqlite3.Error as exc:
        outcome = ("sqlite", *child.sqlite_fields(exc))
    pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
    out.flush()
    # Tearing the plan's objects down would take the daemon's wait for the exit with it.
    os._exit(0)
