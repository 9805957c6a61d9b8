"""Okapi BM25 over a candidate set (recall.md §4), with the store's term statistics when given."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

K1 = 1.5
B = 0.75


def bm25_scores(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[float]:
    """Score each tokenized doc against the query tokens (repeats count), with stats from `docs` alone."""
    return [sum(parts.values()) for parts in bm25_term_scores(query, docs)]


def idf(rows: int, hits: int) -> float:
    """How much a term held by `hits` of `rows` documents tells: never below zero."""
    return math.log((rows - hits + 0.5) / (hits + 0.5) + 1.0)


def bm25_term_scores(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[dict[str, float]]:
    """Per doc, each matched query term's share of its BM25 (a repeated query term counts each time),
    with stats from `docs` alone."""
    return bm25_parts(query, docs)[0]


def bm25_parts(
    query: Sequence[str],
    docs: Sequence[Sequence[str]],
    rows: int = 0,
    hits: Mapping[str, int] | None = None,
) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Per doc, each matched query term's share of its BM25; and each query term's IDF.

    IDF (`term_idfs`) reads `docs` and, when given, the store's statistics: `rows` (the documents
    of the whole store) and `hits` (how many of them hold each term).
    """
    n = len(docs)
    if n == 0:
        return [], {}
    lengths = list(map(len, docs))
    avgdl = sum(lengths) / n or 1.0
    repeats = Counter(query)
    # Only the query's terms are counted, term by term over the docs: recall scores 200 docs per
    # store and a doc shares one or two terms with a short query, so a Counter of every doc is waste.
    # list.count runs in C: a few of them are cheaper than a set of the doc.
    counts = {t: [doc.count(t) for doc in docs] for t in repeats}
    weights = _idfs({t: n - tfs.count(0) for t, tfs in counts.items()}, n, rows, hits)
    # A share is repeats x weight x tf x (K1 + 1) / (tf + norm), multiplied in that order.
    terms = [(t, tfs, repeats[t] * weights[t]) for t, tfs in counts.items()]
    parts: list[dict[str, float]] = []
    for i, length in enumerate(lengths):
        norm = K1 * (1.0 - B + B * length / avgdl)
        held: dict[str, float] = {}
        for t, tfs, weight in terms:
            tf = tfs[i]
            if tf:
                held[t] = weight * tf * (K1 + 1.0) / (tf + norm)
        parts.append(held)
    return parts, weights


def term_idfs(
    terms: Iterable[str],
    found: Sequence[Mapping[str, object]],
    rows: int = 0,
    hits: Mapping[str, int] | None = None,
) -> dict[str, float]:
    """Each term's IDF: from the candidates' statistics (`found`: per candidate, the terms it holds),
    and with the store's (`rows`, `hits`) the mean of the two.

    The candidates' IDF tells which terms set the candidates apart from each other; the store's, which
    terms are rare at all. On a small store they agree. On a large one the candidates are the few
    rows that hold the query's rarest terms, where those terms look common: by the candidates' IDF
    alone the term that chose them counts for little and common words decide, and the right memory
    sinks out of the top; by the store's alone, the words that tell the candidates apart count for
    too little (measured in bench/RESULTS.md, "Recall over a whole history").
    """
    df = Counter(t for held in found for t in held)
    return _idfs({t: df[t] for t in terms}, len(found), rows, hits)


def _idfs(df: Mapping[str, int], n: int, rows: int, hits: Mapping[str, int] | None) -> dict[str, float]:
    """`term_idfs` from each term's count among the `n` candidates (`df`, in the terms' order)."""
    if hits is None:
        return {t: idf(n, held) for t, held in df.items()}
    # The row count, the terms' counts and the candidates are read a moment apart, so a write in
    # between can leave a term in more candidates than its count, or in more rows than the count
    # of rows: the larger count is the truer one, and the store holds at least as many rows as any
    # of its terms is in (else the IDF would go below zero).
    store = {t: max(hits.get(t, 0), held) for t, held in df.items()}
    total = max([rows, n, *store.values()])
    return {t: (idf(total, store[t]) + idf(n, df[t])) / 2.0 for t in df}
