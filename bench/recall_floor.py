"""Recall's speed against its floor, side by side from one run on one store.

A measuring tool, not a test: it prints a table and asserts nothing about time. Over the perf
bench's 200 queries on one store (a sandbox `bench/recall_profile.py --keep` or `bench/perf.py
--keep` left, or a fresh one filled to --size), p50 / p99 of:

* the floor: the candidate statement `candidates_fts` runs (the same narrowed MATCH, 400 ranked,
  joined, filtered, 200 kept), in plain `sqlite3` on the store's file; beside it the bare FTS5
  match alone and the `fts5vocab` lookup that narrows the match;
* recall in the daemon, from the request decoded to the reply sent: the daemon's own timing, a
  debug line in its log (`HIPPO_LOG_LEVEL=debug`), recalls 50 ms apart (`--gap`) as between prompts;
* the same in-process, as far apart: the store opened as the daemon opens it, `dispatch(ctx)`, the
  `Result` built and encoded (msgpack), with the event loop's CPU per recall and each thread's;
* recall through the socket (connect, hello, request, reply) as the client sees it;
* the ratios of the recall figures to the floor.

With `--ranking FILE` it first checks that the ranking did not change: for every query, the ids
recall ranks (all the candidates, merged and sorted) and those it returns, with the clock fixed
and nothing strengthened, go to FILE when it does not exist and are compared with it when it
does. Run it once on the code before a change and once after, on the same store. `--only-ranking`
stops after that check (for the code before, e.g. with `PYTHONPATH` at an older tree).

`--profile` adds a cProfile of the in-process recalls (top functions by own time).

Usage: python bench/recall_floor.py [--store SANDBOX | --size 100000 [--keep]] [--ranking FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import dataclasses
import io
import json
import os
import pstats
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
from clients import WARMUP_RECALLS, socket_recalls
from corpus import make_corpus, make_queries
from harness import (
    BenchError,
    Sandbox,
    kill_all_daemons,
    log,
    pct,
    sandbox_environ,
    start_daemon,
    stop_daemon,
    thread_cpu,
)
from indaemon import _open_state, _recall_ctx
from recall_profile import _matches, _sandbox, _thread_cpu, _timed, _wait_healed, print_cpu

from hippoctl.protocol import messages as m
from hippoctl.protocol import paths
from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.daemon.dispatch import dispatch
from hippod.daemon.state import DaemonState
from hippod.model.terms import query_terms
from hippod.recall import answer, search
from hippod.store import memory_codec
from hippod.store.sqlite import memories

# The instant the ranking check fixes the clock at (recency and decay read it).
RANKING_NOW = datetime(2030, 1, 1, tzinfo=UTC)
ROUNDS = 2  # in-process passes over the queries

_encode = msgspec.msgpack.Encoder().encode
_SERVED = re.compile(r"served Recall in ([0-9.]+) ms")


def sql_floor(home: str, queries: Sequence[str]) -> tuple[dict[str, list[float]], list[float]]:
    """Plain sqlite3 on the store's file: the vocabulary lookup, the bare match, the candidate statement."""
    db = sqlite3.connect(f"file:{os.path.join(home, 'hippo.db')}?mode=ro", uri=True)
    try:
        matches = _matches(db, queries)
        tenant = db.execute("SELECT tenant_id FROM memories LIMIT 1").fetchone()[0]
        where, params = memory_codec.admission(tenant, False, None)
        statement = memories.ranked_sql(where)
        bare = (
            "SELECT rowid, bm25(memories_fts) AS s FROM memories_fts WHERE memories_fts MATCH ? "
            "ORDER BY s LIMIT 400"
        )
        vocab = "SELECT term, doc FROM memories_fts_vocab WHERE term IN ({})"
        terms = [list(dict.fromkeys(query_terms(q))) for q in queries]

        def candidates(mt: str) -> object:
            return db.execute(statement, [mt, 400, *params, 200]).fetchall()

        _timed(candidates, matches)  # the page cache
        out: dict[str, list[float]] = {}
        for _ in range(ROUNDS):
            for label, run, items in (
                (
                    "fts5vocab lookup of the query's terms",
                    lambda t: db.execute(vocab.format(",".join("?" * len(t))), t).fetchall(),
                    terms,
                ),
                ("bare FTS5 match, bm25, top 400", lambda mt: db.execute(bare, [mt]).fetchall(), matches),
                ("FLOOR: the candidate statement (400 ranked, joined, 200 kept)", candidates, matches),
            ):
                out.setdefault(label, []).extend(_timed(run, items))
        cpu: list[float] = []
        for mt in matches:
            start = time.thread_time()
            candidates(mt)
            cpu.append(time.thread_time() - start)
        return out, cpu
    finally:
        db.close()


