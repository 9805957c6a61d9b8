"""Performance bench for hippod: remember throughput, recall latency, daemon RSS and store size.

This is a measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

For each store size it makes a fresh sandbox (HIPPO_HOME, HIPPO_SOCKET and XDG dirs under one short
mkdtemp folder), starts its own daemon (`python -m hippod run`), fills the global store through the real
socket with Remember requests from 4 concurrent clients, then measures:

* remember throughput with 4 concurrent client threads (the fill) and with 1 client (the last memories);
* recall latency through the socket from this process, and end to end as a fresh
  `hippoctl recall "<query>" --global` process (the installed console script), beside the cold start
  of `python -c "import msgspec"`;
* the daemon's RSS and the store's size on disk (database files and Markdown mirrors);
* after stopping the daemon, recall in-daemon: `dispatch(ctx)` timed in this process on the same store,
  with a per-stage breakdown (indaemon.py).

Then the ingestion figures, each in a sandbox of its own (skip them with --no-ingest, or run only
them with --ingest-only):

* `import --markdown` of a generated 50,000-line file: memories/s, the daemon's peak RSS, and recall
  latency while the import runs (ingest_import.py);
* the delay from writing an agent's note to the note being recallable, over 100 notes
  (ingest_agents.py);
* replaying 1,000 spooled hook requests at daemon start (ingest_spool.py).

And the per-prompt hook as a fresh process at 10k memories with 20 pinned, beside `import msgspec`,
and the bytes it prints over a 50-prompt session (prompt_hook.py; --hook-only runs just that).

Usage: python bench/perf.py [--sizes 1000,10000,100000] [--quick] [--profile] [--keep] [--tmpdir DIR]
       [--no-ingest | --ingest-only | --hook-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from datetime import datetime

from clients import (
    CONCURRENT_CLIENTS,
    E2E_RUNS,
    WARMUP_RECALLS,
    cold_start,
    e2e_recalls,
    hippoctl_argv,
    remember_concurrent,
    socket_recalls,
)
from corpus import QUERY_COUNT, TEXT_SEED, Corpus, make_corpus, make_memories, make_queries
from harness import (
    CpuMeter,
    kill_all_daemons,
    log,
    make_sandbox,
    measure_disk,
    pct,
    proc_status_kb,
    start_daemon,
    stop_daemon,
    wait_for_mirrors,
)
from indaemon import in_daemon
from ingest_agents import measure_note_latency
from ingest_agents import render as render_note_latency
from ingest_import import render as render_import
from ingest_import import run as run_import
from ingest_spool import render as render_spool
from ingest_spool import spool_replay_bench
from prompt_hook import render as render_prompt_hook
from prompt_hook import run as run_prompt_hook
from report import SizeResult, machine, render_breakdown, render_diagnostics, render_table

import hippod.mirrors.mirrors as mirrors_module

DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 5_000)
ONE_CLIENT_SAMPLE = 2_000
IN_DAEMON_REMEMBERS = 1_000


def run_size(
    size: int, corpus: Corpus, queries: Sequence[str], *, profile: bool, keep: bool, parent: str
) -> SizeResult:
    sb = make_sandbox(size, parent)
    log(f"size {size}: sandbox {sb.base}")
    try:
        items = make_memories(corpus, size, TEXT_SEED + size)
        proc = start_daemon(sb)
        one = min(ONE_CLIENT_SAMPLE, size // 2)
        # Each CPU window closes after the mirrors of its writes are on disk.
        meter = CpuMeter(proc.pid)
        fill_start = time.perf_counter()
        rate_4 = remember_concurrent(sb, items[: size - one], CONCURRENT_CLIENTS)
        fill_seconds = time.perf_counter() - fill_start
        meter.freeze_bench()
        lag, stuck = wait_for_mirrors(sb.home, size - one)
        time.sleep(0.5)
        cpu_4 = meter.stop(size - one)
        log(f"size {size}: {size - one} remembered with {CONCURRENT_CLIENTS} clients at {rate_4:.0f}/s")
        log(f"size {size}: mirrors caught up {lag:.1f} s after the fill ({stuck} missing)")

        meter = CpuMeter(proc.pid)
        start_1 = time.perf_counter()
        rate_1 = remember_concurrent(sb, items[size - one :], 1)
        fill_seconds += time.perf_counter() - start_1
        meter.freeze_bench()
        wait_for_mirrors(sb.home, size)
        time.sleep(0.5)
        cpu_1 = meter.stop(one)
        log(f"size {size}: {one} remembered with 1 client at {rate_1:.0f}/s")

        time.sleep(mirrors_module.COALESCE_SECONDS)
        meter = CpuMeter(proc.pid)
        socket_times, results = socket_recalls(sb, queries)
        time.sleep(mirrors_module.COALESCE_SECONDS + 0.5)  # let the last mirror pass land in the meter
        cpu_recall = meter.stop(len(socket_times) + WARMUP_RECALLS)
        e2e = e2e_recalls(sb, queries)
        log(f"size {size}: recalls done (socket p50 {pct(socket_times, 50) * 1e3:.1f} ms)")

        rss, hwm = proc_status_kb(proc.pid, "VmRSS"), proc_status_kb(proc.pid, "VmHWM")
        disk = measure_disk(sb.home)
        stop_daemon(proc)
        db_after_stop = os.path.getsize(os.path.join(sb.home, "hippo.db"))
        inside = in_daemon(sb, queries, make_memories(corpus, 2 * IN_DAEMON_REMEMBERS, -size), profile)
        log(f"size {size}: in-daemon p50 {pct(inside.times, 50) * 1e3:.2f} ms")
        return SizeResult(
            size=size,
            remember_1=rate_1,
            remember_4=rate_4,
            fill_seconds=fill_seconds,
            mirror_lag=lag,
            mirrors_stuck=stuck,
            socket_times=socket_times,
            e2e_times=e2e,
            results=results,
            rss_kb=rss,
            hwm_kb=hwm,
            disk=disk,
            db_after_stop=db_after_stop,
            inside=inside,
            cpu_4=cpu_4,
            cpu_1=cpu_1,
            cpu_recall=cpu_recall,
        )
    finally:
        kill_all_daemons()
        if keep:
            log(f"kept {sb.base}")
        else:
            shutil.rmtree(sb.base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="smoke run with sizes 1000,5000")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the in-daemon phase at the largest size"
    )
    parser.add_argument("--keep", action="store_true", help="keep the sandbox folders")
    parser.add_argument("--tmpdir", default="/tmp", help="parent of the sandbox folders (default /tmp)")
    ingest = parser.add_mutually_exclusive_group()
    ingest.add_argument("--no-ingest", action="store_true", help="skip the ingestion figures")
    ingest.add_argument("--ingest-only", action="store_true", help="only the ingestion figures")
    ingest.add_argument("--hook-only", action="store_true", help="only the per-prompt hook figures")
    args = parser.parse_args(argv)
    if args.ingest_only:
        return ingest_figures(args.tmpdir, args.keep)
    if args.hook_only:
        return hook_figures()
    sizes = list(QUICK_SIZES) if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < 20:
        parser.error("sizes must be 20 or more")

    corpus = make_corpus()
    queries = make_queries(corpus)
    log(f"vocabulary {len(corpus.vocab)} words, {len(queries)} queries, sizes {sizes}")
    started = datetime.now()
    cold = {code: cold_start(code) for code in ("import msgspec", "pass", "import hippoctl.cli")}
    results: list[SizeResult] = []
    try:
        for size in sizes:
            last = size == sizes[-1]
            run = run_size(
                size, corpus, queries, profile=args.profile and last, keep=args.keep, parent=args.tmpdir
            )
            results.append(run)
    finally:
        kill_all_daemons()

    print(f"hippod perf bench, {started:%Y-%m-%d %H:%M}; {machine()}; sandboxes in {args.tmpdir}")
    print(
        f"in-daemon: {QUERY_COUNT} queries x 2 through dispatch(ctx) in-process; socket: {QUERY_COUNT} "
        f"recalls; e2e: {E2E_RUNS} `{' '.join(hippoctl_argv())} recall <q> --global` processes; "
        f"1-client remember on the last {ONE_CLIENT_SAMPLE} (or size/2) memories"
    )
    print()
    print(render_table(results, cold))
    print()
    print(render_diagnostics(results))
    print()
    print("In-daemon recall, stage breakdown (instrumented pass; p50 / mean per recall):")
    print(render_breakdown(results))
    for r in results:
        if r.inside.profile:
            print()
            print(f"cProfile of the in-daemon phase at {r.size} (event-loop thread only):")
            print(r.inside.profile)
    if not args.no_ingest:
        print()
        ingest_figures(args.tmpdir, args.keep)
    return hook_figures()


def hook_figures() -> int:
    """The per-prompt hook's wall time as a fresh process, and its bytes over a session."""
    try:
        result = run_prompt_hook()
    finally:
        kill_all_daemons()
    print(render_prompt_hook(result))
    return 0


def ingest_figures(tmpdir: str, keep: bool) -> int:
    """Import throughput, note-to-recall delay and spool replay, each printed as its own table."""
    try:
        imported = run_import(tmpdir=tmpdir, keep=keep)
        notes = measure_note_latency()
        spool = spool_replay_bench(parent=tmpdir, keep=keep)
    finally:
        kill_all_daemons()
    for table in (render_import(imported), render_note_latency(notes), render_spool(spool)):
        print(table)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
