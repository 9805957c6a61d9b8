"""Import into a large store: a store of N corpus memories written straight into its database, then a
`import --markdown` of new corpus lines into a copy of it, with recalls sent back to back meanwhile.

A measuring tool, not a test: it prints figures and asserts nothing about time. Filling a store of
100,000 through `import` or `remember` takes many minutes; writing the rows directly (the same
values, digests and index terms the daemon writes; no mirror files, which no import reads) takes
seconds, and one filled store serves any number of runs: each run copies it first, so two code
versions import into the same store.

Usage: python bench/import_scale.py build --size 100000 --tmpdir /work/b/imp
       python bench/import_scale.py settle --store <sandbox>
       python bench/import_scale.py measure --store <sandbox> [--lines 10000] [--no-recalls]
`settle` runs the daemon on the built store itself until it has written every memory's mirror and
hashed every memory for the near-copy index, as any daemon does after opening a store it did not
write; `measure` copies the database and hard-links the mirrors (the daemon replaces a mirror file,
never writes into one), so a million mirrors are written once, not once a run.
`measure` runs the daemon of whichever hippod `python -m hippod` imports (PYTHONPATH picks another).
Before it imports, it waits for what the daemon does after opening a store built this way: write
every memory's mirror and hash every memory for the near-copy index, then check every mirror file
against its row until the daemon is idle (each timed, and left out of the import's figures). The
daemon's peak RSS during the import is its VmHWM, reset just before.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import datetime

import ingest_import
import scale
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    proc_status_kb,
    sandbox_at,
    start_daemon,
    stop_daemon,
    wait_for_mirrors,
)

from hippoctl.protocol import messages as m
from hippod.base import clock
from hippod.ingest.export_doc import Record, record_memory
from hippod.mirrors.mirror_heal import MEMORY_DIRS
from hippod.model.digest import content_digest
from hippod.model.memory import COLUMNS
from hippod.model.terms import fts_columns
from hippod.store.memory_codec import memory_values

BATCH = 10_000
# Not a seed the fill uses (it takes TEXT_SEED + each multiple of BATCH up to its size): the imported
# lines are new at any size.
IMPORT_SEED = TEXT_SEED + 12_345_671


def _row(text: str, tags: list[str], n: int, now: datetime) -> list[object]:
    """The row the daemon would write for a new memory of this text (made as `import --json` does)."""
    memory = record_memory(
        Record(content=text, tags=tags, source="import:markdown"),
        memory_id=f"m{n:09d}",
        tenant="default",
        now=now,
        default_half_life=365.0,
        project="",
        original=False,
    )
    return [*memory_values(memory), content_digest(text), *fts_columns(text, tags)]


def build(size: int, tmpdir: str) -> str:
    """A sandbox whose global store holds `size` corpus memories; returns its folder."""
    sb = make_sandbox(size, tmpdir)
    proc = start_daemon(sb)
    try:
        # One remember makes the global store and its schema the way the daemon makes them.
        reply = call(sb.sock, sb.home, sb.base, m.Remember(content="the store of the import bench"))
        if isinstance(reply, m.Error):
            raise BenchError(reply.message)
    finally:
        stop_daemon(proc)
    corpus = make_corpus()
    now = clock.now()
    insert = (
        f"INSERT INTO memories ({', '.join(COLUMNS)}, content_digest, fts_content, fts_tags) "
        f"VALUES ({', '.join('?' * (len(COLUMNS) + 3))})"
    )
    conn = sqlite3.connect(os.path.join(sb.home, "hippo.db"), isolation_level=None)
    try:
        for start in range(0, size, BATCH):
            items = make_memories(corpus, min(BATCH, size - start), TEXT_SEED + start)
            conn.execute("BEGIN")
            conn.executemany(insert, [_row(t, tags, start + i, now) for i, (t, tags) in enumerate(items)])
            conn.execute("COMMIT")
            log(f"stored {start + len(items)}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return sb.base


def measure(store: str, lines: int, recalls: bool) -> str:
    """Import `lines` new corpus lines into a copy of the sandbox `store`; a line of figures."""
    copy = tempfile.mkdtemp(prefix="ic", dir=os.path.dirname(store))
    os.rmdir(copy)
    shutil.copytree(store, copy, symlinks=True, copy_function=_link_mirrors)
    sb = sandbox_at(copy)
    for leftover in ("d.sock",):
        if os.path.exists(os.path.join(copy, leftover)):
            os.unlink(os.path.join(copy, leftover))
    corpus = make_corpus()
    queries = make_queries(corpus)
    path = os.path.join(copy, "new.md")
    scale.write_markdown(path, make_memories(corpus, lines, IMPORT_SEED), 900_000)
    proc = start_daemon(sb)
    try:
        # Warm the store (open, first recalls) so the import's figures are the import's.
        for query in queries[:20]:
            call(sb.sock, sb.home, sb.base, m.Recall(query=query, limit=5))
        settled = _settle(sb.home, proc.pid)
        stop = threading.Event()
        during: list[float] = []
        recaller = threading.Thread(
            target=ingest_import._recalls, args=(sb.sock, sb.home, sb.base, queries, stop, during)
        )
        if recalls:
            recaller.start()
        cpu = _process_cpu(proc.pid, reaped=True)
        _reset_peak(proc.pid)
        started = time.perf_counter()
        reply = ingest_import._import(sb.sock, sb.home, sb.base, path)
        wall = time.perf_counter() - started
        cpu = _process_cpu(proc.pid, reaped=True) - cpu
        peak = proc_status_kb(proc.pid, "VmHWM") / 1024
        stop.set()
        if recalls:
            recaller.join()
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        imported = int(reply.data["imported"]) if isinstance(reply.data, dict) else 0
    finally:
        stop_daemon(proc)
        phases = _import_log(copy)
        shutil.rmtree(copy, ignore_errors=True)
    figures = f"{lines} lines, {imported} new in {wall:.2f} s: {imported / wall:.0f}/s"
    figures += f", CPU {cpu:.1f} s (the daemon and its planner), daemon peak RSS {peak:.0f} MB"
    if recalls:
        figures += f"; recall p50/p99/max {pct(during, 50):.1f}/{pct(during, 99):.1f}/{max(during):.1f} ms"
        figures += f" ({len(during)} recalls)"
    return f"{figures}; load {load}\n{settled}\n{phases}"


def _link_mirrors(source: str, target: str) -> object:
    """Copy the database and the rest; hard-link a store's Markdown mirrors."""
    if source.endswith(".md") and os.path.basename(os.path.dirname(source)) in MEMORY_DIRS:
        os.link(source, target)
        return target
    return shutil.copy2(source, target)