async def _served(state: DaemonState, cwd: str, query: str, n: int) -> bytes:
    """One recall as the server runs it between decoding the request and sending the reply."""
    ctx = _recall_ctx(state, cwd, query, n)
    data, text = await dispatch(ctx)
    return _encode(m.Result(id=n, text=text, data=data, warnings=ctx.warnings, exit_code=ctx.exit_code))


async def _in_process(
    sb: Sandbox, queries: Sequence[str], profile: bool, gap: float
) -> tuple[list[float], list[float], dict[str, float], str]:
    state = await _open_state(sb)
    try:
        for n, query in enumerate(queries[:WARMUP_RECALLS]):
            await _served(state, sb.base, query, n)
            await state.registry.settled()
        times: list[float] = []
        main_cpu: list[float] = []  # the event loop's own CPU in each recall
        before = _thread_cpu()
        for round_ in range(ROUNDS):
            for n, query in enumerate(queries):
                start, cpu_start = time.perf_counter(), time.thread_time()
                await _served(state, sb.base, query, round_ * len(queries) + n)
                times.append(time.perf_counter() - start)
                main_cpu.append(time.thread_time() - cpu_start)
                # The strengthening is written after the reply; as between prompts, it is in
                # before the next recall asks.
                await state.registry.settled()
                await asyncio.sleep(gap)
        after = _thread_cpu()
        cpu = {name: (after[name] - before.get(name, 0.0)) / len(times) for name in after}
        text = ""
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for n, query in enumerate(queries):
                await _served(state, sb.base, query, n)
                await state.registry.settled()
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
            text = out.getvalue()
        return times, main_cpu, cpu, text
    finally:
        await state.registry.close_all()


async def _rankings(sb: Sandbox, queries: Sequence[str]) -> dict[str, Any]:
    """Per query, the ids recall ranks and returns, with the clock fixed and nothing strengthened."""
    state = await _open_state(sb)
    clock.set_fake_now(RANKING_NOW)
    out: dict[str, Any] = {}
    try:
        for n, query in enumerate(queries):
            body = m.Recall(query=query, strengthen=False)
            ctx = RequestContext(m.Request(id=n, cwd=sb.base, body=body, global_store=True), state)
            ranking = await search.rank(ctx, body)
            reply, text = await answer.recall(ctx, body, surface=None)
            out[query] = {
                "ranked": [s.memory.id for s in ranking.ranked],
                "scores": [round(s.score, 9) for s in ranking.ranked],
                "returned": [r.id for r in reply.results],
                "text": text,
            }
            await state.registry.settled()
    finally:
        clock.set_fake_now(None)
        await state.registry.close_all()
    return out


def check_ranking(sb: Sandbox, queries: Sequence[str], path: str) -> str:
    """Save the rankings to `path`, or compare them with those saved there; a line saying which."""
    with sandbox_environ(sb):
        found = asyncio.run(_rankings(sb, queries))
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(found, handle)
        return f"ranking: saved {len(found)} queries to {path}"
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    differ = {
        key: [q for q in queries if saved[q][key] != found[q][key]]
        for key in ("ranked", "scores", "returned", "text")
    }
    if not any(differ.values()):
        ranked = sum(len(v["ranked"]) for v in found.values())
        what = f"{ranked} ranked ids, their scores, the returned ids, the text"
        return f"ranking: the same as {path} for all {len(found)} queries ({what})"
    lines = [f"ranking: DIFFERS from {path}"]
    for key, bad in differ.items():
        if bad:
            lines.append(f"  {key}: {len(bad)} queries, first {bad[0]!r}")
    raise BenchError("\n".join(lines))


def _daemon_cpu(pid: int, before: dict[int, float], recalls: int) -> dict[str, float]:
    """The daemon's CPU seconds per recall since `before`, by thread: "loop" (the main thread), else
    "thread N" in the order they started (the OS knows them all as "python")."""
    after = thread_cpu(pid)
    others = sorted(tid for tid in after if tid != pid)
    return {
        ("loop" if tid == pid else f"thread {others.index(tid) + 1}"): (used - before.get(tid, 0.0)) / recalls
        for tid, used in after.items()
    }


