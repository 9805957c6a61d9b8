"""Strings held in one buffer (string_column.py): each row reads back as written, and `order` sorts
rows as Python sorts tuples of their strings."""

from __future__ import annotations

import random

import pytest

from hippod.model import string_column
from hippod.model.string_column import StringColumn

# Prefixes of each other, an empty string, letters past ASCII and past the BMP, digits that sort
# before letters: what a byte order and a code-point order could disagree on.
ALPHABET = ["a", "b", "Z", "0", "é", "ü", "中", "😀", "-", " "]


def _column(values: list[str]) -> StringColumn:
    column = StringColumn()
    for value in values:
        column.append(value)
    return column


def _random_strings(rng: random.Random, count: int, longest: int) -> list[str]:
    return ["".join(rng.choices(ALPHABET, k=rng.randint(0, longest))) for _ in range(count)]


def test_rows_read_back_as_written() -> None:
    values = [*_random_strings(random.Random(1), 300, 12), "", "mem_0001", "2026-02-20T00:00:01.000Z"]
    column = _column(values)
    assert len(column) == len(values)
    assert [column[k] for k in range(len(values))] == values
    assert list(column) == values
    assert column[-1] == values[-1] and column[-len(values)] == values[0]
    for outside in (len(values), -len(values) - 1, -2 * len(values) - 1):
        with pytest.raises(IndexError):
            column[outside]


def test_extend_adds_the_other_columns_rows_after() -> None:
    first, second = ["x", "", "é"], ["中文", "y", ""]
    column = _column(first)
    column.extend(_column(second))
    assert list(column) == first + second
    column.append("z")
    assert column[-1] == "z" and len(column) == 7
    column.extend(column)  # with itself: twice its rows
    assert list(column) == [*first, *second, "z"] * 2


@pytest.mark.parametrize("seed", range(20))
def test_order_is_pythons_order_of_the_tuples(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(0, 400)
    # Few distinct first strings, so the second column breaks many ties.
    created = _column([rng.choice(["", "2026-01-01", "2026-01-01T00", "2026-01-02"]) for _ in range(count)])
    ids = _column(_random_strings(rng, count, 6))
    rows = rng.sample(range(count), rng.randint(0, count))
    expected = sorted(rows, key=lambda k: (created[k], ids[k]))  # ties: in the order given
    assert list(string_column.order(rows, created, ids)) == expected


def test_order_of_strings_too_long_or_holding_nul_is_still_pythons() -> None:
    rng = random.Random(7)
    long = [rng.choice(["", "a" * string_column.KEY_BYTES]) + s for s in _random_strings(rng, 200, 8)]
    nul = [s.replace(" ", "\0") for s in _random_strings(rng, 200, 8)] + ["a", "a\0"]
    for values in (long, nul):
        column = _column(values)
        rows = list(range(len(values)))[::-1]
        assert list(string_column.order(rows, column)) == sorted(rows, key=lambda k: column[k])


def test_order_by_no_column_keeps_the_rows_as_given() -> None:
    assert list(string_column.order([3, 1, 2])) == [3, 1, 2]
