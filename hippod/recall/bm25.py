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
    avgdl = sum(len(d) for d in docs) / n or 1.0
    counts = [Counter(d) for d in docs]
    repeats = Counter(query)
    df = {t: sum(1 for c in counts if t in c) for t in repeats}
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in repeats}
    parts: list[dict[str, float]] = []
    for doc, tf_map in zip(docs, counts, strict=True):
        norm = K1 * (1.0 - B + B * len(doc) / avgdl)
        shares: dict[str, float] = {}
        for q, times in repeats.items():
            tf = tf_map.get(q, 0)
            if tf:
                shares[q] = times * idf[q] * tf * (K1 + 1.0) / (tf + norm)
        parts.append(shares)
    return parts
