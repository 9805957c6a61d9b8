"""The SQL behind hippo_assemble and hippo_predict_baserate on a real SQLite file."""

from __future__ import annotations

from collections.abc import Callable

from hippod.model.memory import Memory
from hippod.store.sqlite import continuity, memories, traces
from hippod.store.sqlite import db as dbmod

T = "2026-06-01T10:00:00.000Z"


async def test_a_sessions_events_and_handoffs_by_scope(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        for n, (session, scope) in enumerate([("s1", None), ("s1", "repo"), ("s1", "other"), ("s2", None)]):
            await continuity.log_event(
                conn, "default", session_id=session, content=f"e{n}", scope=scope, now=T
            )
        await continuity.log_event(conn, "team", session_id="s1", content="other tenant", now=T)
        for summary, scope in [("h0", None), ("h1", "other")]:
            await continuity.create_handoff(
                conn, "default", session_id="s1", repo_root=None, task_id=None, summary=summary,
                next_action=None, artifacts=[], scope=scope, now=T,
            )  # fmt: skip
    reader = database.reader
    every = await continuity.session_events(reader, "default", "s1", scope=None, limit=10)
    assert [e.content for e in every] == ["e0", "e1", "e2"]
    scoped = await continuity.session_events(reader, "default", "s1", scope="repo", limit=10)
    assert [e.content for e in scoped] == ["e0", "e1"]
    newest = await continuity.session_events(reader, "default", "s1", scope=None, limit=2)
    assert [e.content for e in newest] == ["e1", "e2"]
    handoffs = await continuity.session_handoffs(reader, "default", "s1", scope="repo", limit=10)
    assert [h.summary for h in handoffs] == ["h0"]
    assert await continuity.session_handoffs(reader, "default", "s2", scope=None, limit=10) == []


async def test_trace_outcomes_with_a_tag(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rows = [
        make_memory("t1", layer="trace", tags=["migration", "db"], trace_outcome="success"),
        make_memory("t2", layer="trace", tags=["migration"], trace_outcome=None),
        make_memory("t3", layer="trace", tags=["migrations"], trace_outcome="failure"),
        make_memory("t4", layer="episodic", tags=["migration"], trace_outcome="failure"),
        make_memory("t5", layer="trace", tags=["migration"], trace_outcome="failure", superseded_by="mem_x"),
        make_memory("t6", layer="trace", tags=["migration"], trace_outcome="partial", tenant_id="team"),
    ]
    async with database.transaction() as conn:
        for row in rows:
            assert await memories.insert(conn, row)
    found = await traces.outcomes_with_tag(database.reader, "default", "migration")
    assert sorted(outcome or "-" for _, outcome in found) == ["-", "success"]
    assert all(len(digest) > 10 for digest, _ in found)
