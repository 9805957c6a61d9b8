"""Recall and remember timed in-process: the daemon's own dispatch(ctx) on a store the daemon built.

Runs after the daemon has stopped: the store is reopened here with StoreRegistry / RequestContext /
dispatch, so the handler path is timed without the socket. Also an instrumented pass that times each
stage of the recall handler by wrapping module-level names (no product code changed), and an optional
cProfile of the phase.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import cProfile
import io
import os
import pstats
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients import WARMUP_RECALLS
from harness import BenchError, Sandbox, sandbox_environ

import hippod.mirrors.mirrors as mirrors_module
import hippod.recall.search as recall_store
import hippod.recall.strengthen as strengthen
import hippod.store.memory_codec as memory_codec
import hippod.store.sqlite.memories as memories_module
from hippoctl.protocol import messages as m
from hippod.calls.request import RequestContext
from hippod.daemon import gc_policy
from hippod.daemon.app import new_state
from hippod.daemon.dispatch import dispatch
from hippod.daemon.state import DaemonState
from hippod.store.stores import StoreRegistry, sqlite_only

Items = Sequence[tuple[str, list[str]]]


@dataclass
class Breakdown:
    """Per-recall stage times (seconds) from an instrumented pass over the queries."""

    total: list[float] = field(default_factory=list)
    candidates: list[float] = field(default_factory=list)
    fetch: list[float] = field(default_factory=list)
    sql: list[float] = field(default_factory=list)
    decode: list[float] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    matched: list[int] = field(default_factory=list)
    fetched: list[int] = field(default_factory=list)
    flushes: int = 0
    flush_seconds: float = 0.0
    flush_max: float = 0.0


@dataclass
class InDaemon:
    times: list[float]
    muted_times: list[float]
    breakdown: Breakdown
    remember_rate: float
    remember_times: list[float]
    remember_muted_rate: float
    profile: str = ""


def _recall_ctx(state: DaemonState, cwd: str, query: str, n: int) -> RequestContext:
    return RequestContext(m.Request(id=n, cwd=cwd, body=m.Recall(query=query), global_store=True), state)


async def _open_state(sb: Sandbox) -> DaemonState:
    registry = StoreRegistry()
    if registry.global_root != sb.home:
        raise BenchError(f"registry opened {registry.global_root}, not the sandbox home {sb.home}")
    state = new_state(registry, sb.sock, os.path.join(sb.base, "bench.log"), 1.0)
    store = await registry.open(registry.global_root)
    # Opening a store checks every mirror against the database (20 s at 100k, on a thread); a
    # running daemon did that long ago, so the timings start once it is done.
    await store.mirrors.flush_now()
    gc_policy.tune()  # as the daemon does once it serves
    return state


async def _timed_dispatch(state: DaemonState, cwd: str, queries: Sequence[str], repeats: int) -> list[float]:
    for n, q in enumerate(queries[:WARMUP_RECALLS]):
        await dispatch(_recall_ctx(state, cwd, q, n))
    times: list[float] = []
    n = 0
    for _ in range(repeats):
        for q in queries:
            n += 1
            ctx = _recall_ctx(state, cwd, q, n)
            start = time.perf_counter()
            await dispatch(ctx)
            times.append(time.perf_counter() - start)
            # The strengthening is written after the reply, as the daemon does once it has sent it;
            # the next recall would wait for it, so it is let in here, outside the timing.
            await state.registry.settled()
    return times


@contextlib.contextmanager
def _patched(target: object, name: str, replacement: object) -> Iterator[None]:
    original = getattr(target, name)
    setattr(target, name, replacement)
    try:
        yield
    finally:
        setattr(target, name, original)


_IN_CANDIDATES: contextvars.ContextVar[bool] = contextvars.ContextVar("in_candidates", default=False)


async def _instrumented(state: DaemonState, sb: Sandbox, queries: Sequence[str]) -> Breakdown:
    """Time each stage of the recall handler, one dispatch per query."""
    bd = Breakdown()
    acc: dict[str, float] = {}
    statements: list[tuple[str, list[Any]]] = []  # this recall's candidate SQL
    captured: list[list[tuple[str, list[Any]]]] = []
    store = sqlite_only(await state.registry.open(state.registry.global_root), "the bench")
    reader = store.db.reader

    orig_candidates = memories_module.candidates_fts
    orig_row = memory_codec.row_to_memory
    orig_score = recall_store.score_candidates  # type: ignore[attr-defined]
    orig_after = strengthen._after_recall
    orig_fetchall = reader.execute_fetchall
    orig_flush = mirrors_module.MirrorWriter.flush

    def add(key: str, value: float) -> None:
        acc[key] = acc.get(key, 0.0) + value

    async def candidates(*args: Any, **kwargs: Any) -> Any:
        token = _IN_CANDIDATES.set(True)
        start = time.perf_counter()
        try:
            found = await orig_candidates(*args, **kwargs)
        finally:
            _IN_CANDIDATES.reset(token)
        add("candidates", time.perf_counter() - start)
        add("fetched", len(found))
        return found

    async def fetchall(sql: str, params: Any = None) -> Any:
        start = time.perf_counter()
        rows = await orig_fetchall(sql, params)
        if _IN_CANDIDATES.get():
            add("fetch", time.perf_counter() - start)
            statements.append((sql, list(params or [])))
        return rows

    def row_to_memory(row: Any) -> Any:
        if not _IN_CANDIDATES.get():
            return orig_row(row)
        start = time.perf_counter()
        memory = orig_row(row)
        add("decode", time.perf_counter() - start)
        return memory

    def score(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        scored = orig_score(*args, **kwargs)
        add("score", time.perf_counter() - start)
        return scored

    async def after(*args: Any) -> None:
        start = time.perf_counter()
        await orig_after(*args)
        add("after", time.perf_counter() - start)

    async def flush(self: Any) -> None:
        start = time.perf_counter()
        await orig_flush(self)
        took = time.perf_counter() - start
        bd.flushes += 1
        bd.flush_seconds += took
        bd.flush_max = max(bd.flush_max, took)

    patches = (
        _patched(memories_module, "candidates_fts", candidates),
        # Patched where the candidate reads of memories.py look it up.
        _patched(memories_module, "row_to_memory", row_to_memory),
        _patched(recall_store, "score_candidates", score),
        _patched(strengthen, "_after_recall", after),
        _patched(reader, "execute_fetchall", fetchall),
        _patched(mirrors_module.MirrorWriter, "flush", flush),
    )
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        for n, q in enumerate(queries):
            acc.clear()
            statements.clear()
            start = time.perf_counter()
            await dispatch(_recall_ctx(state, sb.base, q, n))
            bd.total.append(time.perf_counter() - start)
            for key in ("candidates", "fetch", "decode", "score", "after"):
                getattr(bd, key).append(acc.get(key, 0.0))
            bd.fetched.append(int(acc.get("fetched", 0.0)))
            captured.append(list(statements))
            await state.registry.settled()  # the strengthening, written after the reply
        # Let the last coalesced mirror pass run inside the measurement.
        await asyncio.sleep(mirrors_module.COALESCE_SECONDS + 0.2)
        await store.mirrors.flush_now()

    # Replay each recall's candidate statements on a plain sqlite3 connection: the pure SQL time,
    # and how many rows FTS matched in all (the first parameter is the MATCH expression).
    conn = sqlite3.connect(f"file:{os.path.join(sb.home, 'hippo.db')}?mode=ro", uri=True)
    try:
        for recall_statements in captured:
            start = time.perf_counter()
            for sql, params in recall_statements:
                conn.execute(sql, params).fetchall()
            bd.sql.append(time.perf_counter() - start)
            if recall_statements:
                match = recall_statements[0][1][0]
                count = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
                bd.matched.append(conn.execute(count, [match]).fetchone()[0])
    finally:
        conn.close()
    return bd


async def _settle(state: DaemonState) -> None:
    """Wait for the pending coalesced mirror pass, so one phase's writes do not land in the next."""
    for store in state.registry.stores.values():
        await store.mirrors.flush_now()


