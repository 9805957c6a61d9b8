"""Choosing recall's candidates by their terms on a real store (hippod/recall/candidates.py)."""

from __future__ import annotations

from collections.abc import Callable

from hippod.model.memory import Memory
from hippod.model.terms import query_terms
from hippod.recall.candidates import by_terms
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories


async def _statements(database: dbmod.Database, query: str) -> tuple[list[str], list[str]]:
    """The ids by_terms finds for `query`, and the statements it ran on the reader (not those the
    FTS5 module runs beneath them, which the trace shows as comments)."""
    traced: list[str] = []
    await database.reader.set_trace_callback(traced.append)
    try:
        found, _ = await by_terms(
            memories, database.reader, "default", query_terms(query), include_superseded=False, scope=None
        )
    finally:
        await database.reader.set_trace_callback(None)
    return [c.memory.id for c in found], [sql for sql in traced if not sql.startswith("--")]


async def test_a_store_holding_none_of_the_query_terms_is_not_searched(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    kept = make_memory("the staging deploy needs the VPN")
    async with database.transaction() as conn:
        assert await memories.insert(conn, kept)
    # The vocabulary says no row holds either term: the candidate statement is not run.
    found, ran = await _statements(database, "kubernetes helm")
    assert found == []
    assert any("memories_fts_vocab" in sql for sql in ran)
    assert not any("MATCH" in sql for sql in ran), ran
    found, ran = await _statements(database, "kubernetes")
    assert (found, [sql for sql in ran if "MATCH" in sql]) == ([], [])
    # One term held is enough to search, and the memory is found.
    found, ran = await _statements(database, "kubernetes deploy")
    assert found == [kept.id]
    assert any("MATCH" in sql for sql in ran)
