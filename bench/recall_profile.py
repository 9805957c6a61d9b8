"""Where a recall's time goes on a large store, against the floor it is measured by.

A measuring tool, not a test: it prints tables and asserts nothing about time. It fills a fresh
sandbox's global store with the perf bench's corpus (or reuses a sandbox `bench/perf.py --keep`
left), then measures, over the perf bench's 200 queries:

* the floor: a socket round trip (`Ping` through the daemon), and with plain `sqlite3` on the same
  database file the bare FTS5 query (`MATCH ... ORDER BY rank LIMIT 200`, the match each recall
  makes) and the whole candidate statement recall runs (joined, filtered, tie-broken);
* recall through the socket, back to back and 50 ms apart (as between prompts, so the
  strengthening each recall writes after its reply is in before the next asks), and in-process
  (`dispatch(ctx)`, the store opened here as the daemon opens it), p50 / p99;
* each thread's CPU per in-process recall (the event loop, the reader, the writer that records the
  strengthening after the reply);
* a cProfile of the in-process recalls: the stages' shares of the event loop's time, and the top
  functions by their own time.

Usage: python bench/recall_profile.py [--size 100000] [--store SANDBOX] [--tmpdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from clients import CONCURRENT_CLIENTS, WARMUP_RECALLS, remember_concurrent, socket_recalls
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    sandbox_at,
    sandbox_environ,
    start_daemon,
    stop_daemon,
)
from indaemon import _open_state, _recall_ctx

from hippoctl.protocol import messages as m
from hippod.daemon.dispatch import dispatch
from hippod.model.terms import query_terms
from hippod.model.tokenize import fts_match_expression
from hippod.recall import narrow
from hippod.store import memory_codec
from hippod.store.sqlite import memories

# A pause after each socket recall, as between prompts, for the second socket figure: the strengthening
# each recall writes after its reply is then in before the next recall asks.
PROMPT_GAP = 0.05

# The stages of a recall, each the cumulative time of the function that does it (cProfile names).
STAGES = (
    ("the whole recall (dispatch)", "dispatch"),
    ("choose the match terms (fts5vocab)", "_match_terms"),
    ("candidates: SQL wait + row decode", "candidates_fts"),
    ("score 200 candidates", "score_candidates"),
    ("merge and sort", "merge_results"),
    ("budget fill: build and render items", "fill_budget"),
    ("queue the strengthening", "after_recall"),
)


def _sandbox(args: argparse.Namespace) -> tuple[Sandbox, bool]:
    """The sandbox to measure: a kept one (--store), or a fresh one filled to --size."""
    if args.store:
        return sandbox_at(os.path.abspath(args.store)), False
    sb = make_sandbox(args.size, args.tmpdir)
    proc = start_daemon(sb)
    log(f"filling {args.size} memories with {CONCURRENT_CLIENTS} clients")
    remember_concurrent(sb, make_memories(make_corpus(), args.size, TEXT_SEED), CONCURRENT_CLIENTS)
    stop_daemon(proc)
    return sb, True


def _healed_at(data: object) -> str | None:
    """When the store's opening mirror check finished, from a status reply's data (None: not yet)."""
    stores = data.get("stores") if isinstance(data, dict) else None
    mirrors = stores[0].get("mirrors") if isinstance(stores, list) and stores else None
    return mirrors.get("healed_at") if isinstance(mirrors, dict) else None


def _wait_healed(sb: Sandbox, timeout: float = 900.0) -> None:
    """Until the store's opening mirror check is done (status shows when it last ran): it reads
    every mirror on a thread, which would otherwise run beside the timings."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = call(sb.sock, sb.home, sb.base, m.Status(), timeout=120.0)
        if isinstance(reply, m.Result) and _healed_at(reply.data):
            return
        time.sleep(1.0)
    raise BenchError(f"the store's mirror check had not finished after {timeout:.0f} s")


