"""How many candidate pairs a merge join of a store's episodes meets, exact or by MinHash.

Sleep merges episodes whose token sets reach Jaccard 0.35 (sleep.md §5.2). On a first sleep every
episode is compared with every other, so the cost is set by how many pairs *look* close to a filter,
not by how many are. This prints, for the merge candidates of one store:

1. the Jaccard of random pairs, as a histogram: the background similarity every filter has to see
   through (a small vocabulary makes most pairs share a token or two);
2. the exact join (model/pairjoin.py) asked for the pairs of a random share of the episodes: its
   time and the pairs it finds;
3. a MinHash join with bands of r hashes: the pairs that fall in one bucket of one band and the
   time to hash and bucket one band (in one process), measured over a few bands; then the bands it
   needs to find a pair at Jaccard 0.35 with the given chance, their time, and the candidate pairs
   that many bands would verify (at most bands x pairs per band; verifying them is extra).

A measuring tool, not a test: it asserts nothing about time, and reads the store only.

Usage: python bench/join_candidates.py --db <hippo.db> [--pairs 300000] [--probe 0.01] [--bands 4]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from hippod.model import merge, pairjoin
from hippod.model.sleep_plan import Settings, read_pages, scan_settings
from hippod.model.sleep_scan import MERGEABLE, Scan
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

EDGES = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, merge.MERGE_AT, 1.0)
RECALLS = (0.95, 0.99)


def episodes(db: str) -> tuple[pairjoin.TokenSets, npt.NDArray[np.int64]]:
    """The token sets of a store's merge candidates, read as a sleep's first pass reads them."""
    with SnapshotReader(db) as source:
        scan = Scan(scan_settings(source, Settings(now=datetime.now(UTC))))
        read_pages(source, scan, dry_run=True)
    sets = pairjoin.TokenSets(
        np.frombuffer(scan.words.indptr, dtype=np.int64).copy(),
        np.frombuffer(scan.words.tokens, dtype=np.int32).copy(),
    )
    flags = np.frombuffer(scan.flags, dtype=np.uint16)
    return sets, np.flatnonzero(flags & MERGEABLE).astype(np.int64)


def _members(sets: pairjoin.TokenSets, k: int) -> set[int]:
    tokens: list[int] = sets.tokens[sets.indptr[k] : sets.indptr[k + 1]].tolist()
    return set(tokens)


def background(
    sets: pairjoin.TokenSets, rows: npt.NDArray[np.int64], count: int, rng: np.random.Generator
) -> list[str]:
    """Rows of the histogram of the Jaccard of `count` random pairs of `rows`."""
    a, b = rng.choice(rows, count), rng.choice(rows, count)
    values = []
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        x, y = _members(sets, i), _members(sets, j)
        if i != j and (x or y):
            values.append(len(x & y) / len(x | y))
    found = np.histogram(values, bins=EDGES)[0]
    return [
        f"{f'[{lo:.2f}, {hi:.2f})':<14}  {n / len(values) * 100:>8.3f} %"
        for lo, hi, n in zip(EDGES, EDGES[1:], found, strict=False)
    ]


def exact(
    sets: pairjoin.TokenSets, rows: npt.NDArray[np.int64], share: float, rng: np.random.Generator
) -> str:
    """The exact join's time and pairs for a random `share` of `rows` probed."""
    probe = np.zeros(len(sets), dtype=np.bool_)
    probe[rows[rng.random(len(rows)) < share]] = True
    started = time.perf_counter()
    found = pairjoin.similar_pairs(sets, rows, merge.MERGE_AT, probe=probe)
    seconds = time.perf_counter() - started
    probed = int(probe.sum())
    return f"{probed:>9,}  {len(found):>9,}  {seconds:>9.1f}  {seconds / probed * 1000:>12.3f}"


def colliding_pairs(signature: npt.NDArray[np.int64]) -> int:
    """Pairs of rows of `signature` (one band: a row of r hashes per set) that are equal: the pairs
    that band's buckets hold."""
    counts = np.unique(signature, axis=0, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def bands_needed(r: int, chance: float, at: float = merge.MERGE_AT) -> int:
    """The fewest bands of r hashes that put a pair of Jaccard `at` in one bucket with `chance`."""
    return math.ceil(math.log(1 - chance) / math.log(1 - at**r))


def minhash(
    sets: pairjoin.TokenSets, rows: npt.NDArray[np.int64], r: int, bands: int, rng: np.random.Generator
) -> str:
    """Pairs sharing a bucket in one band of r hashes (the mean of `bands` bands), and what a join
    finding a pair at Jaccard 0.35 with each chance in RECALLS would verify."""
    vocabulary = int(sets.tokens.max()) + 1
    sizes = sets.indptr[rows + 1] - sets.indptr[rows]
    rows, sizes = rows[sizes > 0], sizes[sizes > 0]
    starts = np.zeros(len(rows), dtype=np.int64)  # where each row starts in `tokens`
    np.cumsum(sizes[:-1], out=starts[1:])
    tokens = sets.tokens[np.repeat(sets.indptr[rows] - starts, sizes) + np.arange(int(sizes.sum()))]
    colliding = []
    started = time.perf_counter()
    for _ in range(bands):
        signature = np.empty((len(rows), r), dtype=np.int64)
        for h in range(r):
            value = rng.integers(0, 1 << 62, size=vocabulary, dtype=np.int64)
            signature[:, h] = np.minimum.reduceat(value[tokens], starts)
        colliding.append(colliding_pairs(signature))
    seconds = (time.perf_counter() - started) / bands  # hashing and bucketing one band
    per_band = sum(colliding) / len(colliding)
    cells = [f"{r:>3}  {per_band:>14,.0f}  {seconds:>10.2f}"]
    for chance in RECALLS:
        needed = bands_needed(r, chance)
        cells.append(f"{needed:>6}  {needed * seconds:>9,.0f}  {needed * per_band:>16,.0f}")
    return "  ".join(cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", required=True, help="a store's hippo.db (read only)")
    parser.add_argument("--pairs", type=int, default=300_000, help="random pairs for the histogram")
    parser.add_argument("--probe", type=float, default=0.01, help="share of episodes the exact join probes")
    parser.add_argument("--bands", type=int, default=4, help="bands measured per MinHash width")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if not 0 < args.probe <= 1:
        parser.error("--probe must be in (0, 1]")
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    sets, rows = episodes(args.db)
    sizes = sets.indptr[rows + 1] - sets.indptr[rows]
    vocabulary = len(np.unique(sets.tokens))
    print(
        f"{len(rows):,} merge candidates, {vocabulary:,} distinct tokens, {sizes.mean():.1f} tokens "
        f"each on average (read in {time.perf_counter() - started:.1f} s)\n"
    )
    print(f"{'Jaccard':<14}  {'of pairs':>10}")
    print("\n".join(background(sets, rows, args.pairs, rng)))
    print(f"\n{'probed':>9}  {'pairs':>9}  {'seconds':>9}  {'ms per probe':>12}   (exact join)")
    print(exact(sets, rows, args.probe, rng))
    header = f"\n{'r':>3}  {'pairs per band':>14}  {'s per band':>10}"
    for chance in RECALLS:
        header += f"  {'bands':>6}  {'seconds':>9}  {f'verified at {chance:.0%}':>16}"
    print(header + "   (MinHash)")
    for r in (2, 3, 4, 5):
        print(minhash(sets, rows, r, args.bands, rng))
    return 0


if __name__ == "__main__":
    sys.exit(main())
