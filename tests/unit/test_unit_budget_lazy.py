"""The budget fill stops measuring once nothing more can fit, and decides exactly as a full read."""

from __future__ import annotations

import random

from hippoctl.protocol.replies import RecallItem, Why
from hippod.recall import render
from hippod.recall.budget import LazySizes, fill_budget


def test_lazy_fill_matches_the_full_fill_and_measures_less() -> None:
    rng = random.Random(7)
    for _ in range(500):
        sizes = [rng.randint(20, 120) for _ in range(rng.randint(0, 80))]
        budget = rng.randint(0, 3000)
        limit = rng.choice([None, None, 5, 40])
        full = fill_budget(sizes, budget, reserved=15, limit=limit)
        measured: list[int] = []

        def measure(index: int, sizes: list[int] = sizes, measured: list[int] = measured) -> int:
            measured.append(index)
            return sizes[index]

        floors = [max(1, size - rng.randint(0, 40)) for size in sizes]
        lazy = fill_budget(
            LazySizes(len(sizes), measure),
            budget,
            reserved=15,
            limit=limit,
            floors=floors,
        )
        assert lazy == full
        assert len(measured) == len(set(measured)) <= len(sizes)


def test_an_item_whose_floor_does_not_fit_is_skipped_unmeasured() -> None:
    measured: list[int] = []

    def measure(index: int) -> int:
        measured.append(index)
        return 30

    sizes = LazySizes(100, measure)
    fill = fill_budget(sizes, 100, reserved=10, floors=[30] * 100)
    # 10 + 30 + 30 + 30 = 100: no room left, the other 97 are skipped unread.
    assert fill.taken == [0, 1, 2] and fill.skipped_budget == 97 and fill.skipped_limit == 0
    assert measured == [0, 1, 2]


def test_no_block_is_shorter_than_the_smallest() -> None:
    rng = random.Random(11)
    for _ in range(300):
        item = RecallItem(
            id=rng.choice(["a", "mem_0123456789abcdef"]),
            source=rng.choice(["local", "global"]),
            layer=rng.choice(["episodic", "semantic", "b"]),
            confidence=rng.choice(["verified", "c"]),
            aged=rng.random() < 0.5,
            pinned=False,
            score=rng.uniform(-2, 50),
            strength=rng.uniform(-0.5, 1.5),
            tokens=0,
            tags=rng.sample(["x", "error", "path:src"], rng.randint(0, 3)),
            content=rng.choice(["", "a", "some longer content here"]),
            created=rng.choice(["", "2026", "2026-12-03T05:00:00.000Z"]),
            last_retrieved="",
            retrieval_count=rng.randint(0, 500),
            half_life_days=30.0,
            superseded_by=rng.choice([None, "m"]),
            why=Why(bm25=1.0, bm25_norm=1.0, matched=[], cosine=None, base=1.0, multipliers={}, envelope={}),
        )
        for why in (False, True):
            assert len(render.item_block(item, why=why)) >= render.block_floor(item.id, item.content)
