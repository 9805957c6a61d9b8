"""Finding pairs of token sets whose Jaccard can reach a threshold without comparing every pair.

Prefix filtering (the AllPairs join): order tokens rarest first over the whole collection; two sets
with Jaccard >= t always share a token among the first |x| - ceil(t·|x|) + 1 tokens of each. Only
sets sharing such a prefix token are candidates, and the caller checks each candidate exactly. The
index is filled as the caller walks its items in order, so each pair is looked at once, from its
later side (import's duplicate check). Sleep's joins are in pairjoin.py; `exact_pairs` is their reference.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

# A set with no tokens overlaps 1.0 with another empty set and 0 with anything else (recall.md §3);
# giving every empty set this one token makes the general rule produce exactly that.
EMPTY_TOKEN = "\x00empty"


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard of two token sets; both empty -> 1.0."""
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def _prefix_length(size: int, threshold: float) -> int:
    # The small epsilon keeps 0.35 × 20 = 7.000000000000001 from rounding the prefix too short.
    return size - math.ceil(threshold * size - 1e-9) + 1


class SetIndex:
    """An index over token sets for candidate pairs with Jaccard >= threshold.

    `add(i)` puts set i in the index; `matches(i)` lists the indexed sets that reach the threshold
    with set i.
    """

    def __init__(self, sets: Sequence[frozenset[str]], threshold: float) -> None:
        self.sets = [s if s else frozenset({EMPTY_TOKEN}) for s in sets]
        self.threshold = threshold
        frequency: Counter[str] = Counter()
        for tokens in self.sets:
            frequency.update(tokens)
        rank = {t: (n, t) for t, n in frequency.items()}
        self.prefixes = [
            sorted(tokens, key=rank.__getitem__)[: _prefix_length(len(tokens), threshold)]
            for tokens in self.sets
        ]
        self.postings: dict[str, list[int]] = {}

    def add(self, index: int) -> None:
        for token in self.prefixes[index]:
            self.postings.setdefault(token, []).append(index)

    def matches(self, index: int, *, strict: bool = False) -> list[int]:
        """Indexed sets whose Jaccard with set `index` is >= the threshold (> with strict), ascending.

        The candidates are cut by size first, then each overlap is one intersection in C: on an
        import's chunks a third of the candidates are left, about twenty a chunk.
        """
        x = self.sets[index]
        lists = [self.postings[t] for t in self.prefixes[index] if t in self.postings]
        if not lists:
            return []
        sets, size, t = self.sets, len(x), self.threshold
        # Jaccard >= t needs t·|x| <= |y| <= |x|/t, and an overlap of at least t·|x|.
        least, most = t * size - 1e-9, size / t + 1e-9 if t > 0 else math.inf
        candidates = {i for i in set().union(*lists) if least <= len(sets[i]) <= most}
        candidates.discard(index)
        found: list[int] = []
        for i in candidates:
            shared = len(x & sets[i])
            if shared >= least:
                score = shared / (size + len(sets[i]) - shared)
                if score > t or (score == t and not strict):
                    found.append(i)
        found.sort()
        return found


def exact_pairs(
    sets: Sequence[frozenset[str]], threshold: float, *, strict: bool = False
) -> set[tuple[int, int]]:
    """Every pair (i, j), i < j, with Jaccard >= threshold (> with strict), by the prefix-filter walk.

    The reference the sleep join (pairjoin.py) is checked against, in the tests and the sleep bench.
    """
    index = SetIndex(sets, threshold)
    found: set[tuple[int, int]] = set()
    for k in range(len(sets)):
        found.update((i, k) for i in index.matches(k, strict=strict))
        index.add(k)
    return found
