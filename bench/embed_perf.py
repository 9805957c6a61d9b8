"""What the embed extra costs: remember throughput, `embed` time, daemon RSS and recall latency.

For each store size: a fresh sandbox whose global store keeps the default `embeddings.enabled:
"auto"`, its own daemon filled through the socket by 4 concurrent clients (new memories are embedded
in the background as they arrive), then `embed` through the socket to cover whatever the background
pass had not reached, 20 recalls through the socket, and the daemon's RSS. After the daemon stops,
recall is timed in this process with `dispatch(ctx)` on the same store, once hybrid and once with
embeddings turned off in the store's config, over the same queries (as bench/perf.py times its
in-daemon recall).

Prints a table and asserts nothing about time. Usage: python bench/embed_perf.py [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import time
from collections.abc import Sequence

from clients import CONCURRENT_CLIENTS, remember_concurrent
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
    sandbox_environ,
    start_daemon,
    stop_daemon,
)
from indaemon import _open_state, _timed_dispatch

from hippoctl.protocol import messages as m

DEFAULT_SIZES = (1_000, 10_000, 100_000)
WARM_RECALLS = 20


async def _recall_times(sb: Sandbox, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    """(hybrid, no-model) recall times on the sandbox's global store."""
    state = await _open_state(sb)
    try:
        store = next(iter(state.registry.stores.values()))
        hybrid = await _timed_dispatch(state, sb.base, queries, repeats=2)
        store.config["embeddings"] = dict(store.config["embeddings"], enabled=False)
        plain = await _timed_dispatch(state, sb.base, queries, repeats=2)
    finally:
        await state.registry.close_all()
    return hybrid, plain


def run_size(size: int, queries: Sequence[str]) -> list[str]:
    sb = make_sandbox(size)
    # make_sandbox turns embeddings off for perf.py; this bench measures them on.
    os.unlink(os.path.join(sb.home, "config.json"))
    try:
        items = make_memories(make_corpus(), size, TEXT_SEED)
        proc = start_daemon(sb)
        try:
            rate = remember_concurrent(sb, items, CONCURRENT_CLIENTS)
            start = time.perf_counter()
            reply = call(sb.sock, sb.home, sb.base, m.Embed(), timeout=3600.0)
            embed_seconds = time.perf_counter() - start
            if isinstance(reply, m.Error):
                raise BenchError(f"embed failed: {reply.code}: {reply.message}")
            stores = reply.data["stores"]
            if stores[0].get("unavailable"):
                raise BenchError(
                    f"embeddings unavailable: {stores[0]['unavailable']} (install hippod[embed])"
                )
            added = stores[0]["added"]
            # Some recalls first, so the RSS holds what recall loads: the model and the int8 matrix
            # of the search by meaning (embed/nearest.py).
            for query in queries[:WARM_RECALLS]:
                done = call(sb.sock, sb.home, sb.base, m.Recall(query=query, limit=10), timeout=60.0)
                if isinstance(done, m.Error):
                    raise BenchError(f"recall failed: {done.code}: {done.message}")
            rss = proc_status_kb(proc.pid, "VmRSS") / 1024
        finally:
            stop_daemon(proc)
        with sandbox_environ(sb):
            hybrid, plain = asyncio.run(_recall_times(sb, queries))
    finally:
        shutil.rmtree(sb.base, ignore_errors=True)
    ms = 1e3
    return [
        f"{size:>8}",
        f"{rate:>8.0f}",
        f"{added:>6}",
        f"{embed_seconds:>6.2f}",
        f"{rss:>6.1f}",
        f"{pct(hybrid, 50) * ms:>7.2f}",
        f"{pct(hybrid, 99) * ms:>7.2f}",
        f"{pct(plain, 50) * ms:>7.2f}",
        f"{pct(plain, 99) * ms:>7.2f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="store sizes, comma-separated"
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes takes whole numbers separated by commas")
    queries = make_queries(make_corpus())
    header = [
        "memories",
        "remember/s",
        "embed: added",
        "s",
        "RSS MB",
        "hybrid p50",
        "p99",
        "no model p50",
        "p99",
    ]
    rows = []
    try:
        for size in sizes:
            log(f"size {size}")
            rows.append(run_size(size, queries))
    except BenchError as exc:
        print(f"embed_perf: {exc}", file=sys.stderr)
        return 1
    finally:
        kill_all_daemons()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(cell.strip() for cell in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
