"""Recall's candidates by their terms, over either backend (recall.md §2).

The SQLite store (`hippod.store.memories`, FTS5) and the team store (`hippod.team.memories`,
PostgreSQL) both provide the two functions of `TermIndex`; candidates are chosen by the same rules
from either, and scored by the same code afterwards (recall/score.py), so a query ranks the same
memories the same way on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from hippod.recall import narrow
from hippod.store.memories import Candidate

# Candidates per store and query (recall.md §2).
CANDIDATE_LIMIT = 200


class TermIndex(Protocol):
    """What recall asks of a backend's memory rows to find candidates by their terms."""

    async def term_rows(self, conn: Any, terms: Sequence[str], /) -> dict[str, int]:
        """How many rows hold each term (terms in none left out)."""
        ...

    async def candidates_fts(
        self,
        conn: Any,
        tenant: str,
        terms: Sequence[str],
        /,
        *,
        include_superseded: bool,
        scope: str | None,
        limit: int = CANDIDATE_LIMIT,
    ) -> list[Candidate]:
        """Admitted memories holding any of `terms`, best FTS5 bm25() first."""
        ...


async def match_terms(rows: TermIndex, conn: Any, query: Sequence[str]) -> list[str]:
    """The query's terms that choose candidates: on a large store, not the very common ones while
    rarer ones carry the query (recall/narrow.py)."""
    distinct = list(dict.fromkeys(query))
    if len(distinct) < 2:
        return distinct
    return narrow.narrowed(distinct, await rows.term_rows(conn, distinct))


async def by_terms(
    rows: TermIndex,
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
