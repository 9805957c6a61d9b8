"""Recall's proximity share: query terms standing together in a memory (recall/proximity.py)."""

from __future__ import annotations

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
