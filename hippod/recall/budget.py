"""Filling a token budget in rank order (recall.md §7)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


def tokens(text: str) -> int:
    """The token estimate used everywhere: one token per four characters, rounded up."""
    return tokens_of(len(text))


def tokens_of(characters: int) -> int:
    """`tokens` of a text this long."""
    return math.ceil(characters / 4)


class Sizes(Protocol):
    """Item sizes in rank order: a list, or a LazySizes."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> int: ...


@dataclass(frozen=True, slots=True)
class Fill:
    """Which items were taken, and why the others were not."""

    taken: list[int]
    skipped_budget: int
    skipped_limit: int
    used: int


def fill_budget(
    sizes: Sizes,
    budget: int,
    *,
    reserved: int = 0,
    limit: int | None = None,
    floors: Sequence[int] | None = None,
) -> Fill:
    """Greedy fill: take an item when it fits, else skip it and go on (a later, smaller one may fit).
    Items are taken whole; pack.pack cuts one into what is left.

    `reserved` tokens (heading and cutoff lines) count against the budget up front. `floors` are
    cheap lower bounds of the sizes: an item whose floor does not fit is skipped unmeasured, so
    `sizes` may be a LazySizes that measures only the items that might fit.
    """
    taken: list[int] = []
    used = reserved
    skipped_budget = 0
    count = len(sizes)
    for index in range(count):
        if limit is not None and len(taken) >= limit:
            return Fill(taken, skipped_budget, count - index, used)
        if floors is not None and used + floors[index] > budget:
            skipped_budget += 1
            continue
        size = sizes[index]
        if used + size <= budget:
            taken.append(index)
            used += size
        else:
            skipped_budget += 1
    return Fill(taken, skipped_budget, 0, used)


class LazySizes:
    """The sizes of `count` items, each measured the first time it is asked for."""

    def __init__(self, count: int, measure: Callable[[int], int]) -> None:
        self._sizes: list[int | None] = [None] * count
        self._measure = measure

    def __len__(self) -> int:
        return len(self._sizes)

    def __getitem__(self, index: int) -> int:
        size = self._sizes[index]
        if size is None:
            size = self._sizes[index] = self._measure(index)
        return size
