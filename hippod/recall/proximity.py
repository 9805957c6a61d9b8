"""Recall's proximity share: query words that stand together in a memory, as they stand in the query.

BM25 counts each term alone, so a long memory that holds "guitar" in one place and "amp" in another
ranks with one that says "the new guitar amp". The proximity share adds to a candidate's BM25, for
each pair of neighbouring query terms, the pair's weight (the mean IDF of its two terms) times a
saturated count of the places where the two stand within ORDERED_GAP terms in the query's order
(ORDERED_WEIGHT) and of those where they stand within WINDOW terms either way (WINDOW_WEIGHT).
Saturated as tf is in BM25: n / (n + 1).
This is the sequential dependence model's ordered and unordered windows, in BM25's units.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence

# The second term at most this many terms after the first: one word may stand between ("guitar amp",
# "guitar and amp"), as the index keeps the function words a query drops.
ORDERED_GAP = 2
ORDERED_WEIGHT = 0.5
WINDOW = 8
WINDOW_WEIGHT = 0.25


def query_pairs(query: Sequence[str]) -> list[tuple[str, str]]:
    """The distinct pairs of query terms that stand next to each other in the query, in order."""
    return list(dict.fromkeys((a, b) for a, b in itertools.pairwise(query) if a != b))


def _saturated(count: int) -> float:
    return count / (count + 1.0)


def _positions(doc: Sequence[str], term: str) -> list[int]:
    """Where `term` stands in `doc` (list.index runs in C; a memory holds a query term a few times)."""
    found: list[int] = []
    at = -1
    try:
        while True:
            at = doc.index(term, at + 1)
            found.append(at)
    except ValueError:
        return found


def proximity(
    pairs: Sequence[tuple[str, str]], doc: Sequence[str], held: Mapping[str, float], idfs: Mapping[str, float]
) -> float:
    """One candidate's proximity share; `held` is keyed by the query terms it holds."""
    total = 0.0
    where: dict[str, list[int]] = {}
    for a, b in pairs:
        if a not in held or b not in held:
            continue
        first = where.get(a) or where.setdefault(a, _positions(doc, a))
        second = where.get(b) or where.setdefault(b, _positions(doc, b))
        # Both lists are sorted: count the second term's places near each of the first's by
        # bisection, so a long memory that repeats both terms costs n log n, not n x m.
        ordered = near = 0
        for i in first:
            ordered += bisect_right(second, i + ORDERED_GAP) - bisect_right(second, i)
            near += bisect_right(second, i + WINDOW) - bisect_left(second, i - WINDOW)
        if near:
            weight = (idfs[a] + idfs[b]) / 2.0
            total += weight * (_saturated(ordered) * ORDERED_WEIGHT + _saturated(near) * WINDOW_WEIGHT)
    return total
