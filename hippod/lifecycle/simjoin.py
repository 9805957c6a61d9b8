"""Finding pairs of token sets whose Jaccard can reach a threshold without comparing every pair.

Prefix filtering (the AllPairs join): order tokens rarest first over the whole collection; two sets
with Jaccard >= t always share a token among the first |x| - ceil(t·|x|) + 1 tokens of each. Only
sets sharing such a prefix token are candidates, and the caller checks each candidate exactly. The
index is filled as the caller walks its items in order, so each pair is looked at once, from its
later side (merge, dedupe and conflicts all walk in an order where that is what they need).
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
    """An index over token sets for candidate pairs with Jaccard >= threshold.

    `add(i)` puts set i in the index; `candidates(i)` yields the indexed sets (in the order they
    were added) that may reach the threshold with set i.
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

    def add_all(self) -> None:
        for index in range(len(self.sets)):
            self.add(index)

    def candidates(self, index: int) -> Iterator[int]:
        """Indexed sets (never `index` itself) that may reach the threshold with set `index`, once each."""
        size = len(self.sets[index])
        low = self.threshold * size - 1e-9
        high = size / self.threshold + 1e-9 if self.threshold else math.inf
        seen: set[int] = {index}
        sets = self.sets
        for token in self.prefixes[index]:
            for other in self.postings.get(token, ()):
                if other not in seen:
                    seen.add(other)
                    if low <= len(sets[other]) <= high:
                        yield other

    def overlap(self, i: int, j: int) -> float:
        return jaccard(self.sets[i], self.sets[j])
