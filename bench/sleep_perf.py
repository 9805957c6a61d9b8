"""Sleep bench: fill a store with synthetic memories through the socket, then time `sleep` requests.

A measuring tool, not a test: it prints a table and asserts nothing about time. The memories are the
perf bench's Zipf corpus (corpus.py), remembered by 4 concurrent clients into the global store of a
fresh sandbox; then one sleep runs (the first, with every phase's work to do), a second one right
after (nothing new), and a third after DAILY_NEW more memories (what the daily run meets). Phase 12
(auto-share) does not run for the global store.

Usage: python bench/sleep_perf.py [--sizes 100000] [--keep] [--tmpdir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from typing import Any

from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import (
    BenchError,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    proc_status_kb,
    start_daemon,
    stop_daemon,
)

from hippoctl.protocol import messages as m

SLEEP_TIMEOUT = 900.0
COUNTERS = ("active", "merged", "semantic_created", "junk_removed", "junk_warnings")


def _sleep(sock: str, home: str, cwd: str) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    reply = call(sock, home, cwd, m.Sleep(no_share=True), timeout=SLEEP_TIMEOUT)
    elapsed = time.perf_counter() - start
    if not isinstance(reply, m.Result):
        raise BenchError(f"sleep failed: {reply}")
    data: dict[str, Any] = reply.data
    return elapsed, data


DAILY_NEW = 500


def run_size(size: int, parent: str, keep: bool) -> list[str]:
    sb = make_sandbox(size, parent)
    log(f"size {size}: sandbox {sb.base}")
    rows: list[str] = []
    try:
        proc = start_daemon(sb)
        items = make_memories(make_corpus(), size, TEXT_SEED + size)
        fill_start = time.perf_counter()
        rate = remember_concurrent(sb, items, CONCURRENT_CLIENTS)
        fill = time.perf_counter() - fill_start
        log(f"size {size}: filled in {fill:.1f} s ({rate:.0f}/s)")
        extra = make_memories(make_corpus(), DAILY_NEW, TEXT_SEED + size + 1)
        for label in ("first", "second", "daily"):
            if label == "daily":
                # A day's worth of new memories, then the sleep the daily run would do.
                remember_concurrent(sb, extra, CONCURRENT_CLIENTS)
            elapsed, data = _sleep(sb.sock, sb.home, sb.base)
            rss = proc_status_kb(proc.pid, "VmHWM") / 1024
            dedupe = sum(data["deduped"].values())
            counts = "  ".join(f"{data[k]:>8}" for k in COUNTERS)
            conflicts = data["conflicts"]["open"]
            rows.append(
                f"{size:>8}  {label:<6}  {elapsed:>8.2f}  {counts}  {dedupe:>8}  {conflicts:>8}  {rss:>8.0f}"
            )
            log(f"size {size}: {label} sleep {elapsed:.2f} s")
        stop_daemon(proc)
    finally:
        kill_all_daemons()
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100000", help="comma-separated store sizes")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    parser.add_argument("--tmpdir", default="/tmp")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    header = f"{'size':>8}  {'sleep':<6}  {'seconds':>8}  " + "  ".join(f"{k[:8]:>8}" for k in COUNTERS)
    header += f"  {'deduped':>8}  {'conflict':>8}  {'peak MB':>8}"
    rows: list[str] = []
    for size in sizes:
        rows += run_size(size, args.tmpdir, args.keep)
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