def _mute_mirrors() -> contextlib.AbstractContextManager[None]:
    def changed(self: Any, ids: Any) -> None:
        return None

    return _patched(mirrors_module.MirrorWriter, "changed", changed)


async def _remember_dispatch(state: DaemonState, cwd: str, items: Items) -> tuple[float, list[float]]:
    """Sequential in-process Remember dispatches: (memories per second over the wall, per-call times)."""
    times: list[float] = []
    wall = time.perf_counter()
    for n, (content, tags) in enumerate(items):
        request = m.Request(id=n, cwd=cwd, body=m.Remember(content=content, tags=tags), global_store=True)
        start = time.perf_counter()
        await dispatch(RequestContext(request, state))
        times.append(time.perf_counter() - start)
    # The coalesced mirror pass belongs to these writes: run it now instead of waiting for its timer.
    for store in state.registry.stores.values():
        await store.mirrors.flush_now()
    return len(items) / (time.perf_counter() - wall), times


def _profiled_text(profiler: cProfile.Profile) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(30)
    return out.getvalue()


async def _in_daemon(sb: Sandbox, queries: Sequence[str], extra: Items, profile: bool) -> InDaemon:
    state = await _open_state(sb)
    try:
        times = await _timed_dispatch(state, sb.base, queries, repeats=2)
        await _settle(state)
        with _mute_mirrors():
            muted = await _timed_dispatch(state, sb.base, queries, repeats=1)
        breakdown = await _instrumented(state, sb, queries)
        half = len(extra) // 2
        rate, remember_times = await _remember_dispatch(state, sb.base, extra[:half])
        with _mute_mirrors():
            muted_rate, _ = await _remember_dispatch(state, sb.base, extra[half:])
        text = ""
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await _timed_dispatch(state, sb.base, queries, repeats=1)
            await _settle(state)
            profiler.disable()
            text = _profiled_text(profiler)
    finally:
        await state.registry.close_all()
    return InDaemon(times, muted, breakdown, rate, remember_times, muted_rate, text)


def in_daemon(sb: Sandbox, queries: Sequence[str], extra: Items, profile: bool) -> InDaemon:
    """Recall p50/p99 over the queries twice, muted-mirror runs, the stage breakdown, remember rates."""
    with sandbox_environ(sb):
        return asyncio.run(_in_daemon(sb, queries, extra, profile))
