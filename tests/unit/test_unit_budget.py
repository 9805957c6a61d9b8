"""Token estimate and the greedy budget fill (recall.md §7)."""

from __future__ import annotations

import pytest

from hippod.recall.budget import fill_budget, tokens


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (1800, 450), (1801, 451)],
)
def test_tokens(length: int, expected: int) -> None:
    assert tokens("x" * length) == expected


def test_tokens_counts_characters_not_bytes() -> None:
    assert tokens("数据管道缓存") == 2


def test_greedy_skips_and_continues() -> None:
    fill = fill_budget([5, 10, 3, 2], 10)
    assert fill.taken == [0, 2, 3]
    assert fill.skipped_budget == 1
    assert fill.skipped_limit == 0
    assert fill.used == 10


def test_exact_fit_is_taken() -> None:
    fill = fill_budget([4, 6], 10)
    assert fill.taken == [0, 1]
    assert fill.used == 10


def test_the_oversized_top_item_is_skipped() -> None:
    fill = fill_budget([50, 3, 2], 10)
    assert fill.taken == [1, 2]
    assert fill.skipped_budget == 1
    assert fill.used == 5


def test_limit_counts_taken_items() -> None:
    fill = fill_budget([1, 1, 1, 1], 100, limit=2)
    assert fill.taken == [0, 1]
    assert fill.skipped_limit == 2
    assert fill.skipped_budget == 0
    assert fill.used == 2


def test_limit_with_skips_counts_only_what_was_taken() -> None:
    fill = fill_budget([100, 1, 1, 1], 10, limit=2)
    assert fill.taken == [1, 2]
    assert fill.skipped_budget == 1
    assert fill.skipped_limit == 1


def test_limit_zero_takes_nothing() -> None:
    fill = fill_budget([1, 1], 100, limit=0)
    assert fill.taken == []
    assert fill.skipped_limit == 2


def test_limit_larger_than_list() -> None:
    fill = fill_budget([1, 1], 100, limit=5)
    assert fill.taken == [0, 1]
    assert fill.skipped_limit == 0


def test_reserved_tokens_count_up_front() -> None:
    fill = fill_budget([5, 5], 12, reserved=4)
    assert fill.taken == [0]
    assert fill.skipped_budget == 1
    assert fill.used == 9
    assert fill_budget([5, 5], 12).taken == [0, 1]


def test_reserved_over_budget_takes_nothing() -> None:
    fill = fill_budget([5, 1], 10, reserved=20)
    assert fill.taken == [] and fill.skipped_budget == 2 and fill.used == 20


def test_empty_list() -> None:
    fill = fill_budget([], 100, limit=3)
    assert fill.taken == []
    assert (fill.skipped_budget, fill.skipped_limit, fill.used) == (0, 0, 0)
