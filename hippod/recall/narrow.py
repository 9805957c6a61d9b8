"""Which query terms choose recall's candidates: on a large store, the very common ones stay out of the
FTS match when rarer ones carry the query (recall.md §2, see `narrowed`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# FTS5 ranks every row a match finds (bm25 for each before the top ones are kept), so the cost of
# choosing candidates grows with the rows the query's terms hold together: ~1.2 µs a row, 6 ms for
# the 5,000 of a typical query on a 100k store. Under this many rows nothing is left out.
MATCH_ROWS = 2000


def narrowed(terms: Sequence[str], rows: Mapping[str, int], max_rows: int = MATCH_ROWS) -> list[str]:
    """The distinct terms to match: all of them while the rows they hold add up to `max_rows` or
    fewer; else the rarest first, as many as fit, and always the rarest one that holds any row.

    A term left out still counts in every candidate's score; it only stops pulling in rows that hold
    nothing rarer, whose common words give them too little weight to rank near the top.
    """
    distinct = list(dict.fromkeys(terms))
    if sum(rows.get(t, 0) for t in distinct) <= max_rows:
        return distinct
    kept: list[str] = []
    total = 0
    for term in sorted(distinct, key=lambda t: rows.get(t, 0)):
        held = rows.get(term, 0)
        if total and total + held > max_rows:
            break
        kept.append(term)
        total += held
    return kept
