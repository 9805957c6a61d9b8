"""Filling a token budget in rank order (recall.md §7)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def tokens(text: str) -> int:
    """The token estimate used everywhere: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class Fill:
    """Which items were taken, and why the others were not."""

    taken: list[int]
    skipped_budget: int
    skipped_limit: int
    used: int


def fill_budget(
    sizes: Sequence[int], budget: int, *, reserved: int = 0, min_results: int = 0, limit: int | None = None
) -> Fill:
    """Greedy fill: take an item when it fits or fewer than min_results are taken; skip it and go on.

    `reserved` tokens (heading and cutoff lines) count against the budget up front.
    """
    taken: list[int] = []
    used = reserved
    skipped_budget = 0
    for index, size in enumerate(sizes):
        if limit is not None and len(taken) >= limit:
            return Fill(taken, skipped_budget, len(sizes) - index, used)
        if used + size <= budget or len(taken) < min_results:
            taken.append(index)
            used += size
        else:
            skipped_budget += 1
    return Fill(taken, skipped_budget, 0, used)
