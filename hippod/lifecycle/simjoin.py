"""Finding pairs of token sets whose Jaccard can reach a threshold without comparing every pair.

Prefix filtering (the AllPairs join): order tokens rarest first over the whole collection; two sets
with Jaccard >= t always share a token among the first |x| - ceil(t·|x|) + 1 tokens of each. Only
sets sharing such a prefix token are candidates, and the caller checks each candidate exactly. This
keeps merge, dedupe and conflict detection near-linear on a real store instead of O(n²).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence

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
    """An index over token sets for candidate pairs with Jaccard >= threshold."""

    def __init__(self, sets: Sequence[frozenset[str]], threshold: float) -> None:
        self.sets = [s if s else frozenset({EMPTY_TOKEN}) for s in sets]
        self.threshold = threshold
        frequency: Counter[str] = Counter()
        for tokens in self.sets:
            frequency.update(tokens)
        rank = {t: (n, t) for t, n in frequency.items()}
        self.postings: dict[str, list[int]] = {}
        self.prefixes: list[list[str]] = []
        for index, tokens in enumerate(self.sets):
            ordered = sorted(tokens, key=rank.__getitem__)
            prefix = ordered[: _prefix_length(len(ordered), threshold)]
            self.prefixes.append(prefix)
            for token in prefix:
                self.postings.setdefault(token, []).append(index)

    def candidates(self, index: int) -> Iterator[int]:
        """Indexes (never `index` itself) that may reach the threshold with set `index`, each once."""
        size = len(self.sets[index])
        low, high = self.threshold * size - 1e-9, size / self.threshold + 1e-9 if self.threshold else math.inf
        seen: set[int] = {index}
        for token in self.prefixes[index]:
            for other in self.postings[token]:
                if other in seen:
                    continue
                seen.add(other)
                if low <= len(self.sets[other]) <= high:
                    yield other

    def overlap(self, i: int, j: int) -> float:
        return jaccard(self.sets[i], self.sets[j])
