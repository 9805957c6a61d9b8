"""Recall's candidates from the team store (the `MemoryRows` functions `term_statistics`,
`candidates_fts`, `candidates_oldest`, `candidates_ids` and `admitted`, which store/postgres/memories.py
gives as its own): the tenant's term statistics and its best matches by FTS5's bm25(), as the SQLite
store chooses them (recall/candidates.py)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import admission, row_to_memory
from hippod.store.postgres.pg import Source, TeamReader, current_tenant, fetch
from hippod.store.records import Candidate, TermStats

_SELECT = ", ".join(COLUMNS)
_CANDIDATE_COLS = ", ".join(f"m.{c}" for c in COLUMNS) + ", m.terms, m.seq"

# FTS5's bm25() (sqlite's fts5_aux.c), so that both backends choose the same candidates: its k1 and b,
# its IDF with the same floor, and its arithmetic in the same order (migration_term_ranks.py).
FTS5_K1 = 1.2
FTS5_B = 0.75
FTS5_IDF_FLOOR = 1e-6


def _admission(tenant: str, include_superseded: bool, scope: str | None) -> tuple[str, list[Any]]:
    return admission(tenant, include_superseded, scope, mark="%s")


async def term_statistics(conn: Source, terms: Sequence[str]) -> TermStats:
    """The tenant's row count and how many of its rows hold each of `terms`, from one snapshot."""
    rows, _, hits = _statistics(await fetch(conn, _STATISTICS, (list(dict.fromkeys(terms)),)))
    return TermStats(rows, hits)


# The tenant's (rows, tokens) and the rows holding each of the terms, in one statement and so one
# snapshot: each write changes both in its own transaction, so read together a term is never in more
# rows than the tenant holds (read apart, a write committed in between made FTS5's IDF log a negative).
_STATISTICS = (
    "SELECT s.rows, s.tokens, t.term, t.rows FROM tenant_stats s LEFT JOIN term_stats t "
    "ON t.tenant_id = s.tenant_id AND t.term = ANY(%s) AND t.rows > 0"
)


def _statistics(found: Sequence[Sequence[Any]]) -> tuple[int, int, dict[str, int]]:
    """(rows, tokens, rows holding each term) from the rows of _STATISTICS; zeros for an empty tenant."""
    if not found:
        return 0, 0, {}
    hits = {str(r[2]): int(r[3]) for r in found if r[2] is not None}
    return int(found[0][0]), int(found[0][1]), hits


@asynccontextmanager
async def _with_statistics(
    conn: Source, terms: Sequence[str]
) -> AsyncIterator[tuple[Source, tuple[int, int, dict[str, int]]]]:
    """The tenant's statistics for `terms`, and where to read its candidates: through the reader, a
    REPEATABLE READ transaction begun in the same round trip as the statistics, so the candidates
    are ranked from the rows those statistics count, as FTS5 reads one snapshot; else the
    transaction `conn` is in."""
    if isinstance(conn, TeamReader):
        async with conn.db.snapshot(current_tenant(), _STATISTICS, (list(terms),)) as (tx, found):
            yield tx, _statistics(found)
    else:
        yield conn, _statistics(await fetch(conn, _STATISTICS, (list(terms),)))


def fts5_idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a term held by `hits` of `rows` rows, floored where it would go negative."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else FTS5_IDF_FLOOR


# Recall's candidates: the tenant's best-ranked matches by FTS5's bm25() (`ranking`, one of the
# functions of migration_term_ranks.py, which read the indexes), then those of them the admission
# filter lets through, tie-broken as in SQLite. Parameters: the terms (or term), their IDFs (or its),
# k1 + 1, k1, 1 - b, b, avgdl, how many matches to rank; the filter's; the limit. Its last column
# counts the ranked matches.
def _ranked_sql(ranking: str, where: str) -> str:
    wanted = "%s::text, %s::float8" if ranking == "hippo_term_top" else "%s::text[], %s::float8[]"
    return (
        f"WITH r AS MATERIALIZED (SELECT * FROM {ranking}({wanted}, {', '.join(['%s::float8'] * 5)}, %s)) "
        f"SELECT {_CANDIDATE_COLS}, (SELECT count(*) FROM r) FROM r JOIN memories m ON m.seq = r.seq "
        f"WHERE {where} "
        'ORDER BY r.score DESC, m.updated_at DESC, m.content COLLATE "C", m.id COLLATE "C" LIMIT %s'
    )


