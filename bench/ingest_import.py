"""Import bench: `import --markdown` of a generated 50,000-line file into a real daemon, with recall
latency measured while the import runs; and a generated 20,000-line file imported twice, the second
time answered from the file's digest.

A measuring tool, not a test: it prints a table and asserts nothing about time. In a fresh sandbox
(HIPPO_HOME, HIPPO_SOCKET and XDG dirs under one short mkdtemp folder) it starts its own daemon,
seeds the global store with a small import, times recall with nothing else running, then imports the
big file through the raw protocol while a second thread sends recall requests back to back, and
samples the daemon's RSS every 20 ms. The markdown is generated (random pseudo-words: bullets under a
heading every 50 lines), so nearly every line is a new memory.

The re-import figures come from a fresh sandbox: the first import, the same file again (unchanged:
its digest matches, nothing is parsed), then once more through the real `hippoctl` (the median of
five, start-up included, the way a user runs it), the file with one line added (read again; only the
new line is stored) and `--force` (read again in full, every chunk a near-copy).

Usage: python bench/ingest_import.py [--lines 50000] [--reimport-lines 20000] [--reimport-only]
       [--keep] [--tmpdir DIR]
Another script can call run(lines=..., tmpdir=...) and get an ImportFigures back, or
run_reimport(lines=...) for a ReimportFigures.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from harness import (
    BenchError,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    proc_status_kb,
    start_daemon,
    stop_daemon,
    wait_for_mirrors,
)

from hippoctl.protocol import messages as m

SEED_LINES = 2_000
IDLE_RECALLS = 200
VOCABULARY = 6_000
IMPORT_TIMEOUT = 1_800.0
MIRROR_TIMEOUT = 600.0


@dataclass
class ImportFigures:
    lines: int
    imported: int
    wall_s: float
    rate: float  # memories per second, end to end through the socket
    rss_before_mb: float
    rss_peak_mb: float
    idle_p50_ms: float
    idle_p99_ms: float
    busy_p50_ms: float
    busy_p99_ms: float
    busy_max_ms: float
    busy_recalls: int
    mirrors_s: float  # after the reply, until every new memory's markdown mirror is on disk
    after_p99_ms: float  # recall while the mirrors are being written


def _words(rng: random.Random) -> list[str]:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < VOCABULARY:
        size = rng.randint(2, 4)
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(size)))
    return sorted(words)


def make_markdown(path: str, lines: int, seed: int = 11) -> None:
    """A markdown file of `lines` lines: a heading every 50 lines, bullets of 6-14 random words."""
    rng = random.Random(seed)
    words = _words(rng)
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(lines):
            if n % 50 == 0:
                handle.write(f"## Section {n // 50} {rng.choice(words)}\n")
            else:
                handle.write("- " + " ".join(rng.sample(words, rng.randint(6, 14))) + "\n")


def _recalls(
    sb_sock: str, home: str, cwd: str, queries: list[str], stop: threading.Event, out: list[float]
) -> None:
    for query in queries * 1000:
        if stop.is_set():
            return
        started = time.perf_counter()
        reply = call(sb_sock, home, cwd, m.Recall(query=query, limit=5), timeout=120.0)
        out.append((time.perf_counter() - started) * 1000)
        if isinstance(reply, m.Error):
            raise BenchError(f"recall failed: {reply.message}")


def _rss_sampler(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], proc_status_kb(pid, "VmRSS"))
        except OSError:
            return
        time.sleep(0.02)


def _import(sock: str, home: str, cwd: str, path: str, *, force: bool = False) -> m.Result:
    body = m.Import(format="markdown", path=path, force=force)
    reply = call(sock, home, cwd, body, timeout=IMPORT_TIMEOUT)
    if isinstance(reply, m.Error):
        raise BenchError(f"import failed: {reply.message}")
    return reply


@dataclass
class ImportRuns:
    """The same import twice, each in a fresh sandbox: alone (its throughput), then under recall load."""

    quiet: ImportFigures
    busy: ImportFigures


def run(lines: int = 50_000, tmpdir: str = "/tmp", keep: bool = False) -> ImportRuns:
    """Import a generated `lines`-line file alone, then again while recalls run back to back."""
    quiet = run_once(lines, tmpdir, keep, with_recalls=False)
    busy = run_once(lines, tmpdir, keep, with_recalls=True)
    return ImportRuns(quiet=quiet, busy=busy)


def run_once(lines: int, tmpdir: str, keep: bool, *, with_recalls: bool) -> ImportFigures:
    """Start a daemon in a fresh sandbox, import a generated `lines`-line markdown file, measure."""
    sb = make_sandbox(lines, tmpdir)
    proc = start_daemon(sb)
    try:
        seed_path = os.path.join(sb.base, "seed.md")
        big_path = os.path.join(sb.base, "big.md")
        make_markdown(seed_path, SEED_LINES, seed=3)
        make_markdown(big_path, lines)
        seeded = _import(sb.sock, sb.home, sb.base, seed_path)
        seed_count = int(seeded.data["imported"]) if isinstance(seeded.data, dict) else 0
        rng = random.Random(5)
        queries = [" ".join(rng.sample(_words(random.Random(11)), 2)) for _ in range(50)]
        idle: list[float] = []
        _recalls(sb.sock, sb.home, sb.base, queries[:IDLE_RECALLS], threading.Event(), idle)
        while len(idle) < IDLE_RECALLS:
            _recalls(sb.sock, sb.home, sb.base, queries, threading.Event(), idle)
        idle = idle[:IDLE_RECALLS]
        rss_before = proc_status_kb(proc.pid, "VmRSS")
        stop = threading.Event()
        busy: list[float] = []
        peak = [rss_before]
        threads = [threading.Thread(target=_rss_sampler, args=(proc.pid, stop, peak))]
        if with_recalls:
            recaller = threading.Thread(
                target=_recalls, args=(sb.sock, sb.home, sb.base, queries, stop, busy)
            )
            threads.append(recaller)
        log(f"importing {lines} lines")
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        reply = _import(sb.sock, sb.home, sb.base, big_path)
        wall = time.perf_counter() - started
        stop.set()
        for thread in threads:
            thread.join()
        imported = int(reply.data["imported"]) if isinstance(reply.data, dict) else 0
        after: list[float] = []
        stop_after = threading.Event()
        recaller = threading.Thread(
            target=_recalls, args=(sb.sock, sb.home, sb.base, queries, stop_after, after)
        )
        recaller.start()
        mirrors_s, missing = wait_for_mirrors(sb.home, seed_count + imported, timeout=MIRROR_TIMEOUT)
        stop_after.set()
        recaller.join()
        if missing:
            log(f"{missing} mirrors still missing after {MIRROR_TIMEOUT:g} s")
        return ImportFigures(
            lines=lines,
            imported=imported,
            wall_s=wall,
            rate=imported / wall if wall else 0.0,
            rss_before_mb=rss_before / 1024,
            rss_peak_mb=peak[0] / 1024,
            idle_p50_ms=pct(idle, 50),
            idle_p99_ms=pct(idle, 99),
            busy_p50_ms=pct(busy, 50),
            busy_p99_ms=pct(busy, 99),
            busy_max_ms=max(busy) if busy else float("nan"),
            busy_recalls=len(busy),
            mirrors_s=mirrors_s,
            after_p99_ms=pct(after, 99),
        )
    finally:
        stop_daemon(proc)
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)


@dataclass
class ReimportFigures:
    lines: int
    imported: int
    first_s: float
    unchanged_ms: float  # the same file again, through the socket
    unchanged_cli_ms: float  # the same, as `hippoctl import --markdown`: median of CLI_RUNS
    version_cli_ms: float  # `hippoctl version` (a request that does nothing), for comparison
    changed_s: float  # one line added: the whole file is read again, the new line stored
    changed_imported: int
    forced_s: float  # --force on the unchanged file


CLI_RUNS = 5


def _timed(sock: str, home: str, cwd: str, path: str, *, force: bool = False) -> tuple[float, m.Result]:
    started = time.perf_counter()
    reply = _import(sock, home, cwd, path, force=force)
    return time.perf_counter() - started, reply


def _count(reply: m.Result, key: str) -> int:
    return int(reply.data[key]) if isinstance(reply.data, dict) else 0


def _cli_runs(env: dict[str, str], cwd: str, command: list[str]) -> float:
    """The median wall time of CLI_RUNS runs of a hippoctl command, start-up included (ms)."""
    times: list[float] = []
    for _ in range(CLI_RUNS):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def run_reimport(lines: int = 20_000, tmpdir: str = "/tmp", keep: bool = False) -> ReimportFigures:
    """Import a generated `lines`-line markdown file, then again unchanged, changed and forced."""
    sb = make_sandbox(lines, tmpdir)
    proc = start_daemon(sb)
    try:
        path = os.path.join(sb.base, "notes.md")
        make_markdown(path, lines)
        log(f"importing {lines} lines, then again")
        first_s, first = _timed(sb.sock, sb.home, sb.base, path)
        unchanged_s, again = _timed(sb.sock, sb.home, sb.base, path)
        if not isinstance(again.data, dict) or not again.data.get("unchanged"):
            raise BenchError("the second import of the unchanged file was not answered from its digest")
        hippoctl = [sys.executable, "-m", "hippoctl"]
        cli = _cli_runs(sb.env, sb.base, [*hippoctl, "--global", "import", "--markdown", path])
        version = _cli_runs(sb.env, sb.base, [*hippoctl, "version"])
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("- one more line about zebra crossings and the quarterly billing freeze\n")
        changed_s, changed = _timed(sb.sock, sb.home, sb.base, path)
        forced_s, _ = _timed(sb.sock, sb.home, sb.base, path, force=True)
        return ReimportFigures(
            lines=lines,
            imported=_count(first, "imported"),
            first_s=first_s,
            unchanged_ms=unchanged_s * 1000,
            unchanged_cli_ms=cli,
            version_cli_ms=version,
            changed_s=changed_s,
            changed_imported=_count(changed, "imported"),
            forced_s=forced_s,
        )
    finally:
        stop_daemon(proc)
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)


def render_reimport(f: ReimportFigures) -> str:
    rows = [
        ("lines in the file / memories imported", f"{f.lines} / {f.imported}"),
        ("first import: wall time (s)", f"{f.first_s:.2f}"),
        ("second import, unchanged (digest): socket (ms)", f"{f.unchanged_ms:.1f}"),
        (f"second import, unchanged: hippoctl, median of {CLI_RUNS} (ms)", f"{f.unchanged_cli_ms:.0f}"),
        (f"for comparison, hippoctl version, median of {CLI_RUNS} (ms)", f"{f.version_cli_ms:.0f}"),
        ("one line added: wall time (s) / memories imported", f"{f.changed_s:.2f} / {f.changed_imported}"),
        ("--force, unchanged: wall time (s)", f"{f.forced_s:.2f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def render(runs: ImportRuns) -> str:
    q, f = runs.quiet, runs.busy
    rows = [
        ("lines in the file", f"{q.lines}"),
        ("memories imported", f"{q.imported}"),
        ("import alone: wall time (s) / memories/s", f"{q.wall_s:.2f} / {q.rate:.0f}  (target >= 5000)"),
        ("import alone: daemon RSS before / peak (MB)", f"{q.rss_before_mb:.0f} / {q.rss_peak_mb:.0f}"),
        ("recall p50 / p99, no import (ms)", f"{f.idle_p50_ms:.1f} / {f.idle_p99_ms:.1f}"),
        ("with recalls back to back: wall time (s) / memories/s", f"{f.wall_s:.2f} / {f.rate:.0f}"),
        (
            "recall p50 / p99 / max, during import (ms)",
            f"{f.busy_p50_ms:.1f} / {f.busy_p99_ms:.1f} / {f.busy_max_ms:.1f}",
        ),
        ("recalls answered during import", f"{f.busy_recalls}"),
        ("mirrors on disk, after the reply (s)", f"{f.mirrors_s:.1f}"),
        ("recall p99 while mirrors are written (ms)", f"{f.after_p99_ms:.1f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--reimport-lines", type=int, default=20_000)
    parser.add_argument("--reimport-only", action="store_true", help="only the import-twice figures")
    parser.add_argument("--keep", action="store_true", help="keep the sandbox folder")
    parser.add_argument("--tmpdir", default="/tmp")
    args = parser.parse_args(argv)
    try:
        if not args.reimport_only:
            print(render(run(args.lines, args.tmpdir, args.keep)))
            print()
        print(render_reimport(run_reimport(args.reimport_lines, args.tmpdir, args.keep)))
    finally:
        kill_all_daemons()
    return 0


if __name__ == "__main__":
    sys.exit(main())