def _matches(db: sqlite3.Connection, queries: Sequence[str]) -> list[str]:
    """Each query's FTS5 match, narrowed as recall narrows it."""
    out: list[str] = []
    for query in queries:
        terms = list(dict.fromkeys(query_terms(query)))
        marks = ",".join("?" * len(terms))
        rows = dict(db.execute(f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({marks})", terms))
        out.append(fts_match_expression(narrow.narrowed(terms, rows) if len(terms) > 1 else terms))
    return out


def _timed(run: Callable[[Any], object], items: Iterable[Any]) -> list[float]:
    """Seconds each call of `run` took, one per item."""
    times: list[float] = []
    for item in items:
        start = time.perf_counter()
        run(item)
        times.append(time.perf_counter() - start)
    return times


def sql_floor(home: str, queries: Sequence[str]) -> dict[str, list[float]]:
    """Plain sqlite3 on the store's file: the bare FTS5 query and recall's candidate statement."""
    db = sqlite3.connect(os.path.join(home, "hippo.db"))
    try:
        matches = _matches(db, queries)
        tenant = db.execute("SELECT tenant_id FROM memories LIMIT 1").fetchone()[0]
        where, params = memory_codec.admission(tenant, False, None)
        bare = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT 200"
        full = memories.ranked_sql(where)
        _timed(lambda mt: db.execute(bare, [mt]).fetchall(), matches)  # warm the page cache
        return {
            "bare FTS5 query, ORDER BY rank LIMIT 200": _timed(
                lambda mt: db.execute(bare, [mt]).fetchall(), matches
            ),
            "recall's candidate statement (400 ranked, joined, 200 kept)": _timed(
                lambda mt: db.execute(full, [mt, 400, *params, 200]).fetchall(), matches
            ),
        }
    finally:
        db.close()


def _thread_cpu() -> dict[str, float]:
    """CPU seconds per thread of this process, by thread name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        name = names.get(int(tid), tid)
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


async def _in_process(
    sb: Sandbox, queries: Sequence[str]
) -> tuple[list[float], dict[str, float], pstats.Stats]:
    state = await _open_state(sb)
    try:
        for n, query in enumerate(queries[:WARMUP_RECALLS]):
            await dispatch(_recall_ctx(state, sb.base, query, n))
            await state.registry.settled()
        times: list[float] = []
        before = _thread_cpu()
        for n, query in enumerate(queries):
            ctx = _recall_ctx(state, sb.base, query, n)
            start = time.perf_counter()
            await dispatch(ctx)
            times.append(time.perf_counter() - start)
            await state.registry.settled()  # the strengthening, written after the reply
        after = _thread_cpu()
        cpu = {name: (after[name] - before.get(name, 0.0)) / len(queries) for name in after}
        profiler = cProfile.Profile()
        profiler.enable()
        for n, query in enumerate(queries):
            await dispatch(_recall_ctx(state, sb.base, query, n))
            await state.registry.settled()
        profiler.disable()
        return times, cpu, pstats.Stats(profiler)
    finally:
        await state.registry.close_all()


def print_cpu(cpu: dict[str, float]) -> None:
    """CPU seconds per recall by thread, as ms lines, the busiest thread first."""
    for name, value in sorted(cpu.items(), key=lambda kv: -kv[1]):
        if value >= 1e-5:
            print(f"  {name:40s} {value * 1e3:6.2f}")


def _stage_table(stats: pstats.Stats, calls: int) -> list[tuple[str, float]]:
    """(stage, cumulative ms per recall) for STAGES, from the profile's function table."""
    table = stats.stats  # type: ignore[attr-defined]
    total = {func: 0.0 for _, func in STAGES}
    for (_, _, name), (_, _, _, cumulative, _) in table.items():
        if name in total:
            total[name] += cumulative
    return [(label, total[func] * 1e3 / calls) for label, func in STAGES]


def _row(label: str, values: Sequence[float]) -> str:
    return f"{label:64s} {pct(values, 50) * 1e3:8.2f} {pct(values, 99) * 1e3:8.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--store", help="a sandbox folder kept by bench/perf.py --keep (its size is used)")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    queries = make_queries(make_corpus())
    sb, made = _sandbox(args)
    try:
        proc = start_daemon(sb)
        _wait_healed(sb)
        pings = _timed(lambda _: call(sb.sock, sb.home, sb.base, m.Ping()), range(300))
        via_socket, _ = socket_recalls(sb, queries)
        spaced, _ = socket_recalls(sb, queries, gap=PROMPT_GAP)
        stop_daemon(proc)
        floor = sql_floor(sb.home, queries)
        with sandbox_environ(sb):
            times, cpu, stats = asyncio.run(_in_process(sb, queries))
    finally:
        kill_all_daemons()
    with contextlib.closing(sqlite3.connect(os.path.join(sb.home, "hippo.db"))) as db:
        count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    print(f"recall profile, {count} memories, {len(queries)} queries; load average {os.getloadavg()[0]:.2f}")
    print(f"\n{'ms':64s} {'p50':>8s} {'p99':>8s}")
    print(_row("floor: socket round trip (Ping, connect + hello + reply)", pings))
    for label, values in floor.items():
        print(_row(f"floor: {label}", values))
    print(_row("recall through the socket, back to back", via_socket))
    print(_row(f"recall through the socket, {PROMPT_GAP * 1e3:.0f} ms apart", spaced))
    print(_row("recall in-process, dispatch(ctx)", times))
    print("\nCPU per in-process recall, by thread (ms; the writer records the strengthening after the reply)")
    print_cpu(cpu)
    stages = _stage_table(stats, len(queries))
    whole = stages[0][1]
    print("\nStages under cProfile (ms per recall; share of the whole recall, waits on the reader included)")
    for label, value in stages:
        print(f"  {label:44s} {value:7.2f}  {100 * value / whole:5.1f}%")
    print("\nTop functions by own time under cProfile:")
    stats.sort_stats("tottime").print_stats(15)
    if made and not args.keep:
        shutil.rmtree(sb.base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"recall_profile: {exc}", file=sys.stderr)
        sys.exit(1)
