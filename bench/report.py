"""The plain-text tables: main table with the targets, CPU diagnostics, in-daemon recall stage breakdown."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec
from clients import COLD_START_RUNS, CONCURRENT_CLIENTS, E2E_RUNS
from harness import MIRROR_WAIT, CpuUse, Disk, pct
from indaemon import Breakdown, InDaemon

MB = 1024 * 1024

# Targets, checked at the largest size run (the issue states them for 100k).
TARGET_P50_MS = 5.0
TARGET_P99_MS = 25.0
TARGET_E2E_RATIO = 2.0
TARGET_REMEMBER_4 = 1000.0
TARGET_RSS_MB = 150.0


@dataclass
class SizeResult:
    size: int
    remember_1: float
    remember_4: float
    fill_seconds: float
    mirror_lag: float
    mirrors_stuck: int
    socket_times: list[float]
    e2e_times: list[float]
    results: list[int]
    rss_kb: int
    hwm_kb: int
    disk: Disk
    db_after_stop: int
    inside: InDaemon
    cpu_4: CpuUse
    cpu_1: CpuUse
    cpu_recall: CpuUse


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def _mb(n: float) -> str:
    return f"{n / MB:.1f}"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _grid(header: list[str], body: list[list[str]], numeric: int) -> str:
    """Plain-text columns: columns 1..numeric flush right, the others flush left."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(line: list[str]) -> str:
        cells = [
            cell.rjust(width) if 1 <= i <= numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *(fmt(line) for line in body)])


def render_table(results: Sequence[SizeResult], cold: dict[str, list[float]]) -> str:
    last = results[-1]
    msgspec_median = statistics.median(cold["import msgspec"])
    e2e_median = statistics.median(last.e2e_times)
    p50, p99 = pct(last.inside.times, 50) * 1e3, pct(last.inside.times, 99) * 1e3

    rows: list[list[str]] = []

    def row(label: str, fn: Callable[[SizeResult], str], target: str = "", verdict: str = "") -> None:
        rows.append([label, *(fn(r) for r in results), target, verdict])

    def mirror_lag(r: SizeResult) -> str:
        if r.mirrors_stuck:
            return f"{r.mirrors_stuck} missing >{MIRROR_WAIT:g}s"
        return f"{r.mirror_lag:.1f}"

    n = CONCURRENT_CLIENTS
    row("remember/s, 1 client (sequential loop)", lambda r: f"{r.remember_1:.0f}")
    row(
        f"remember/s, {n} concurrent clients",
        lambda r: f"{r.remember_4:.0f}",
        f">= {TARGET_REMEMBER_4:.0f}",
        _verdict(last.remember_4 >= TARGET_REMEMBER_4),
    )
    row("fill wall time (s)", lambda r: f"{r.fill_seconds:.1f}")
    row(f"mirrors caught up after the {n}-client fill (s)", mirror_lag)
    row(
        "recall in-daemon p50 (ms)",
        lambda r: _ms(pct(r.inside.times, 50)),
        f"<= {TARGET_P50_MS:g}",
        _verdict(p50 <= TARGET_P50_MS),
    )
    row(
        "recall in-daemon p99 (ms)",
        lambda r: _ms(pct(r.inside.times, 99)),
        f"<= {TARGET_P99_MS:g}",
        _verdict(p99 <= TARGET_P99_MS),
    )
    row("recall via socket p50 (ms, bench client)", lambda r: _ms(pct(r.socket_times, 50)))
    row("recall via socket p99 (ms, bench client)", lambda r: _ms(pct(r.socket_times, 99)))
    row(
        f"`hippoctl recall` process median (ms, {E2E_RUNS} runs)",
        lambda r: _ms(statistics.median(r.e2e_times)),
        f"<= {TARGET_E2E_RATIO:g}x import msgspec",
        _verdict(e2e_median <= TARGET_E2E_RATIO * msgspec_median),
    )
    row("`hippoctl recall` process p99 (ms)", lambda r: _ms(pct(r.e2e_times, 99)))
    for code, values in cold.items():
        median = _ms(statistics.median(values))
        label = f"python -c '{code}' median (ms, {COLD_START_RUNS} runs)"
        rows.append([label, *(median for _ in results), "", ""])
    row(
        "`hippoctl recall` median / import-msgspec median",
        lambda r: f"{statistics.median(r.e2e_times) / msgspec_median:.2f}x",
    )
    row(
        "daemon RSS after fill+recalls (MB)",
        lambda r: _mb(r.rss_kb * 1024),
        f"<= {TARGET_RSS_MB:g}",
        _verdict(last.rss_kb / 1024 <= TARGET_RSS_MB),
    )
    row("daemon peak RSS, VmHWM (MB)", lambda r: _mb(r.hwm_kb * 1024))
    row("hippo.db + -wal + -shm, running (MB)", lambda r: _mb(r.disk.db_bytes + r.disk.wal_bytes))
    row("  of which -wal + -shm (MB)", lambda r: _mb(r.disk.wal_bytes))
    row("hippo.db after stop, checkpointed (MB)", lambda r: _mb(r.db_after_stop))
    row("mirror files (episodic/ etc.)", lambda r: f"{r.disk.mirror_files}")
    row("mirrors apparent size (MB)", lambda r: _mb(r.disk.mirror_bytes))
    row("mirrors allocated on disk (MB)", lambda r: _mb(r.disk.mirror_alloc))
    row("FTS rows matched per query (median)", lambda r: f"{pct(r.inside.breakdown.matched, 50):.0f}")
    row("FTS rows matched per query (p90)", lambda r: f"{pct(r.inside.breakdown.matched, 90):.0f}")
    row("candidates fetched per recall (median)", lambda r: f"{pct(r.inside.breakdown.fetched, 50):.0f}")
    row("results returned+strengthened (median)", lambda r: f"{pct(r.results, 50):.0f}")
    header = ["metric", *(f"{r.size}" for r in results), f"target @{last.size}", "result"]
    return _grid(header, rows, numeric=len(results))


