"""The continuity tables on a real SQLite file (continuity.md §1-§3, §7; recall.md §9.5)."""

from __future__ import annotations

from datetime import UTC, datetime

import aiosqlite

from hippod.store.sqlite import continuity, ledger, pinned_state
from hippod.store.sqlite import db as dbmod

T0, T1 = "2026-06-01T10:00:00.000Z", "2026-06-01T11:00:00.000Z"


async def save(
    conn: aiosqlite.Connection, tenant: str, task: str, next_step: str | None, session: str | None, now: str
) -> int:
    return await continuity.save_snapshot(
        conn, tenant, task=task, summary="s", next_step=next_step, source="cli", session_id=session,
        scope=None, now=now,
    )  # fmt: skip


async def test_a_new_snapshot_supersedes_the_active_one(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        first = await save(conn, "default", "a", None, "s1", T0)
        second = await save(conn, "default", "b", "n", "s1", T1)
        await save(conn, "other", "c", None, None, T1)
    active = await continuity.active_snapshot(database.reader, "default")
    assert active is not None and (active.id, active.task, active.next_step) == (second, "b", "n")
    rows = await database.reader.execute_fetchall("SELECT status FROM task_snapshots WHERE id = ?", (first,))
    assert [r[0] for r in rows] == ["superseded"]
    async with database.transaction() as conn:
        assert await continuity.clear_snapshot(conn, "default", "cleared", T1)
        assert not await continuity.clear_snapshot(conn, "default", "cleared", T1)
    assert await continuity.active_snapshot(database.reader, "default") is None
    assert await continuity.active_snapshot(database.reader, "other") is not None


async def test_events_come_back_newest_limit_oldest_first(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        for i in range(12):
            await continuity.log_event(conn, "default", session_id="s1", content=f"e{i}", now=T0)
        await continuity.log_event(conn, "default", session_id="s2", content="other", now=T0)
    events = await continuity.recent_events(database.reader, "default", session_id="s1", limit=3)
    assert [e.content for e in events] == ["e9", "e10", "e11"]


async def test_latest_handoff_and_its_artifacts(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        for session in ("s1", "s2"):
            await continuity.create_handoff(
                conn,
                "default",
                session_id=session,
                repo_root="/r",
                task_id=None,
                summary=f"done {session}",
                next_action="next",
                artifacts=["a.py"],
                scope=None,
                now=T0,
            )
    latest = await continuity.latest_handoff(database.reader, "default")
    assert latest is not None and (latest.summary, latest.artifacts) == ("done s2", ["a.py"])
    of_s1 = await continuity.latest_handoff(database.reader, "default", "s1")
    assert of_s1 is not None and of_s1.summary == "done s1"
    assert await continuity.handoff(database.reader, "default", of_s1.id) == of_s1


async def test_ledger_rows_and_pinned_state(database: dbmod.Database) -> None:
    assert ledger.estimate("x" * 9) == 3
    async with database.transaction() as conn:
        await ledger.record(
            conn, "default", ledger.LedgerRow("prompt_hook", 40, items=3, skipped=True), datetime.now(UTC)
        )
        await pinned_state.put(conn, "default", "s1", "abc", 2, T0)
        await pinned_state.put(conn, "default", "s1", "def", 0, T1)
    rows = await database.reader.execute_fetchall("SELECT surface, tokens, items, skipped FROM token_ledger")
    assert [tuple(r) for r in rows] == [("prompt_hook", 40, 3, 1)]
    assert await pinned_state.get(database.reader, "default", "s1") == ("def", 0)
    async with database.transaction() as conn:
        await pinned_state.clear(conn, "default", "s1")
    assert await pinned_state.get(database.reader, "default", "s1") is None


async def test_a_next_step_reads_back_without_its_label(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        await save(conn, "default", "a", "Done. The tests pass.\n\nNext step: wire the budget.", "s1", T0)
    active = await continuity.active_snapshot(database.reader, "default")
    assert active is not None and active.next_step == "wire the budget."
