"""Sleep bench: fill a store with synthetic memories through the socket, then time `sleep` requests.

A measuring tool, not a test: it prints tables and asserts nothing about time. The memories are the
perf bench's Zipf corpus (corpus.py), remembered by 4 concurrent clients into the global store of a
fresh sandbox; then one sleep runs (the first, with every phase's work to do), a second one right
after (nothing new), and a third after DAILY_NEW more memories (what the daily run meets). Phase 12
(auto-share) does not run for the global store.

Each sleep's peak is the daemon's VmHWM, reset just before the request (/proc/<pid>/clear_refs)
and read once the daemon is idle again, so it holds the sleep and the mirror pass that follows it.
The plan is computed in a child process (hippod/store/sqlite/sleep_process.py): its own peak, which the
daemon logs, is the "planner MB" column.

Before the first sleep of each size up to PAIR_CHECK_UP_TO, the merge candidates of the store are
joined twice, in this process: by the sleep's pair join (model/pairjoin.py) and by the exact
prefix-filter walk it replaced (simjoin.exact_pairs), and the pairs each finds are compared, for
the thresholds of merge (>= 0.35), dedupe (> 0.7) and conflicts (>= 0.5, on distinctive tokens).

Usage: python bench/sleep_perf.py [--sizes 10000,100000] [--keep] [--tmpdir DIR] [--daemon-path DIR]
(--daemon-path runs the daemon from another checkout, e.g. an older commit, for before/after figures.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import time
from typing import Any

from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    proc_status_kb,
    start_daemon,
    stop_daemon,
)

from hippoctl.protocol import messages as m

SLEEP_TIMEOUT = 1800.0
DAILY_NEW = 500
PAIR_CHECK_UP_TO = 10_000
COUNTERS = ("active", "merged", "semantic_created", "junk_warnings")
IDLE_SECONDS = 3.0  # no daemon CPU for this long: the sleep's mirror pass is done


def _sleep(sock: str, home: str, cwd: str, timeout: float = SLEEP_TIMEOUT) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    reply = call(sock, home, cwd, m.Sleep(no_share=True), timeout=timeout)
    elapsed = time.perf_counter() - start
    if not isinstance(reply, m.Result):
        raise BenchError(f"sleep failed: {reply}")
    data: dict[str, Any] = reply.data
    return elapsed, data


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _wait_idle(pid: int, limit: float = 300.0) -> None:
    """Until the daemon has used no CPU for IDLE_SECONDS (or `limit` passed)."""
    deadline = time.monotonic() + limit
    last, quiet_since = _cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _cpu_ticks(pid)
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= IDLE_SECONDS:
            return


def _planner_peak(home: str) -> str:
    """The peak the daemon logged for the newest sleep's planning process ("-" for a daemon whose
    code plans in a thread: the daemon's peak holds the plan then)."""
    found = "-"
    with open(os.path.join(home, "logs", "hippod.log"), encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if "sleep's planner for" in line and line.rstrip().endswith(" MB"):
                found = line.rstrip().rsplit(" ", 2)[-2]
    return found


def _reset_peak(pid: int) -> None:
    # "5" resets the process's peak resident set size (Linux >= 4.0).
    with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")


def same_pairs(db_path: str) -> list[str]:
    """Rows of the same-pairs table: the store's merge candidates (and conflict candidates) joined
    by the sleep's pair join and by the exact reference walk."""
    from hippod.model import conflicts, merge
    from hippod.model.memory import COLUMNS
    from hippod.model.simjoin import exact_pairs
    from hippod.model.tokenize import tokenize
    from hippod.model.wordsets import TokenColumn, pairs
    from hippod.store.memory_codec import row_to_memory

    conn = sqlite3.connect(db_path)
    try:
        rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM memories ORDER BY created, id").fetchall()
    finally:
        conn.close()
    candidates = [mem for mem in (row_to_memory(r) for r in rows) if merge.merge_candidate(mem)]
    lines: list[str] = []
    checks = (
        ("merge >= 0.35", tokenize, merge.MERGE_AT, False),
        ("dedupe > 0.7", tokenize, 0.7, True),
        ("conflicts >= 0.5", conflicts.distinctive_tokens, conflicts.MIN_JACCARD, False),
    )
    for label, words, threshold, strict in checks:
        texts = [list(words(mem.content)) for mem in candidates]
        start = time.perf_counter()
        column = TokenColumn().extend(texts)
        found = set(pairs(column, range(len(texts)), threshold, strict=strict))
        joined = time.perf_counter() - start
        start = time.perf_counter()
        expected = exact_pairs([frozenset(t) for t in texts], threshold, strict=strict)
        walked = time.perf_counter() - start
        lines.append(
            f"{len(texts):>8}  {label:<17}  {len(found):>8}  {len(expected):>8}  {len(found - expected):>8}"
            f"  {len(expected - found):>8}  {joined:>8.2f}  {walked:>8.2f}"
        )
    return lines


def run_size(size: int, parent: str, keep: bool, daemon_path: str | None) -> tuple[list[str], list[str]]:
    sb: Sandbox = make_sandbox(size, parent)
    if daemon_path:
        sb.env["PYTHONPATH"] = daemon_path
    log(f"size {size}: sandbox {sb.base}")
    rows: list[str] = []
    pair_rows: list[str] = []
    try:
        proc = start_daemon(sb)
        items = make_memories(make_corpus(), size, TEXT_SEED + size)
        fill_start = time.perf_counter()
        rate = remember_concurrent(sb, items, CONCURRENT_CLIENTS)
        log(f"size {size}: filled in {time.perf_counter() - fill_start:.1f} s ({rate:.0f}/s)")
        _wait_idle(proc.pid)
        before = proc_status_kb(proc.pid, "VmRSS") / 1024
        if size <= PAIR_CHECK_UP_TO:
            pair_rows = same_pairs(os.path.join(sb.home, "hippo.db"))
        extra = make_memories(make_corpus(), DAILY_NEW, TEXT_SEED + size + 1)
        for label in ("first", "second", "daily"):
            if label == "daily":
                # A day's worth of new memories, then the sleep the daily run would do.
                remember_concurrent(sb, extra, CONCURRENT_CLIENTS)
                _wait_idle(proc.pid)
                before = proc_status_kb(proc.pid, "VmRSS") / 1024
            _reset_peak(proc.pid)
            elapsed, data = _sleep(sb.sock, sb.home, sb.base)
            _wait_idle(proc.pid)
            peak = proc_status_kb(proc.pid, "VmHWM") / 1024
            planner = _planner_peak(sb.home)
            dedupe = sum(data["deduped"].values())
            counts = "  ".join(f"{data[k]:>8}" for k in COUNTERS)
            conflicts = data["conflicts"]["open"]
            rows.append(
                f"{size:>8}  {label:<6}  {elapsed:>8.2f}  {counts}  {dedupe:>8}  {conflicts:>8}"
                f"  {before:>8.0f}  {peak:>8.0f}  {planner:>11}"
            )
            log(f"size {size}: {label} sleep {elapsed:.2f} s, peak {peak:.0f} MB, planner {planner} MB")
            before = proc_status_kb(proc.pid, "VmRSS") / 1024
        stop_daemon(proc)
    finally:
        kill_all_daemons()
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)
    return rows, [f"{size:>8}  {line}" for line in pair_rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--daemon-path", help="PYTHONPATH of the daemon: run another checkout's hippod")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows: list[str] = []
    pair_rows: list[str] = []
    for size in sizes:
        sleeps, checked = run_size(size, args.tmpdir, args.keep, args.daemon_path)
        rows += sleeps
        pair_rows += checked
    header = f"{'size':>8}  {'sleep':<6}  {'seconds':>8}  " + "  ".join(f"{k[:8]:>8}" for k in COUNTERS)
    header += f"  {'deduped':>8}  {'conflict':>8}  {'RSS MB':>8}  {'peak MB':>8}  {'planner MB':>11}"
    print(header)
    print("\n".join(rows))
    if pair_rows:
        print()
        print(
            f"{'size':>8}  {'sets':>8}  {'join':<17}  {'found':>8}  {'exact':>8}  {'extra':>8}  {'missed':>8}"
            f"  {'join s':>8}  {'exact s':>8}"
        )
        print("\n".join(pair_rows))
    print("\nload average (1, 5, 15 min) at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
