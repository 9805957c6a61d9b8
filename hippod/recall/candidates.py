"""Recall's candidates by their terms, over either backend (recall.md §2).

The SQLite store (`hippod.store.sqlite.memories`, FTS5) and the team store (`hippod.store.postgres.memories`,
PostgreSQL) are both `MemoryRows` (store/backend.py); candidates are chosen by the same rules
from either, and scored by the same code afterwards (recall/score.py), so a query ranks the same
memories the same way on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hippod.recall import narrow
from hippod.store.backend import MemoryRows
from hippod.store.records import Candidate, TermStats

# Candidates per store and query (recall.md §2).
CANDIDATE_LIMIT = 200


async def by_terms(
    rows: MemoryRows,
    conn: Any,
    tenant: str,
    query: Sequence[str],
    *,
    include_superseded: bool,
    scope: str | None,
    limit: int = CANDIDATE_LIMIT,
) -> tuple[list[Candidate], TermStats]:
    """The best `limit` admitted memories for the query's terms, and the store's statistics of those
    terms (BM25 reads them). On a large store the very common terms stay out of the match while
    rarer ones carry the query (recall/narrow.py)."""
    distinct = list(dict.fromkeys(query))
    stats = await rows.term_statistics(conn, distinct)
    if not stats.hits:
        # No row holds a term of the query (often the global store's pass): nothing to match.
        return [], stats
    matched = narrow.narrowed(distinct, stats.hits) if len(distinct) > 1 else distinct
    found = await rows.candidates_fts(
        conn, tenant, matched, include_superseded=include_superseded, scope=scope, limit=limit
    )
    return found, stats
