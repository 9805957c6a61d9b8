"""Okapi BM25 over a candidate set (recall.md §4), checked against hand-written numbers."""

from __future__ import annotations

import math

import pytest

from hippod.recall.bm25 import K1, B, bm25_scores, bm25_term_scores

# A three-document corpus; avgdl = (3 + 2 + 4) / 3 = 3.
D1 = ["cache", "miss", "cache"]
D2 = ["cache", "hit"]
D3 = ["deploy", "failed", "today", "again"]
CORPUS = [D1, D2, D3]

# idf(t) = ln((N - df + 0.5) / (df + 0.5) + 1) with N = 3.
IDF_CACHE = math.log((3 - 2 + 0.5) / (2 + 0.5) + 1)  # df 2 -> ln(1.6)
IDF_MISS = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)  # df 1 -> ln(8/3)
# Length normalisation k1 * (1 - b + b * len / avgdl) for each document.
NORM_D1 = 1.5 * (1 - 0.75 + 0.75 * 3 / 3)  # 1.5
NORM_D2 = 1.5 * (1 - 0.75 + 0.75 * 2 / 3)  # 1.125


def test_constants() -> None:
    assert K1 == 1.5
    assert B == 0.75


def test_hand_computed_three_doc_corpus() -> None:
    assert abs(IDF_CACHE - 0.4700036292) < 1e-9
    assert abs(IDF_MISS - 0.9808292530) < 1e-9
    expected_d1 = IDF_CACHE * 2 * 2.5 / (2 + NORM_D1) + IDF_MISS * 1 * 2.5 / (1 + NORM_D1)
    expected_d2 = IDF_CACHE * 1 * 2.5 / (1 + NORM_D2)
    assert expected_d1 == pytest.approx(1.6522629, abs=1e-6)
    assert expected_d2 == pytest.approx(0.5529454, abs=1e-6)
    scores = bm25_scores(["cache", "miss"], CORPUS)
    assert scores == pytest.approx([expected_d1, expected_d2, 0.0], abs=1e-12)


def test_repeated_query_tokens_count_twice() -> None:
    once = bm25_scores(["cache"], CORPUS)
    twice = bm25_scores(["cache", "cache"], CORPUS)
    assert twice == pytest.approx([2 * s for s in once], abs=1e-12)
    assert twice[0] > once[0] > 0


def test_term_missing_from_corpus_adds_nothing() -> None:
    assert bm25_scores(["cache", "nowhere"], CORPUS) == pytest.approx(bm25_scores(["cache"], CORPUS))


def test_statistics_come_from_the_candidates_only() -> None:
    # With D3 gone, N = 2 and avgdl = 2.5, so the same documents score differently.
    n, avgdl = 2, 2.5
    idf = math.log((n - 2 + 0.5) / (2 + 0.5) + 1)
    norm_d2 = 1.5 * (1 - 0.75 + 0.75 * 2 / avgdl)
    assert bm25_scores(["cache"], [D1, D2])[1] == pytest.approx(idf * 2.5 / (1 + norm_d2), abs=1e-12)


def test_empty_docs_list() -> None:
    assert bm25_scores(["cache"], []) == []


def test_empty_query_scores_zero() -> None:
    assert bm25_scores([], CORPUS) == [0.0, 0.0, 0.0]


def test_all_empty_documents_do_not_divide_by_zero() -> None:
    assert bm25_scores(["cache"], [[], []]) == [0.0, 0.0]


def test_term_shares_add_up_to_the_score() -> None:
    docs = [["deploy", "cache", "cache"], ["cache"], ["other", "words", "here"]]
    query = ["cache", "deploy", "cache"]
    shares = bm25_term_scores(query, docs)
    assert set(shares[0]) == {"cache", "deploy"} and set(shares[1]) == {"cache"} and shares[2] == {}
    assert [sum(s.values()) for s in shares] == pytest.approx(bm25_scores(query, docs))
    # A repeated query term counts twice, as in the score.
    assert shares[1]["cache"] == pytest.approx(2 * bm25_term_scores(["cache"], docs)[1]["cache"])
