"""Recall's candidates by their terms, over either backend (recall.md §2).

The SQLite store (`hippod.store.memories`, FTS5) and the team store (`hippod.team.memories`,
PostgreSQL) are both `MemoryRows` (store/backend.py); candidates are chosen by the same rules
from either, and scored by the same code afterwards (recall/score.py), so a query ranks the same
memories the same way on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hippod.recall import narrow
from hippod.store.backend import MemoryRows
from hippod.store.memories import Candidate

# Candidates per store and query (recall.md §2).
CANDIDATE_LIMIT = 200


async def match_terms(rows: MemoryRows, conn: Any, query: Sequence[str]) -> list[str]:
    """The query's terms that choose candidates: on a large store, not the very common ones while
    rarer ones carry the query (recall/narrow.py)."""
    distinct = list(dict.fromkeys(query))
    if len(distinct) < 2:
        return distinct
    return narrow.narrowed(distinct, await rows.term_rows(conn, distinct))


async def by_terms(
    rows: MemoryRows,
    conn: Any,
    tenant: str,
    query: Sequence[str],
    *,
    include_superseded: bool,
    scope: str | None,
    limit: int = CANDIDATE_LIMIT,
) -> list[Candidate]:
    """The best `limit` admitted memories for the query's terms."""
    return await rows.candidates_fts(
        conn,
        tenant,
        await match_terms(rows, conn, query),
        include_superseded=include_superseded,
        scope=scope,
        limit=limit,
    )
