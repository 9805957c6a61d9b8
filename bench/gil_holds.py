"""How long the daemon's background hashing keeps the event loop waiting for the GIL.

A measuring tool, not a test: it prints a table and asserts nothing. The near-copy index hashes a
batch of memories in a worker thread (store/sqlite/near_index.py). A call into C that holds the GIL
(a sort of a list, a numpy reduction) holds the event loop for as long, however short its await:
on a loaded machine each millisecond of it becomes many, and a heartbeat that should go out every
second waits behind it. A side thread here sleeps 0.5 ms in a loop and records how late it gets the
GIL back while the batch is hashed, as the event loop would be; each case runs `--repeat` times.

Usage: python bench/gil_holds.py [--batch 5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import threading
import time
from collections.abc import Callable

from corpus import TEXT_SEED, make_corpus, make_memories

from hippod.store.sqlite import near_index

TICK = 0.0005


def waits_while(work: Callable[[], object]) -> tuple[float, list[float]]:
    """Run `work` in a thread; (its wall time, every lateness of the side thread's ticks meanwhile)."""
    late: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            began = time.perf_counter()
            time.sleep(TICK)
            late.append(time.perf_counter() - began - TICK)

    side = threading.Thread(target=tick)
    side.start()
    began = time.perf_counter()
    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    took = time.perf_counter() - began
    done.set()
    side.join()
    return took, late


def _rows(texts: list[str]) -> list[tuple[int, str, str]]:
    return [(i + 1, "default", text) for i, text in enumerate(texts)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=near_index.BATCH)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    corpus = make_corpus()
    short = _rows([text for text, _ in make_memories(corpus, args.batch, TEXT_SEED)])
    rng = random.Random(TEXT_SEED)
    long = _rows(
        [
            " ".join(text for text, _ in make_memories(corpus, 4, rng.randrange(1 << 30)))
            for _ in range(args.batch)
        ]
    )
    # As the daemon does after starting (daemon/gc_policy.py): what is built before is not scanned by
    # every later collection, so the waits below are the hashing's own.
    gc.collect()
    gc.freeze()
    print(
        f"near-copy hashing of a batch of {args.batch:,} memories in a worker thread, {args.repeat} runs each"
    )
    print()
    print("| memories | words (mean) | batch (ms, median) | longest wait (ms), median run | worst | p99 |")
    print("|---|---|---|---|---|---|")
    for name, rows in (("corpus texts", short), ("four corpus texts joined", long)):
        near_index._keys(rows[:100])  # numpy and the tokenizer loaded before timing
        times: list[float] = []
        worst: list[float] = []
        waits: list[float] = []
        for _ in range(args.repeat):
            took, late = waits_while(functools.partial(near_index._keys, rows))
            times.append(took)
            waits.extend(late)
            worst.append(max(late, default=0.0))
        waits.sort()
        words = statistics.mean(len(text.split()) for _, _, text in rows)
        p99 = waits[int(len(waits) * 0.99)] if waits else 0.0
        print(
            f"| {name} | {words:.0f} | {statistics.median(times) * 1e3:.0f} "
            f"| {statistics.median(worst) * 1e3:.1f} | {max(worst) * 1e3:.1f} | {p99 * 1e3:.1f} |"
        )


if __name__ == "__main__":
    main()
