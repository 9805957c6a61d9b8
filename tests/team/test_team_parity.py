"""Ranking parity: the SQLite store and the team store on PostgreSQL, filled with the same memories,
choose the same candidates and rank the same top 10 for the benches' queries.

Two sets of memories: one LongMemEval haystack as its bench stores it (a memory per user turn, with
its session's date; tests/fixtures/longmemeval, MIT), asked the dev questions; and 3,000 memories of
the synthetic corpus of bench/perf.py with its queries, on which the commonest terms pass the
narrowing limit (recall/narrow.py) and most queries find more than the 200 candidates kept.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from e2e.sleep_support import make

from hippod.model.memory import Memory
from hippod.model.terms import query_terms
from hippod.recall.candidates import CANDIDATE_LIMIT, by_terms
from hippod.recall.merge import merge_results
from hippod.recall.score import ScoreContext, score_candidates
from hippod.store.postgres import memories as pg_rows
from hippod.store.postgres.pg import TeamDatabase
from hippod.store.sqlite import memories as sqlite_rows
from hippod.store.sqlite.db import Database

REPO = Path(__file__).resolve().parents[2]
HAYSTACK = REPO / "tests" / "fixtures" / "longmemeval" / "haystack.json"
sys.path.insert(0, str(REPO / "bench"))
import corpus  # noqa: E402  (bench/corpus.py: the synthetic corpus of the perf benches)

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = START + timedelta(days=60)


def _stamp(minutes: int) -> str:
    return (START + timedelta(minutes=minutes)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _memories(tenant: str, texts: list[tuple[str, list[str]]]) -> list[Memory]:
    """Memories stored two minutes apart, so recency, time order and neighbours all come into play."""
    return [
        make(
            text,
            id=f"mem_{i:06d}",
            tenant_id=tenant,
            tags=tags,
            created=_stamp(2 * i),
            valid_from=_stamp(2 * i),
            last_retrieved=_stamp(2 * i),
            updated_at=_stamp(2 * i),
            retrieval_count=i % 3,
            outcome_positive=int(i % 5 == 0),
            outcome_negative=int(i % 7 == 0),
        )
        for i, (text, tags) in enumerate(texts)
    ]


def _longmemeval() -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The haystack's user turns, each with its session's date, and the questions."""
    data = json.loads(HAYSTACK.read_text(encoding="utf-8"))
    texts = [(f"[{date}] {text}", [f"session:{date[:10]}"]) for date, text in data["turns"]]
    return texts, [str(q) for q in data["questions"]]


def _synthetic() -> tuple[list[tuple[str, list[str]]], list[str]]:
    words = corpus.make_corpus()
    return corpus.make_memories(words, 3000, seed=7), corpus.make_queries(words, 150)


async def _fill(
    sqlite_db: Database, team_db: TeamDatabase, dsn: str, tenant: str, rows: list[Memory]
) -> None:
    """The same rows into both stores; then the team database's planner statistics are brought up to
    date, as autovacuum does within a minute of a load (on the statistics of an empty table, a common
    term's candidates take seconds to plan a way that seconds later takes milliseconds)."""
    async with sqlite_db.transaction() as conn:
        for memory in rows:
            assert await sqlite_rows.insert(conn, memory)

    async def insert(conn: pg_rows.Conn) -> None:
        for memory in rows:
            assert await pg_rows.insert(conn, memory)

    await team_db.write(tenant, insert)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("ANALYZE")


async def _compare(
    sqlite_db: Database, team_db: TeamDatabase, tenant: str, queries: list[str], limit: int = CANDIDATE_LIMIT
) -> int:
    """Assert both backends agree on every query, with `limit` candidates; how many found anything."""
    sc = ScoreContext(NOW, [])
    answered = 0
    for text in queries:
        query = query_terms(text)
        found, stats = {}, {}
        async with team_db.tenant(tenant) as conn:
            found["pg"], stats["pg"] = await by_terms(
                pg_rows, conn, tenant, query, include_superseded=False, scope=None, limit=limit
            )
        found["sqlite"], stats["sqlite"] = await by_terms(
            sqlite_rows, sqlite_db.reader, tenant, query, include_superseded=False, scope=None, limit=limit
        )
        assert stats["pg"] == stats["sqlite"], f"term statistics differ for {text!r}"
        ids = {name: [c.memory.id for c in got] for name, got in found.items()}
        assert ids["pg"] == ids["sqlite"], f"candidates differ for {text!r}"
        assert [c.terms for c in found["pg"]] == [c.terms for c in found["sqlite"]]
        top = {}
        for name, got in found.items():
            scored = score_candidates(
                query,
                [c.memory for c in got],
                [c.terms for c in got],
                sc,
                rowids=[c.rowid for c in got],
                stats=stats[name],
            )
            top[name] = [(s.memory.id, s.score) for s in merge_results(scored, [], 1.0)[:10]]
        assert top["pg"] == top["sqlite"], f"top 10 differ for {text!r}"
        answered += bool(top["pg"])
    return answered


@pytest.mark.long
@pytest.mark.parametrize("bench", ["longmemeval", "synthetic"])
async def test_both_backends_rank_the_bench_queries_alike(
    bench: str, sqlite_db: Database, team_db: TeamDatabase, pg_dsn: str, tenant: str
) -> None:
    texts, queries = _longmemeval() if bench == "longmemeval" else _synthetic()
    await _fill(sqlite_db, team_db, pg_dsn, tenant, _memories(tenant, texts))
    answered = await _compare(sqlite_db, team_db, tenant, queries)
    # Most queries find something, so the comparison is not between two empty lists.
    assert answered >= 0.8 * len(queries)


@pytest.mark.long
async def test_one_common_term_ranks_alike_from_its_best_rows(
    sqlite_db: Database, team_db: TeamDatabase, pg_dsn: str, tenant: str
) -> None:
    """A query of one word held by many more rows than the candidates wanted: the team store reads its
    rows from the best-scoring down (hippo_term_top) and must choose what FTS5 ranks over them all,
    ties at the cut and the rows the admission filter leaves out included."""
    texts, queries = _synthetic()
    rows = _memories(tenant, texts)
    # Some of the best rows are not admitted, so the over-fetch is not all candidates.
    for memory in rows[::9]:
        memory.superseded_by = "mem_999999"
    await _fill(sqlite_db, team_db, pg_dsn, tenant, rows)
    words = list(dict.fromkeys(word for query in queries for word in query.split()))[:100]
    answered = await _compare(sqlite_db, team_db, tenant, words, limit=20)
    assert answered >= 0.8 * len(words)