def settle(store: str) -> str:
    """Run the daemon on the built store until its mirrors and near-copy keys are all written."""
    sb = sandbox_at(store)
    proc = start_daemon(sb)
    try:
        return settle_running(sb, proc.pid)
    finally:
        stop_daemon(proc)


def settle_running(sb: Sandbox, pid: int) -> str:
    """Open the store of a running daemon and wait until it has mirrored and hashed every memory."""
    call(sb.sock, sb.home, sb.base, m.Recall(query="open the store", limit=1))
    return _settle(sb.home, pid)


def _settle(home: str, pid: int) -> str:
    """Wait until the daemon has mirrored and hashed every memory of the store; a line of figures."""
    db = os.path.join(home, "hippo.db")
    started = time.perf_counter()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        (count,) = conn.execute("SELECT count(*) FROM memories").fetchone()
        mirrored, missing = wait_for_mirrors(home, count, timeout=3600)
        # A daemon from before the near-copy index (PYTHONPATH) has no waiting list.
        with contextlib.suppress(sqlite3.OperationalError):
            while conn.execute("SELECT count(*) FROM near_pending").fetchone()[0]:
                time.sleep(0.5)
    hashed = time.perf_counter() - started
    idle = _wait_idle(pid) - started
    rss = proc_status_kb(pid, "VmRSS") / 1024
    return (
        f"after the open: mirrors written in {mirrored:.1f} s ({missing} missing), near-copy keys "
        f"in {hashed:.1f} s, the daemon idle after {idle:.1f} s (from the open's first recall), "
        f"daemon RSS {rss:.0f} MB"
    )


# The daemon counts as idle once it and its children (a sleep's planner) use less than this share of
# one core over IDLE_WINDOW seconds; past IDLE_LIMIT seconds the bench goes on, and says so.
IDLE_SHARE = 0.05
IDLE_WINDOW = 3.0
IDLE_LIMIT = 3600.0


def _wait_idle(pid: int) -> float:
    """Wait until the daemon has finished what opening a store starts besides mirrors and keys (the
    mirror check reads every mirror file back); the perf_counter then. Without this the import
    shares the machine with the check, and its figures are not the import's own."""
    deadline = time.perf_counter() + IDLE_LIMIT
    while True:
        before, started = _tree_cpu(pid), time.perf_counter()
        time.sleep(IDLE_WINDOW)
        if _tree_cpu(pid) - before < IDLE_SHARE * (time.perf_counter() - started):
            return started
        if started > deadline:
            log(f"the daemon was still busy after {IDLE_LIMIT:.0f} s; importing anyway")
            return started


def _tree_cpu(pid: int) -> float:
    """CPU seconds of the process and of its living children."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            children = [int(child) for child in handle.read().split()]
    except OSError:
        children = []
    total = _process_cpu(pid)
    for child in children:
        with contextlib.suppress(OSError):
            total += _process_cpu(child)
    return total


def _reset_peak(pid: int) -> None:
    # "5" resets the process's peak resident set size (Linux >= 4.0).
    with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")


def _process_cpu(pid: int, *, reaped: bool = False) -> float:
    """CPU seconds (user + system) the process has used, all its threads together; with `reaped`,
    also its children that have ended and been waited for (a large import's planning process)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    used = int(fields[11]) + int(fields[12])
    if reaped:
        used += int(fields[13]) + int(fields[14])
    return used / os.sysconf("SC_CLK_TCK")


def _import_log(base: str) -> str:
    """The daemon's own lines on the import (its read, plan and write times, and its planning
    process's peak when it had one), from hippod.log."""
    for folder, _, files in os.walk(base):
        if "hippod.log" in files:
            with open(os.path.join(folder, "hippod.log"), encoding="utf-8") as handle:
                lines = [line.strip() for line in handle if "import of" in line or "import's planner" in line]
            return "\n".join(lines[-2:])
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="fill a new sandbox's store directly")
    make.add_argument("--size", type=int, default=100_000)
    make.add_argument("--tmpdir", default="/tmp")
    calm = sub.add_parser("settle", help="let a daemon mirror and hash a built store")
    calm.add_argument("--store", required=True, help="the sandbox folder `build` printed")
    run = sub.add_parser("measure", help="import into a copy of a built store")
    run.add_argument("--store", required=True, help="the sandbox folder `build` printed")
    run.add_argument("--lines", type=int, default=10_000)
    run.add_argument("--no-recalls", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(build(args.size, args.tmpdir))
        elif args.command == "settle":
            print(settle(args.store))
        else:
            print(measure(args.store, args.lines, not args.no_recalls))
    finally:
        kill_all_daemons()
    return 0


if __name__ == "__main__":
    sys.exit(main())
