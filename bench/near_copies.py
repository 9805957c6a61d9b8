"""Near-copy checks of an import: the near-copy index (MinHash bands, store/sqlite/near_lookup.py)
against the full-text probe it replaced, on the same store and the same chunks.

A measuring tool, not a test: it prints a table and asserts nothing. It copies a store built by
`import_scale.py build`, migrates it and hashes its memories, then makes 10,000 chunks: half are
edits of stored memories (words swapped for others, so their overlap with the original spreads
from 0.5 to 1), half new corpus texts. Each chunk is checked both ways, in this process, and the
verdicts are compared by the chunk's overlap with the memory it was made from.

Usage: python bench/near_copies.py --store <sandbox> [--chunks 10000] [--tmpdir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

from corpus import TEXT_SEED, make_corpus, make_memories

from hippod.ingest.import_core import DUPLICATE_ABOVE
from hippod.model.tokenize import tokenize
from hippod.store.sqlite import near_index
from hippod.store.sqlite.db import Database
from hippod.store.sqlite.import_probe import StoredProbe

BUCKETS = [(0.0, 0.6), (0.6, 0.7), (0.7, 0.75), (0.75, 0.8), (0.8, 0.9), (0.9, 1.01)]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _chunks(db: str, count: int) -> tuple[list[frozenset[str]], list[float | None]]:
    """Token sets of the chunks, and each edit's overlap with its original (None: a new text)."""
    rng = random.Random(TEXT_SEED + 7)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        (top,) = conn.execute("SELECT max(rowid) FROM memories").fetchone()
        picked = rng.sample(range(1, top + 1), count // 2)
        marks = ", ".join("?" * len(picked))
        originals = [
            str(r[0]) for r in conn.execute(f"SELECT content FROM memories WHERE rowid IN ({marks})", picked)
        ]
    corpus = make_corpus()
    words = [w for text, _ in make_memories(corpus, 2000, TEXT_SEED + 9) for w in text.split()]
    sets: list[frozenset[str]] = []
    overlaps: list[float | None] = []
    for text in originals:
        edited = text.split()
        for _ in range(rng.randint(0, max(1, len(edited) // 4))):
            edited[rng.randrange(len(edited))] = rng.choice(words)
        x, y = frozenset(tokenize(" ".join(edited))), frozenset(tokenize(text))
        sets.append(x)
        overlaps.append(_jaccard(x, y))
    for text, _ in make_memories(corpus, count - len(sets), TEXT_SEED + 123_457):
        sets.append(frozenset(tokenize(text)))
        overlaps.append(None)
    return sets, overlaps


async def _index(path: str) -> tuple[int, int]:
    """Open the store as the daemon does (migrating it), hash its memories and merge the levels."""
    db, _ = await Database.open(path)
    try:
        return await near_index.catch_up(db), await near_index.compact(db)
    finally:
        await db.close()


def _check(db: str, sets: list[frozenset[str]], index: bool) -> tuple[set[int], float]:
    started = time.perf_counter()
    with StoredProbe(db, "default", DUPLICATE_ABOVE) as probe:
        if not index:
            probe._near = None  # the full-text probe
        elif probe._near is None:
            raise SystemExit("the store's near-copy index is not ready")
        found = probe.duplicates(sets, list(range(len(sets))))
    return found, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", required=True)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--tmpdir", default=None)
    args = parser.parse_args(argv)
    source = glob.glob(os.path.join(args.store, "**", "hippo.db"), recursive=True)[0]
    folder = tempfile.mkdtemp(prefix="near", dir=args.tmpdir)
    try:
        db = os.path.join(folder, "hippo.db")
        shutil.copy(source, db)
        started = time.perf_counter()
        hashed, merged = asyncio.run(_index(db))
        print(f"hashed {hashed:,} memories in {time.perf_counter() - started:.1f} s ({merged:,} keys merged)")
        sets, overlaps = _chunks(db, args.chunks)
        by_index, index_s = _check(db, sets, index=True)
        by_words, words_s = _check(db, sets, index=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{len(sets):,} chunks: the index in {index_s:.2f} s, the full-text probe in {words_s:.2f} s\n")
    print("| chunks | count | refused, full-text probe | refused, index | refused by one only |")
    print("|---|---|---|---|---|")
    rows = [("new texts", [i for i, o in enumerate(overlaps) if o is None])]
    for low, high in BUCKETS:
        label = f"edits, overlap in [{low:.2f}, {min(high, 1.0):.2f}{']' if high > 1 else ')'}"
        rows.append((label, [i for i, o in enumerate(overlaps) if o is not None and low <= o < high]))
    for label, members in rows:
        words = sum(i in by_words for i in members)
        index = sum(i in by_index for i in members)
        differ = sum((i in by_words) != (i in by_index) for i in members)
        print(f"| {label} | {len(members):,} | {words:,} | {index:,} | {differ:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