# The matches ranked per candidate wanted; when the admission filter leaves too few of a full
# over-fetch, every match is ranked. With ties at the cut, every match as good as the last is in.
OVERFETCH = 2
EVERY_MATCH = 2**31 - 1
# One term in more rows than this many times the matches ranked is read from its best rows down
# (hippo_term_top): ranking a few thousand rows whole costs less than the keys' lookups.
TOP_FROM = 5


async def candidates_fts(
    conn: Source,
    tenant: str,
    terms: Sequence[str],
    *,
    include_superseded: bool,
    scope: str | None,
    limit: int = 200,
) -> list[Candidate]:
    """Admitted memories holding any of `terms`, best FTS5 bm25() first, with their BM25 terms; ties go
    as in SQLite: the most recently updated, then by content and id in byte order.

    The best `OVERFETCH` x `limit` matches are ranked first, through the indexes; when the filter
    leaves fewer than `limit` of a full over-fetch, every match is ranked instead."""
    distinct = list(dict.fromkeys(terms))
    if not distinct:
        return []
    async with _with_statistics(conn, distinct) as (tx, (total_rows, total_tokens, hits)):
        if total_rows == 0:
            return []
        idfs = [fts5_idf(total_rows, hits.get(t, 0)) for t in distinct]
        avgdl = float(total_tokens) / float(total_rows)
        bm25 = [FTS5_K1 + 1.0, FTS5_K1, 1 - FTS5_B, FTS5_B, avgdl]
        where, params = _admission(tenant, include_superseded, scope)
        fetched = OVERFETCH * limit
        if len(distinct) == 1 and hits.get(distinct[0], 0) > TOP_FROM * fetched:
            # One term in many rows (the only kind narrowing leaves in more than a few thousand):
            # its rows are read from the best-scoring down, not all ranked.
            ranked = [distinct[0], idfs[0], *bm25, fetched]
            rows = await fetch(tx, _ranked_sql("hippo_term_top", where), [*ranked, *params, limit])
        else:
            ranked = [distinct, idfs, *bm25, fetched]
            rows = await fetch(tx, _ranked_sql("hippo_term_ranks", where), [*ranked, *params, limit])
        if len(rows) < limit and (not rows or int(rows[0][-1]) >= fetched):
            ranked = [distinct, idfs, *bm25, EVERY_MATCH]
            rows = await fetch(tx, _ranked_sql("hippo_term_ranks", where), [*ranked, *params, limit])
    return _candidates(row[:-1] for row in rows)


def _candidates(rows: Iterable[Sequence[Any]]) -> list[Candidate]:
    """Candidates from rows of _CANDIDATE_COLS: the memory's columns, its terms, its seq."""
    return [Candidate(row_to_memory(r), list(r[-2]), int(r[-1])) for r in rows]


async def candidates_oldest(
    conn: Source, tenant: str, *, include_superseded: bool, scope: str | None, limit: int = 200
) -> list[Candidate]:
    """The oldest admitted memories, for cosine-only ranking when no term matches (recall.md §2.3)."""
    where, params = _admission(tenant, include_superseded, scope)
    rows = await fetch(
        conn,
        f"SELECT {_CANDIDATE_COLS} FROM memories m WHERE {where} "
        'ORDER BY m.created, m.id COLLATE "C" LIMIT %s',
        [*params, limit],
    )
    return _candidates(rows)


async def candidates_ids(
    conn: Source, tenant: str, ids: Sequence[str], *, include_superseded: bool, scope: str | None
) -> list[Candidate]:
    """The admitted memories among `ids`, as recall candidates (in no particular order)."""
    if not ids:
        return []
    where, params = _admission(tenant, include_superseded, scope)
    rows = await fetch(
        conn,
        f"SELECT {_CANDIDATE_COLS} FROM memories m WHERE {where} AND m.id = ANY(%s)",
        [*params, list(ids)],
    )
    return _candidates(rows)


async def admitted(conn: Source, tenant: str, *, scope: str | None) -> list[Memory]:
    """Every memory the recall admission filter lets through (recall.md §2), for `context`'s `*` mode."""
    where, params = _admission(tenant, False, scope)
    rows = await fetch(
        conn, f'SELECT {_SELECT} FROM memories m WHERE {where} ORDER BY m.created, m.id COLLATE "C"', params
    )
    return [row_to_memory(r) for r in rows]
