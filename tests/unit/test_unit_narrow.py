"""Which query terms choose recall's candidates on a large store (hippod/recall/narrow.py)."""

from __future__ import annotations

import pytest

from hippod.recall.narrow import MATCH_ROWS, narrowed


@pytest.mark.parametrize(
    ("terms", "rows", "kept"),
    [
        # Few rows in all: every term, in query order, repeats merged.
        (["cache", "data", "cache"], {"cache": 300, "data": 900}, ["cache", "data"]),
        # Many: the rarest first, while they fit.
        (["data", "pipelin", "cach"], {"data": 753, "pipelin": 6041, "cach": 590}, ["cach", "data"]),
        # The rarest always stays, however many rows it holds.
        (["the", "use"], {"the": 33722, "use": 24384}, ["use"]),
        # A term in no row costs nothing and is kept.
        (["zzz", "the"], {"the": 33722}, ["zzz", "the"]),
        (["zzz", "the", "use"], {"the": 33722, "use": 24384}, ["zzz", "use"]),
    ],
)
def test_narrowed(terms: list[str], rows: dict[str, int], kept: list[str]) -> None:
    assert narrowed(terms, rows, max_rows=2000) == kept


def test_the_default_limit_leaves_small_stores_alone() -> None:
    rows = {f"t{i}": MATCH_ROWS // 10 for i in range(10)}
    assert narrowed(list(rows), rows) == list(rows)
    assert len(narrowed(list(rows), {**rows, "t0": MATCH_ROWS})) < len(rows)