def render_diagnostics(results: Sequence[SizeResult]) -> str:
    """Where remember and recall spend CPU, and the in-daemon numbers with mirror writes muted."""
    rows: list[list[str]] = []

    def row(label: str, fn: Callable[[SizeResult], str]) -> None:
        rows.append([label, *(fn(r) for r in results)])

    def cpu(use: CpuUse) -> str:
        parts = [f"{use.per_op_ms(role):.2f}" for role in ("loop", "writer", "reader", "mirrors", "total")]
        return " / ".join(parts)

    n = CONCURRENT_CLIENTS
    row(f"daemon CPU ms per remember, {n} clients (loop/writer/reader/mirrors/total)", lambda r: cpu(r.cpu_4))
    row("daemon CPU ms per remember, 1 client (same split)", lambda r: cpu(r.cpu_1))
    row(f"bench client CPU ms per remember, {n} clients", lambda r: _ms(r.cpu_4.bench / r.cpu_4.ops))
    row("daemon CPU ms per socket recall (same split)", lambda r: cpu(r.cpu_recall))
    row("remember in-daemon, sequential dispatch (/s)", lambda r: f"{r.inside.remember_rate:.0f}")
    row("  p50 per dispatch (ms)", lambda r: _ms(pct(r.inside.remember_times, 50)))
    row("  same with mirror writes muted (/s)", lambda r: f"{r.inside.remember_muted_rate:.0f}")
    row(
        "recall in-daemon p50 / p99, mirror writes muted (ms)",
        lambda r: f"{_ms(pct(r.inside.muted_times, 50))} / {_ms(pct(r.inside.muted_times, 99))}",
    )
    return _grid(["diagnostic", *(f"{r.size}" for r in results)], rows, numeric=len(results))


def _rest(b: Breakdown) -> list[float]:
    return [t - c - s - a for t, c, s, a in zip(b.total, b.candidates, b.score, b.after, strict=True)]


def render_breakdown(results: Sequence[SizeResult]) -> str:
    """Where one in-daemon recall spends its time (instrumented pass, one run over the queries)."""
    stages: list[tuple[str, Callable[[Breakdown], list[float]]]] = [
        ("total dispatch(ctx)", lambda b: b.total),
        ("candidates_fts (hop + SQL + decode)", lambda b: b.candidates),
        ("  execute_fetchall await (hop + SQL)", lambda b: b.fetch),
        ("  pure SQL (sqlite3 replay)", lambda b: b.sql),
        ("  row_to_memory decode", lambda b: b.decode),
        ("score_candidates (BM25 + multipliers)", lambda b: b.score),
        ("_after_recall (queues the strengthening)", lambda b: b.after),
        ("rest (stores, tokenize, items, render)", _rest),
    ]
    header = ["stage (ms)", *[f"{r.size} p50/mean" for r in results]]
    body: list[list[str]] = []
    for label, pick in stages:
        cells = [label]
        for r in results:
            values = pick(r.inside.breakdown)
            cells.append(f"{_ms(pct(values, 50))} / {_ms(statistics.fmean(values))}")
        body.append(cells)
    flush_row = ["mirror flushes during pass: n, total, max (ms)"]
    for r in results:
        b = r.inside.breakdown
        flush_row.append(f"{b.flushes}, {b.flush_seconds * 1e3:.0f}, {b.flush_max * 1e3:.0f}")
    body.append(flush_row)
    return _grid(header, body, numeric=len(results))


def machine() -> str:
    return (
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, msgspec {msgspec.__version__}"
    )
