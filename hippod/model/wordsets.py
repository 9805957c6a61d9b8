"""Token sets stored as numbers a row at a time, and the pairs of them the sleep join finds.

A sleep keeps one number per distinct token and one small integer per token of a memory, instead
of a Python set of strings per memory: on a large store that is the difference between holding the
snapshot's words in a few megabytes and in hundreds.

Standard library only: numpy and scipy (pairjoin.py) load when a sleep first asks for pairs, so a
daemon that has not slept yet does not carry them.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Sequence
from typing import Protocol


class _Vocabulary(dict[str, int]):
    """Token -> number, numbering a token it has not seen yet as it is looked up."""

    def __missing__(self, token: str) -> int:
        number = self[token] = len(self)
        return number


class TokenColumn:
    """Token sets, one row each, over a vocabulary of their own."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = _Vocabulary()
        self.indptr: array[int] = array("q", [0])
        self.tokens: array[int] = array("i")

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def append(self, tokens: Iterable[str]) -> int:
        """Add a row holding these tokens (repeats count once); returns its number."""
        return self.append_distinct(dict.fromkeys(tokens))

    def append_distinct(self, tokens: Iterable[str]) -> int:
        """Add a row holding these tokens, which hold no repeat; returns its number."""
        # map over the dict's own lookup stays in C but for the tokens new to the vocabulary.
        self.tokens.extend(map(self.vocabulary.__getitem__, tokens))
        self.indptr.append(len(self.tokens))
        return len(self.indptr) - 2

    def extend_joined(self, rows: Sequence[str]) -> None:
        """Add rows given as their tokens joined by single spaces ("" for none), which hold no repeat.

        A sleep numbers a page of rows at once this way: one split and one pass over the vocabulary
        for the page, instead of a call and a list per row.
        """
        joined = " ".join(filter(None, rows))
        if joined:
            self.tokens.extend(map(self.vocabulary.__getitem__, joined.split(" ")))
        sizes = (row.count(" ") + 1 if row else 0 for row in rows)
        self.indptr.extend(itertools.islice(itertools.accumulate(sizes, initial=self.indptr[-1]), 1, None))

    def extend_column(self, other: TokenColumn) -> None:
        """Add every row of `other`, its tokens numbered in this column's vocabulary."""
        import numpy as np  # with the joins that follow (a column this size is a sleep's)

        numbers = np.empty(len(other.vocabulary), dtype=np.int32)
        for token, number in other.vocabulary.items():
            numbers[number] = self.vocabulary[token]
        # frombytes reads the numpy arrays' own bytes: no bytes copy of a half's tokens.
        self.tokens.frombytes(numbers[np.frombuffer(other.tokens, dtype=np.int32)].data.cast("B"))
        indptr = np.frombuffer(other.indptr, dtype=np.int64)[1:] + self.indptr[-1]
        self.indptr.frombytes(indptr.data.cast("B"))

    def extend(self, rows: Iterable[Iterable[str]]) -> TokenColumn:
        for tokens in rows:
            self.append(tokens)
        return self


class Join(Protocol):
    """`pairs`, or what finds the same pairs another way (store/sqlite/scan_process.py)."""

    def __call__(
        self,
        column: TokenColumn,
        rows: Iterable[int],
        threshold: float,
        *,
        strict: bool = False,
        probe: Sequence[bool] | None = None,
    ) -> list[tuple[int, int]]: ...


def pairs(
    column: TokenColumn,
    rows: Iterable[int],
    threshold: float,
    *,
    strict: bool = False,
    probe: Sequence[bool] | None = None,
    part: tuple[int, int] = (0, 1),
) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of the numbered rows whose Jaccard is >= threshold (> with strict),
    with probe[i] or probe[j] when `probe` (a flag per row of the column) is given; sorted.

    With `part` (k, n), only the k-th of n shares of the pairs: the n shares hold each pair once.
    """
    import numpy as np

    from hippod.model import pairjoin  # numpy and scipy: loaded by the first sleep, not at startup

    sets = pairjoin.TokenSets(
        np.frombuffer(column.indptr, dtype=np.int64), np.frombuffer(column.tokens, dtype=np.int32)
    )
    chosen = np.fromiter(rows, dtype=np.int64)
    flags = None if probe is None else np.fromiter(probe, dtype=np.bool_, count=len(column))
    found = pairjoin.similar_pairs(sets, chosen, threshold, strict=strict, probe=flags, part=part)
    return [(int(i), int(j)) for i, j in found.tolist()]
