"""Sleep on a large store: the first sleep of a store built by `import_scale.py build` (and settled),
then a daily sleep after DAILY_NEW new memories arrive through `import --markdown`.

A measuring tool, not a test: it prints a table and asserts nothing about time. Each run works on a
copy of the built store (the database copied, the mirrors hard-linked, as import_scale.py does), so
one build serves both code versions of a before/after pair.

The peak is the larger of the daemon's VmHWM (reset just before the sleep, read once the daemon is
idle again, so it holds the mirror pass after the commit) and the peak its planning process logs.

With --days-later N the daily sleep runs as it does in use, N days after the first: the daemon is
started again with its clock (HIPPO_FAKE_NOW) N days on, and the new memories arrive then. Every
memory's strength has moved by then, and the sleep writes the cached strength of each one whose
cache lags by decay.CACHE_DRIFT or more (sleep.md §3.3); run minutes after the first sleep (the
default, 0), it writes almost none.

Usage: python bench/sleep_scale.py --store <sandbox> [--new 5000] [--days-later N] [--daemon-path DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import import_scale
import ingest_import
import scale
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import kill_all_daemons, log, proc_status_kb, sandbox_at, start_daemon, stop_daemon
from sleep_perf import _planner_peak, _reset_peak, _sleep, _wait_idle

from hippod.base.clock import iso

DAILY_NEW = 5_000
DAILY_SEED = TEXT_SEED + 7_654_321  # not a seed the build or import_scale's import uses
HEADER = (
    f"{'store':>9}  {'sleep':<12}  {'seconds':>8}  {'active':>9}  {'merged':>7}  {'semantic':>8}"
    f"  {'deduped':>7}  {'daemon MB':>9}  {'planner MB':>10}"
)


def _row(size: int, label: str, elapsed: float, data: dict[str, Any], daemon: float, planner: str) -> str:
    deduped = sum(data["deduped"].values())
    return (
        f"{size:>9,}  {label:<12}  {elapsed:>8.1f}  {data['active']:>9,}  {data['merged']:>7,}"
        f"  {data['semantic_created']:>8,}  {deduped:>7,}  {daemon:>9.0f}  {planner:>10}"
    )


def _later(days: float) -> str:
    """HIPPO_FAKE_NOW for `days` days from now."""
    return iso(datetime.now(UTC) + timedelta(days=days))


def run(store: str, new: int, daemon_path: str | None, days_later: float = 0.0) -> list[str]:
    """The first and the daily sleep on a copy of the sandbox `store`; the table's rows."""
    copy = tempfile.mkdtemp(prefix="sc", dir=os.path.dirname(store))
    os.rmdir(copy)
    shutil.copytree(store, copy, symlinks=True, copy_function=import_scale._link_mirrors)
    sb = sandbox_at(copy)
    if daemon_path:
        sb.env["PYTHONPATH"] = daemon_path
    path = os.path.join(copy, "daily.md")
    scale.write_markdown(path, make_memories(make_corpus(), new, DAILY_SEED), 900_000)
    rows: list[str] = []
    proc = start_daemon(sb)
    try:
        log(import_scale.settle_running(sb, proc.pid))
        _wait_idle(proc.pid, limit=3600.0)  # and its check of every mirror against the database
        size = 0
        for label in ("first", "daily"):
            if label == "daily" and days_later:
                stop_daemon(proc)
                sb.env["HIPPO_FAKE_NOW"] = _later(days_later)
                proc = start_daemon(sb)
                _wait_idle(proc.pid, limit=3600.0)  # its check of every mirror at the open
            if label == "daily":
                ingest_import._import(sb.sock, sb.home, sb.base, path)
                _wait_idle(proc.pid)
            _reset_peak(proc.pid)
            started = time.perf_counter()
            elapsed, data = _sleep(sb.sock, sb.home, sb.base, timeout=7200.0)
            _wait_idle(proc.pid)
            log(f"{label} sleep: {elapsed:.1f} s ({time.perf_counter() - started:.1f} s to idle)")
            size = size or int(data["active"])
            daemon = proc_status_kb(proc.pid, "VmHWM") / 1024
            label = f"{label} +{days_later:g}d" if label == "daily" and days_later else label
            rows.append(_row(size, label, elapsed, data, daemon, _planner_peak(sb.home)))
    finally:
        stop_daemon(proc)
        shutil.rmtree(copy, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", required=True, help="a sandbox `import_scale.py build` printed")
    parser.add_argument("--new", type=int, default=DAILY_NEW, help="memories imported before the daily sleep")
    parser.add_argument(
        "--days-later", type=float, default=0.0, help="days from the first sleep to the daily"
    )
    parser.add_argument("--daemon-path", help="PYTHONPATH of the daemon: run another checkout's hippod")
    args = parser.parse_args(argv)
    if args.days_later < 0:
        parser.error("--days-later must be 0 or more")
    try:
        rows = run(args.store, args.new, args.daemon_path, args.days_later)
    finally:
        kill_all_daemons()
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
