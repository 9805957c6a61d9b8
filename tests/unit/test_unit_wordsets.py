"""Token rows numbered a page at a time (TokenColumn.extend_joined) are the rows numbered one by one."""

from __future__ import annotations

import pytest

from hippod.model.wordsets import TokenColumn

PAGES = [
    ["alpha beta", "", "beta gamma delta", "alpha"],
    [],
    ["", "", ""],
    ["epsilon", "", "gamma epsilon zeta"],
    ["日本語 テスト", "alpha"],
]


def _rows(column: TokenColumn) -> list[list[int]]:
    return [list(column.tokens[column.indptr[k] : column.indptr[k + 1]]) for k in range(len(column))]


@pytest.mark.parametrize("start", [[], ["omega alpha", ""]])
def test_a_page_numbered_at_once_equals_its_rows_one_by_one(start: list[str]) -> None:
    joined, single = TokenColumn(), TokenColumn()
    for row in start:  # a column that already holds rows, and so numbers
        joined.append_distinct(row.split())
        single.append_distinct(row.split())
    for page in PAGES:
        joined.extend_joined(page)
        for row in page:
            single.append_distinct(row.split())
    assert len(joined) == len(single) == len(start) + sum(len(page) for page in PAGES)
    assert _rows(joined) == _rows(single)
    assert dict(joined.vocabulary) == dict(single.vocabulary)
    assert "" not in joined.vocabulary
