"""Okapi BM25 over a candidate set (recall.md §4)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

K1 = 1.5
B = 0.75


def bm25_scores(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[float]:
    """Score each tokenized doc against the query tokens (repeats count), with stats from `docs` alone."""
    return [sum(parts.values()) for parts in bm25_term_scores(query, docs)]


def bm25_term_scores(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[dict[str, float]]:
    """Per doc, each matched query term's share of its BM25 (a repeated query term counts each time)."""
    n = len(docs)
    if n == 0:
        return []
    avgdl = sum(map(len, docs)) / n or 1.0
    repeats = Counter(query)
    # Only the query's terms are counted in each doc, in query order: recall scores 200 docs per
    # store and a doc shares one or two terms with a short query, so a Counter of every doc is waste.
    # list.count runs in C: a few of them are cheaper than a set of the doc.
    found = [{t: tf for t in repeats if (tf := doc.count(t))} for doc in docs]
    df = Counter(t for tf_map in found for t in tf_map)
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in repeats}
    parts: list[dict[str, float]] = []
    for doc, tf_map in zip(docs, found, strict=True):
        norm = K1 * (1.0 - B + B * len(doc) / avgdl)
        parts.append({q: repeats[q] * idf[q] * tf * (K1 + 1.0) / (tf + norm) for q, tf in tf_map.items()})
    return parts
