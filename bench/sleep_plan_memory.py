"""Where a sleep's planning process holds its memory: the plan of one store computed in this process,
as the daemon's planner computes it (`sleep_process.plan_snapshot`, with its helper on two cores),
with this process's resident memory and peak at each phase's start and end.

A measuring tool, not a test: it prints a table and asserts nothing about size or time. It only
reads the store (a read-only snapshot, as the planner does) and writes nothing, so one store built
by `import_scale.py build` serves any number of runs and code versions. The plan's digest (its
merges, duplicates, junk, conflicts and strength caches) tells two versions' plans apart: equal
digests are the same plan. A merge's new id comes from a counter, so the digest does not depend on
random ids.

Usage: python bench/sleep_plan_memory.py --db <sandbox>/home/hippo.db [--now 2026-12-07T12:00:00Z] [--one]
--one plans in one process, without the helper.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import os
import time
from collections.abc import Callable
from typing import Any

from harness import proc_status_kb

from hippod.base.clock import parse_iso
from hippod.model import sleep_phases, sleep_plan
from hippod.model.sleep_plan import Plan, Settings
from hippod.store.sqlite import scan_process, sleep_process

T0 = time.perf_counter()
ROWS: list[tuple[float, int, int, str]] = []
HELPER_PEAK_KB = [0]


def _mark(what: str) -> None:
    pid = os.getpid()
    ROWS.append((time.perf_counter() - T0, proc_status_kb(pid, "VmRSS"), proc_status_kb(pid, "VmHWM"), what))


def _timed(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        _mark(f"{name} begins")
        result = call(*args, **kwargs)
        _mark(f"{name} ends")
        return result

    return timed


def _instrument() -> None:
    """Marks around the first pass, the helper's half, each phase and each shared join; the helper's
    own peak read just before it is stopped."""
    for name in ("replay", "merges", "duplicates", "junk", "conflicts"):
        setattr(sleep_phases, name, _timed(name, getattr(sleep_phases, name)))
    # plan() and read_pages are called through the names sleep_process imported.
    setattr(sleep_process, "plan", _timed("plan", sleep_plan.plan))  # noqa: B010
    setattr(sleep_process, "read_pages", _timed("first pass (this half)", sleep_plan.read_pages))  # noqa: B010
    scan_process.Helper.half = _timed("the helper's half", scan_process.Helper.half)  # type: ignore[method-assign]
    join = scan_process.Helper.pairs

    def pairs(self: scan_process.Helper, *args: Any, **kwargs: Any) -> list[tuple[int, int]]:
        _mark(f"join at {args[2]} begins")
        found = join(self, *args, **kwargs)
        _mark(f"join at {args[2]} ends: {len(found):,} pairs")
        return found

    scan_process.Helper.pairs = pairs  # type: ignore[method-assign]
    stop = scan_process.Helper.stop

    def stopped(self: scan_process.Helper) -> None:
        pid = self._proc.pid
        if self._proc.poll() is None:
            HELPER_PEAK_KB[0] = proc_status_kb(pid, "VmHWM")
        stop(self)

    scan_process.Helper.stop = stopped  # type: ignore[method-assign]


def digest(plan: Plan) -> str:
    """What the plan decides and writes, hashed: equal for the same plan. A merge's members by what
    the write sets on them; rows quoted whole (duplicates, shared) by the fields a sleep changes."""
    conflicts = plan.conflicts
    decided = (
        sorted(
            (
                m.semantic.content,
                tuple((d.id, d.half_life_days, d.strength, d.merged_into) for d in m.members),
            )
            for m in plan.merges
        ),
        sorted((d.deleted.id, d.kept.id, d.kind, d.overlap) for d in plan.duplicates),
        sorted(plan.refreshed),
        [(j.id, j.reason) for j in plan.junk_removed],
        [(j.id, j.reason) for j in plan.junk_warnings],
        sorted((d.a, d.b) for d in conflicts.insert),
        [(i, d.a, d.b) for i, d in (*conflicts.reopen, *conflicts.refresh)],
        conflicts.auto_resolve,
        sorted(conflicts.conflicts_with.items()),
        [m.id for m in plan.replayed],
        [m.id for m, _ in plan.faded.dormant],
        [(m.id, m.strength, m.half_life_days, m.merged_into, m.conflicts_with) for m in plan.live.share],
        (plan.live.count, plan.live.active),
    )
    return hashlib.sha256(repr(decided).encode()).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a store's hippo.db (only read)")
    parser.add_argument("--now", default="2026-12-07T12:00:00.000Z", help="the sleep's time")
    parser.add_argument("--one", action="store_true", help="plan in one process, without the helper")
    args = parser.parse_args()
    _instrument()
    counter = itertools.count()
    gc.disable()  # as the planner runs (sleep_process.main)
    planned = sleep_process.plan_snapshot(
        args.db,
        Settings(now=parse_iso(args.now)),
        lambda: f"sem_{next(counter):012x}",
        None,
        split=not args.one,
    )
    _mark("plan returned")
    plan = planned[0]
    print(f"{'seconds':>8}  {'RSS MB':>7}  {'peak MB':>7}  step")
    for at, rss, peak, what in ROWS:
        print(f"{at:>8.1f}  {rss / 1024:>7.0f}  {peak / 1024:>7.0f}  {what}")
    members = sum(len(m.members) for m in plan.merges)
    print(
        f"\nmerges {len(plan.merges):,} of {members:,} memories, duplicates {len(plan.duplicates):,}, "
        f"junk {len(plan.junk_removed):,}, conflicts {plan.conflicts.open:,}, "
        f"caches {len(plan.refreshed):,}, live {plan.live.count:,}"
    )
    helper = f", helper's peak {HELPER_PEAK_KB[0] / 1024:.0f} MB" if HELPER_PEAK_KB[0] else ""
    print(f"planner's peak {ROWS[-1][2] / 1024:.0f} MB{helper}; {ROWS[-1][0]:.1f} s; digest {digest(plan)}")


if __name__ == "__main__":
    main()
