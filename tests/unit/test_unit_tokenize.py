"""The shared tokenizer, the FTS match expression and text overlap (recall.md §3)."""

from __future__ import annotations

from typing import Any

import pytest

from hippod.model.tokenize import fts_match_expression, text_overlap, tokenize


def test_tokenize_vector(tokenize_case: dict[str, Any]) -> None:
    assert tokenize(tokenize_case["text"]) == tokenize_case["tokens"]


def test_tokenize_keeps_duplicates_in_order() -> None:
    assert tokenize("cache miss cache MISS") == ["cache", "miss", "cache", "miss"]


def test_tokenize_empty_and_punctuation_only() -> None:
    assert tokenize("") == []
    assert tokenize("!!! ... ---") == []
    assert tokenize("a b c") == []


def test_tokenize_lone_cjk_character_is_a_token() -> None:
    assert tokenize("数 a") == ["数"]
    assert tokenize("数据") == ["数据"]


def test_tokenize_cjk_run_next_to_latin() -> None:
    # The letters glued to a CJK run are split off and kept as their own token.
    assert tokenize("etl数据管道") == ["etl", "数据", "据管", "管道"]


def test_tokenize_hangul_and_kana_are_bigrammed() -> None:
    assert tokenize("캐시") == ["캐시"]
    assert tokenize("キャッシュ") == ["キャ", "ャッ", "ッシ", "シュ"]


def test_fts_match_expression_quotes_and_dedupes() -> None:
    assert fts_match_expression(["cache", "miss", "cache"]) == '"cache" OR "miss"'


def test_fts_match_expression_doubles_inner_quotes() -> None:
    assert fts_match_expression(['say"hi', "x2", 'say"hi']) == '"say""hi" OR "x2"'
    assert fts_match_expression(['"']) == '""""'


def test_fts_match_expression_keeps_first_seen_order() -> None:
    assert fts_match_expression(["b1", "a1", "b1", "c1", "a1"]) == '"b1" OR "a1" OR "c1"'


def test_fts_match_expression_makes_operators_literal() -> None:
    assert fts_match_expression(["or", "and", "not"]) == '"or" OR "and" OR "not"'


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("", "", 1.0),
        ("!!", "a", 1.0),
        ("alpha beta", "", 0.0),
        ("alpha beta", "beta gamma", 1 / 3),
        ("alpha beta", "BETA, Alpha!", 1.0),
        ("alpha alpha beta", "alpha beta beta", 1.0),
        ("alpha beta gamma delta", "alpha beta", 0.5),
        ("数据管道", "数据", 1 / 3),
    ],
)
def test_text_overlap(a: str, b: str, expected: float) -> None:
    assert text_overlap(a, b) == pytest.approx(expected, abs=1e-12)
    assert text_overlap(b, a) == pytest.approx(expected, abs=1e-12)