def socket_phase(
    sb: Sandbox, queries: Sequence[str], gap: float
) -> tuple[list[float], list[float], dict[str, float]]:
    """Recalls through the socket of a daemon logging at debug level: each one's round trip as the
    client sees it, and its time in the daemon from request decoded to reply sent (its log line).

    `gap` seconds pass after each reply, as between an agent's prompts, so the strengthening a recall
    writes after its reply is in before the next asks (back to back, the next waits for it)."""
    traced = dataclasses.replace(sb, env={**sb.env, "HIPPO_LOG_LEVEL": "debug"})
    log_file = paths.log_file(traced.env)
    proc = start_daemon(traced)
    try:
        _wait_healed(sb)
        offset = os.path.getsize(log_file)
        before = thread_cpu(proc.pid)
        times: list[float] = []
        for _ in range(ROUNDS):
            times += socket_recalls(sb, queries, gap=gap)[0]
        cpu = _daemon_cpu(proc.pid, before, ROUNDS * (WARMUP_RECALLS + len(queries)))
    finally:
        stop_daemon(proc)
    with open(log_file, encoding="utf-8") as handle:
        handle.seek(offset)
        lines = [float(found[1]) / 1e3 for line in handle if (found := _SERVED.search(line))]
    # Each round's first WARMUP_RECALLS are its warm-up, not timed by the client either.
    per_round = WARMUP_RECALLS + len(queries)
    if len(lines) != ROUNDS * per_round:
        raise BenchError(f"{len(lines)} 'served Recall' lines in {log_file} for {ROUNDS * per_round} recalls")
    served = [t for n, t in enumerate(lines) if n % per_round >= WARMUP_RECALLS]
    return times, served, cpu


def _row(label: str, values: Sequence[float]) -> str:
    return f"{label:66s} {pct(values, 50) * 1e3:8.2f} {pct(values, 99) * 1e3:8.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--store", help="a sandbox folder kept by bench/recall_profile.py or perf.py --keep")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--ranking", help="a JSON file of rankings to write, or to compare with")
    parser.add_argument("--only-ranking", action="store_true", help="stop after the ranking check")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between socket recalls")
    args = parser.parse_args(argv)
    queries = make_queries(make_corpus())
    sb, made = _sandbox(args)
    ranking = ""
    try:
        if args.ranking:
            log("ranking check")
            ranking = check_ranking(sb, queries, args.ranking)
            print(ranking, flush=True)
            if args.only_ranking:
                return 0
        log("socket recalls")
        via_socket, logged, daemon_cpu = socket_phase(sb, queries, args.gap)
        log("plain sqlite3")
        floor, cpu_floor = sql_floor(sb.home, queries)
        log("in-process recalls")
        with sandbox_environ(sb):
            served, main_cpu, cpu, profile = asyncio.run(_in_process(sb, queries, args.profile, args.gap))
    finally:
        kill_all_daemons()
    with contextlib.closing(sqlite3.connect(os.path.join(sb.home, "hippo.db"))) as db:
        count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    base = floor["FLOOR: the candidate statement (400 ranked, joined, 200 kept)"]
    print(
        f"recall against its floor: {count} memories, {len(queries)} queries x {ROUNDS}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"\n{'ms':66s} {'p50':>8s} {'p99':>8s}")
    for label, values in floor.items():
        print(_row(f"sqlite3: {label}", values))
    print(_row(f"IN-DAEMON recall, request decoded -> reply sent ({args.gap * 1e3:.0f} ms apart)", logged))
    print(
        _row(f"in-process recall, dispatch(ctx) + the reply encoded ({args.gap * 1e3:.0f} ms apart)", served)
    )
    print(_row("  its event loop's CPU (thread_time)", main_cpu))
    print(_row("recall through the socket (connect + hello + request + reply)", via_socket))
    for label, values in (("in-daemon", logged), ("in-process", served), ("socket", via_socket)):
        ratio50, ratio99 = pct(values, 50) / pct(base, 50), pct(values, 99) / pct(base, 99)
        print(f"{label + ' / floor':66s} {ratio50:7.2f}x {ratio99:7.2f}x")
    statement = sum(cpu_floor) / len(cpu_floor)
    print(f"\nCPU per recall by thread, in-process (ms; the floor's statement: {statement * 1e3:.2f} ms CPU)")
    print_cpu(cpu)
    print("CPU per recall by thread in the daemon (ms)")
    print_cpu(daemon_cpu)
    if ranking:
        print(ranking)
    if profile:
        print("\nin-process recalls under cProfile, by own time:")
        print(profile)
    if made and not args.keep:
        shutil.rmtree(sb.base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"recall_floor: {exc}", file=sys.stderr)
        sys.exit(1)
