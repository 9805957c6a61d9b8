"""How long the daemon's background work keeps its event loop waiting for the GIL.

A measuring tool, not a test: it prints a table and asserts nothing. A call into C that holds the
GIL (a sort of a list, a numpy reduction, `pickle.loads`) holds the event loop for as long, though
it runs in a worker thread: on a loaded machine each millisecond of it becomes many, and a
heartbeat that should go out every second waits behind it. Each case runs in a thread while a side
thread sleeps 0.5 ms in a loop and records how late it gets the GIL back, as the event loop would.
Python's switch interval (5 ms) is the floor of that wait while the worker runs plain Python.

The cases:
- the near-copy index hashing a batch of memories (store/sqlite/near_index.py), of corpus texts
  and of four corpus texts joined;
- a sleep's plan read back from its planning process (base/child.py `unpickle`), against one
  `pickle.loads` of the same bytes, for a plan of `--plan-rows` (id, number) pairs;
- a JSON export of `--export-records` records read for an import (ingest/export_doc.py `_decode`),
  against one `msgspec.json.decode` of the whole.

Usage: python bench/gil_holds.py [--batch 5000] [--plan-rows 1000000] [--export-records 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import gc
import pickle
import random
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec
from corpus import TEXT_SEED, make_corpus, make_memories

from hippod.base import child
from hippod.ingest import export_doc
from hippod.store.sqlite import near_index

TICK = 0.0005


def waits_while(work: Callable[[], object]) -> tuple[float, list[float]]:
    """Run `work` in a thread; (its wall time, every lateness of the side thread's ticks meanwhile).
    What `work` returns is kept until both threads are done, so freeing it is not measured."""
    late: list[float] = []
    kept: list[object] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            began = time.perf_counter()
            time.sleep(TICK)
            late.append(time.perf_counter() - began - TICK)

    side = threading.Thread(target=tick)
    side.start()
    began = time.perf_counter()
    worker = threading.Thread(target=lambda: kept.append(work()))
    worker.start()
    worker.join()
    took = time.perf_counter() - began
    done.set()
    side.join()
    return took, late


def _rows(texts: list[str]) -> list[tuple[int, str, str]]:
    return [(i + 1, "default", text) for i, text in enumerate(texts)]


def _loads(data: bytes) -> Any:
    """One pickle.loads, with the collector off as child.unpickle has it."""
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        gc.enable()


def _measure(name: str, work: Callable[[], object], repeat: int) -> None:
    times: list[float] = []
    worst: list[float] = []
    waits: list[float] = []
    for _ in range(repeat):
        took, late = waits_while(work)
        times.append(took)
        waits.extend(late)
        worst.append(max(late, default=0.0))
    waits.sort()
    p99 = waits[int(len(waits) * 0.99)] if waits else 0.0
    print(
        f"| {name} | {statistics.median(times) * 1e3:.0f} "
        f"| {statistics.median(worst) * 1e3:.1f} | {max(worst) * 1e3:.1f} | {p99 * 1e3:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=near_index.BATCH)
    parser.add_argument("--plan-rows", type=int, default=1_000_000)
    parser.add_argument("--export-records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    corpus = make_corpus()
    short = _rows([text for text, _ in make_memories(corpus, args.batch, TEXT_SEED)])
    rng = random.Random(TEXT_SEED)
    joined = [
        " ".join(text for text, _ in make_memories(corpus, 4, rng.randrange(1 << 30)))
        for _ in range(args.batch)
    ]
    long = _rows(joined)
    plan = pickle.dumps(
        [(f"m-{rng.getrandbits(64):016x}", rng.random()) for _ in range(args.plan_rows)],
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    records = [
        {"content": text, "tags": tags, "layer": "episodic"}
        for text, tags in make_memories(corpus, args.export_records, TEXT_SEED)
    ]
    export = msgspec.json.encode({"hippod_version": "bench", "memories": records})
    del records
    near_index._keys(short[:100])  # numpy and the tokenizer loaded before timing
    # As the daemon does after starting (daemon/gc_policy.py): what is built before is not scanned by
    # every later collection, so the waits below are the work's own.
    gc.collect()
    gc.freeze()
    size = len(plan) / 1e6
    print(
        f"{args.repeat} runs each; a hashing batch of {args.batch:,} memories; a plan of {size:.0f} MB; "
        f"an export of {len(export) / 1e6:.0f} MB"
    )
    print()
    print("| work in a thread | took (ms, median) | longest wait (ms), median run | worst | p99 |")
    print("|---|---|---|---|---|")
    _measure("near-copy hashing, corpus texts", functools.partial(near_index._keys, short), args.repeat)
    _measure("near-copy hashing, four texts joined", functools.partial(near_index._keys, long), args.repeat)
    planned = f"plan of {args.plan_rows:,} pairs"
    _measure(f"{planned}, pickle.loads", functools.partial(_loads, plan), args.repeat)
    _measure(f"{planned}, child.unpickle", functools.partial(child.unpickle, plan), args.repeat)
    exported = f"export of {args.export_records:,} records"
    _measure(f"{exported}, one decode", functools.partial(msgspec.json.decode, export), args.repeat)
    _measure(f"{exported}, export_doc._decode", functools.partial(export_doc._decode, export), args.repeat)


if __name__ == "__main__":
    main()
