"""Recall's proximity share: query terms standing together in a memory (recall/proximity.py)."""

from __future__ import annotations

import random

import pytest

from hippod.recall.proximity import ORDERED_WEIGHT, WINDOW, WINDOW_WEIGHT, proximity, query_pairs

IDFS = {"guitar": 2.0, "amp": 4.0, "new": 1.0}


def test_pairs_are_neighbouring_distinct_terms_in_query_order() -> None:
    assert query_pairs(["new", "guitar", "amp", "guitar", "amp"]) == [
        ("new", "guitar"),
        ("guitar", "amp"),
        ("amp", "guitar"),
    ]
    assert query_pairs(["guitar", "guitar"]) == []
    assert query_pairs(["guitar"]) == []


def _share(doc: str) -> float:
    words = doc.split()
    held = {t: 1.0 for t in IDFS if t in words}
    return proximity([("guitar", "amp")], words, held, IDFS)


def test_terms_side_by_side_in_order_count_most() -> None:
    weight = (IDFS["guitar"] + IDFS["amp"]) / 2
    assert _share("bought a guitar amp today") == pytest.approx(weight * (ORDERED_WEIGHT + WINDOW_WEIGHT) / 2)
    # One word between still reads as in order; the other way round counts only as near.
    assert _share("the guitar and amp") == _share("bought a guitar amp today")
    assert _share("an amp for the guitar") == pytest.approx(weight * WINDOW_WEIGHT / 2)


def test_terms_far_apart_or_missing_add_nothing() -> None:
    far = "guitar " + " ".join(["x"] * WINDOW) + " amp"
    assert _share(far) == 0.0
    assert _share("guitar lessons only") == 0.0


def test_repeated_pairs_saturate() -> None:
    once = _share("guitar amp")
    twice = _share("guitar amp and later another guitar amp")
    assert once < twice < 2 * once


def test_counts_match_every_pair_of_places() -> None:
    rng = random.Random(7)
    for _ in range(300):
        words = [rng.choice("abcx") for _ in range(rng.randint(2, 80))]
        first = [i for i, w in enumerate(words) if w == "a"]
        second = [i for i, w in enumerate(words) if w == "b"]
        if not first or not second or not any(abs(j - i) <= WINDOW for i in first for j in second):
            continue
        ordered = sum(1 for i in first for j in second if 0 < j - i <= 2)
        near = sum(1 for i in first for j in second if abs(j - i) <= WINDOW)
        expected = (
            ORDERED_WEIGHT * ordered / (ordered + 1) + WINDOW_WEIGHT * near / (near + 1) if near else 0.0
        )
        got = proximity([("a", "b")], words, {"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 1.0})
        assert got == pytest.approx(expected)
