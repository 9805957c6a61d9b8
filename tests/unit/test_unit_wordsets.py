"""Token rows added a page at a time as numbers (TokenColumn.extend_numbered) are the rows added one
by one, and a vocabulary read back from a store numbers new tokens after the ones it holds."""

from __future__ import annotations

import pytest

from hippod.model.wordsets import TokenColumn, Vocabulary, numbered

PAGES = [
    ["alpha beta", "", "beta gamma delta", "alpha"],
    [],
    ["", "", ""],
    ["epsilon", "", "gamma epsilon zeta"],
    ["日本語 テスト", "alpha"],
]


def _rows(column: TokenColumn) -> list[list[str]]:
    names = {number: token for token, number in column.vocabulary.items()}
    return [
        [names[n] for n in column.tokens[column.indptr[k] : column.indptr[k + 1]]] for k in range(len(column))
    ]


@pytest.mark.parametrize("start", [[], ["omega alpha", ""]])
def test_a_page_added_as_numbers_equals_its_rows_one_by_one(start: list[str]) -> None:
    paged, single = TokenColumn(), TokenColumn()
    for row in start:  # a column that already holds rows, and so numbers
        paged.append_distinct(row.split())
        single.append_distinct(row.split())
    for page in PAGES:
        paged.extend_numbered([numbered(paged.vocabulary, row.split()) for row in page])
        for row in page:
            single.append_distinct(row.split())
    assert len(paged) == len(single) == len(start) + sum(len(page) for page in PAGES)
    every = start + [row for page in PAGES for row in page]
    assert _rows(paged) == _rows(single) == [row.split() for row in every]


def test_a_kept_vocabulary_numbers_new_tokens_after_its_own() -> None:
    kept = Vocabulary([("alpha", 0), ("beta", 4)])  # whatever the gaps, after the largest
    assert (kept["beta"], kept["gamma"], kept["alpha"], kept["delta"]) == (4, 5, 0, 6)
    assert (kept.first_added, kept.added) == (5, ["gamma", "delta"])
    assert (Vocabulary().first_added, Vocabulary()["x"]) == (0, 0)
