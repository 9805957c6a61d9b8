"""bench/join_candidates.py's MinHash counts, against counting by hand: the figures a decision on
the first sleep's merge join rests on."""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import join_candidates  # bench/join_candidates.py


def test_colliding_pairs_counts_the_pairs_of_equal_rows() -> None:
    rng = random.Random(5)
    rows = [[rng.randrange(3), rng.randrange(2)] for _ in range(40)]
    by_hand = sum(1 for a, b in itertools.combinations(rows, 2) if a == b)
    assert by_hand > 0
    assert join_candidates.colliding_pairs(np.array(rows, dtype=np.int64)) == by_hand


@pytest.mark.parametrize(("r", "chance"), [(2, 0.95), (3, 0.95), (4, 0.99), (5, 0.99)])
def test_bands_needed_are_the_fewest_that_reach_the_chance(r: int, chance: float) -> None:
    def found(bands: int) -> float:
        return 1 - (1 - 0.35**r) ** bands

    bands = join_candidates.bands_needed(r, chance)
    assert found(bands) >= chance > found(bands - 1)
