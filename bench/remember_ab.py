"""Remember/s over 4 connections on a kept sandbox, old code against new, and daemon CPU per remember.

A measuring tool: it prints one line per run and asserts nothing. Each run starts a daemon from the
given code tree (PYTHONPATH) on the same sandbox, waits until its start-up mirror check is done,
remembers N new corpus memories over the connections, waits for their mirrors, and prints the
rate, the daemon's CPU per remember by thread (from /proc/<pid>/task/*/stat) and the load average
before and after. Runs alternate between the trees, so both see the same machine and a store of
nearly the same size (each run adds its N memories).

Threads are told apart by name: a sitecustomize put on the daemon's PYTHONPATH gives each Python
thread its name as the OS thread name (`loop` is the main thread, `T1sql` the store's aiosqlite
writer, `asyncio_N` the executor threads that write mirrors).

Usage: python bench/remember_ab.py SANDBOX OLD_TREE NEW_TREE [--runs 3] [--n 3000] [--clients 4]
(SANDBOX is a folder harness.make_sandbox made and filled, e.g. by scale.py --keep.)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import sleep_perf
from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import count_mirrors, sandbox_at, start_daemon, stop_daemon, thread_cpu, wait_for_mirrors

_NAMING = """\
import ctypes, threading
_libc = ctypes.CDLL(None)
_start = threading.Thread._bootstrap_inner
def _named(self):
    name = self.name.replace("Thread-", "T").replace(" (_connection_worker_thread)", "sql")
    _libc.prctl(15, name.encode()[:15], 0, 0, 0)
    _start(self)
threading.Thread._bootstrap_inner = _named
"""


def _names(pid: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as handle:
                out[int(tid)] = handle.read().strip()
        except OSError:
            continue
    return out


def run(tree: str, sandbox: str, site: str, n: int, clients: int, seed: int) -> str:
    """One daemon from `tree`, n remembers over `clients` connections; one line of figures."""
    sb = sandbox_at(sandbox)
    sb.env["PYTHONPATH"] = f"{tree}{os.pathsep}{site}"
    items = make_memories(make_corpus(), n, TEXT_SEED + 777_000 + seed)
    proc = start_daemon(sb)
    try:
        sleep_perf._wait_idle(proc.pid)
        stored = count_mirrors(sb.home)
        load_before = os.getloadavg()[0]
        before = thread_cpu(proc.pid)
        rate = remember_concurrent(sb, items, clients)
        wait_for_mirrors(sb.home, stored + n, timeout=120)
        time.sleep(1.5)  # the last mirror pass's stats.json
        after = thread_cpu(proc.pid)
        names = _names(proc.pid)
    finally:
        stop_daemon(proc)
    used = sorted(((after[t] - before.get(t, 0.0), t) for t in after), reverse=True)
    parts = " ".join(
        f"{'loop' if t == proc.pid else names.get(t, '?')}:{d / n * 1e3:.3f}" for d, t in used if d > 0
    )
    total = sum(d for d, _ in used) / n * 1e3
    return (
        f"{os.path.basename(tree.rstrip('/'))}: {rate:.0f}/s, daemon CPU {total:.3f} ms/remember "
        f"[{parts}], load {load_before:.2f} -> {os.getloadavg()[0]:.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sandbox")
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=CONCURRENT_CLIENTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as site:
        with open(os.path.join(site, "sitecustomize.py"), "w", encoding="utf-8") as handle:
            handle.write(_NAMING)
        for index in range(args.runs):
            # Which tree goes first alternates too: the store grows by n with every run.
            order = (args.old, args.new) if index % 2 == 0 else (args.new, args.old)
            for offset, tree in enumerate(order):
                line = run(tree, args.sandbox, site, args.n, args.clients, 10 * index + offset)
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
