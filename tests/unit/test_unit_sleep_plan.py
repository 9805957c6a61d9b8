"""A sleep's plan from a real store read a page at a time (sleep_plan.plan on a SnapshotReader)."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from hippod.model import sleep_phases
from hippod.model.memory import Memory
from hippod.model.sleep_plan import Plan, Settings, plan
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, sleep
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

NOW = datetime(2026, 3, 1, tzinfo=UTC)
RECENT = "2026-02-20T00:00:00.000Z"
OLD = "2016-01-01T00:00:00.000Z"  # ten years unused: a 365-day memory has faded


def _plan(path: str, page: int, replay: int = 0) -> Plan:
    ids = itertools.count(1)
    with SnapshotReader(path, page=page) as source:
        return plan(source, Settings(now=NOW, replay_count=replay), lambda: f"sem_{next(ids)}")


def _at(make_memory: Callable[..., Memory], text: str, at: str) -> Memory:
    """A memory made, last changed and last retrieved at `at`."""
    return make_memory(text, created=at, updated_at=at, last_retrieved=at)


async def _quiet(line: str) -> None:
    """A sleep's step lines, heard by nobody."""
    del line


async def _store(database: dbmod.Database, rows: list[Memory]) -> None:
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)


@pytest.mark.parametrize("page", [1, 2, 1000])
async def test_every_phase_on_a_store_read_in_pages(
    database: dbmod.Database, make_memory: Callable[..., Memory], page: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sleep_phases, "MERGE_BATCH", page)  # merge members' rows read a batch at a time

    def fresh(text: str, at: str = RECENT, **fields: object) -> Memory:
        return make_memory(text, created=at, updated_at=at, last_retrieved=at, **fields)

    first = fresh("Deploy to staging failed because the migration was skipped", "2026-02-20T00:00:01.000Z")
    second = fresh(
        "Staging deploy failed: the migration step was skipped again today", "2026-02-20T00:00:02.000Z"
    )
    weak = fresh(
        "Run the linter before every commit in this repository please", strength=0.5, layer="semantic"
    )
    strong = fresh("Run the linter before every commit in this repository", strength=0.9, layer="semantic")
    on = fresh("The feature flag is enabled for production users", layer="trace")
    off = fresh("The feature flag is disabled for production users", pinned=True)
    tiny = fresh("tiny")
    faded = fresh("A plain old fact about the build machine", OLD)
    other = fresh("Deploy to staging failed because the migration was skipped", tenant_id="other")
    await _store(database, [first, weak, on, tiny, second, faded, strong, off, other])

    result = _plan(database.path, page)
    assert [[m.id for m in merge.members] for merge in result.merges] == [[first.id, second.id]]
    assert [(d.deleted.id, d.kept.id) for d in result.duplicates] == [(weak.id, strong.id)]
    assert [(c.a, c.b) for c in result.conflicts.insert] == [tuple(sorted((on.id, off.id)))]
    assert result.live.texts == {on.id: on.content, off.id: off.content}
    assert [j.id for j in result.junk_removed] == [tiny.id]
    assert [m.id for m, _ in result.faded.dormant] == [faded.id]
    # 9 rows, one faded, a duplicate and a junk row gone, one semantic memory made.
    assert (result.live.count, result.live.tenants) == (7, ["default", "other"])


async def test_merged_episodes_read_again_carry_their_replay_and_their_demotion(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # The plan holds a merged episode by its change alone; dedupe, which reads the row again after
    # the merge, must see it replayed (phase 6) and then demoted (phase 8), as the write leaves it.
    text = "Deploy to staging failed because the migration was skipped"
    a = _at(make_memory, text, "2026-02-20T00:00:01.000Z")
    b = _at(make_memory, "Staging deploy failed: the migration step was skipped again today", RECENT)
    b.retrieval_count = 3  # auto-share offers it (share.transfer_score): the plan's copy is the merged row
    again = _at(make_memory, text, "2026-02-20T00:00:03.000Z")
    await _store(database, [a, b, again])
    result = _plan(database.path, 2, replay=10)
    [merge] = result.merges
    assert sorted(m.id for m in result.replayed) == sorted([a.id, b.id, again.id])
    [duplicate] = result.duplicates
    assert {duplicate.deleted.id, duplicate.kept.id} == {a.id, again.id}
    for row in (duplicate.deleted, duplicate.kept):
        assert (row.merged_into, row.updated_at, row.last_retrieved) == (
            merge.semantic.id,
            result.now,
            result.now,
        )
        # The replay's half-life bonus, then the merge's cut to 30 %.
        assert row.half_life_days == math.floor((a.half_life_days + 2.0) * 0.3)
        assert row.strength == next(m.strength for m in merge.members if m.id == row.id)
    assert merge.first_text == b.content  # the earliest member
    [shared] = [m for m in result.live.share if m.id == b.id]
    assert (shared.merged_into, shared.last_retrieved) == (merge.semantic.id, result.now)
    assert shared.half_life_days == math.floor((b.half_life_days + 2.0) * 0.3)


def test_merge_batches_hold_whole_clusters_in_order() -> None:
    clusters = [[1, 2], [3, 4], [5, 6, 7, 8], [9, 10]]
    assert list(sleep_phases._batches(clusters, 3)) == [[[1, 2], [3, 4]], [[5, 6, 7, 8]], [[9, 10]]]
    assert list(sleep_phases._batches(clusters, 100)) == [clusters]
    assert list(sleep_phases._batches([], 3)) == []


async def test_a_daily_plan_compares_only_what_changed(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    text = "Deploy to staging failed because the migration was skipped"
    before, after = "2026-02-01T00:00:00.000Z", "2026-02-25T00:00:00.000Z"
    old_a = _at(make_memory, text, before)
    old_b = _at(make_memory, text + " again", before)
    await _store(database, [old_a, old_b])
    async with database.transaction() as conn:
        await memories.set_meta(conn, "last_sleep", "2026-02-10T00:00:00.000Z")
    # Both settled: the previous sleep compared them, so this one does not.
    assert _plan(database.path, 1).merges == []
    new = _at(make_memory, text + " once more", after)
    await _store(database, [new])
    result = await asyncio.to_thread(_plan, database.path, 1)
    assert [[m.id for m in merge.members] for merge in result.merges] == [[old_a.id, new.id]]


async def test_the_rows_a_sleep_writes_are_settled_for_the_next_until_touched(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    text = "Deploy to staging failed because the migration was skipped"
    first, second = "2026-02-20T00:00:01.000Z", "2026-02-20T00:00:02.000Z"
    a = _at(make_memory, text, first)
    again = "Staging deploy failed: the migration step was skipped again today"  # merged, not a duplicate
    b = _at(make_memory, again, second)
    await _store(database, [a, b])
    planned = _plan(database.path, 1)
    [merge] = planned.merges
    async with database.transaction() as conn:
        await sleep.apply(conn, planned, dormant_at=planned.now, step=_quiet)
        await memories.set_meta(conn, "last_sleep", planned.now)
    named = {str(r[0]) for r in await database.reader.execute_fetchall("SELECT id FROM sleep_compared")}
    assert named == {a.id, b.id, merge.semantic.id}

    # Two more rows carry the sleep's time exactly (a clock that stands still): named, they are settled;
    # unnamed (as the facts a sleep extracts are), or touched since, they are compared again.
    c = _at(make_memory, text + " twice", planned.now)
    d = _at(make_memory, text + " thrice", planned.now)
    await _store(database, [c, d])
    async with database.transaction() as conn:
        await conn.executemany("INSERT INTO sleep_compared (id) VALUES (?)", [(c.id,), (d.id,)])
    assert _plan(database.path, 1).merges == []
    async with database.transaction() as conn:
        await conn.execute("UPDATE memories SET tags = '[]' WHERE id = ?", (d.id,))
    touched = await asyncio.to_thread(_plan, database.path, 1)
    assert [[m.id for m in merge.members] for merge in touched.merges] == [[c.id, d.id]]
    async with database.transaction() as conn:
        await conn.execute("DELETE FROM sleep_compared")
        await conn.execute("INSERT INTO sleep_compared (id) VALUES (?)", (c.id,))
    unnamed = await asyncio.to_thread(_plan, database.path, 1)
    assert [[m.id for m in merge.members] for merge in unnamed.merges] == [[c.id, d.id]]


async def test_a_tenant_sleep_keeps_the_names_and_a_deleted_row_loses_its_own(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    text = "Deploy to staging failed because the migration was skipped"
    at = (
        "2026-02-28T12:00:00.000Z"  # decay moves no cache by CACHE_DRIFT by NOW: the sleep writes neither row
    )
    c, d = _at(make_memory, text + " twice", at), _at(make_memory, text + " thrice", at)
    await _store(database, [c, d])
    async with database.transaction() as conn:
        await memories.set_meta(conn, "last_sleep", at)
        await conn.executemany("INSERT INTO sleep_compared (id) VALUES (?)", [(c.id,), (d.id,)])
    ids = itertools.count(1)
    with SnapshotReader(database.path, tenant="default") as source:
        mine = plan(source, Settings(now=NOW, tenant="default", replay_count=0), lambda: f"sem_{next(ids)}")
    assert mine.merges == []  # both named: settled for a tenant's sleep too

    async with database.transaction() as conn:
        await sleep.apply(conn, mine, dormant_at=mine.now, step=_quiet)
        await conn.execute("DELETE FROM memories WHERE id = ?", (d.id,))
    named = {str(r[0]) for r in await database.reader.execute_fetchall("SELECT id FROM sleep_compared")}
    assert named == {c.id}
    await _store(database, [d])  # the same id again, at the same time: not the row that was named
    result = await asyncio.to_thread(_plan, database.path, 1)
    assert [[m.id for m in merge.members] for merge in result.merges] == [[c.id, d.id]]


async def test_replay_strengthens_but_is_no_retrieval_so_auto_share_is_offered_what_scored_before(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # 0.5 + 0.1 for an "error" tag (stale: not replayed); two retrievals add nothing, nor does replay.
    tagged = make_memory(
        "Pip needs the --user flag on this machine", tags=["error"], last_retrieved=RECENT, confidence="stale"
    )
    replayed = make_memory(
        "The build cache lives in /var/cache/build",
        retrieval_count=2,
        last_retrieved=RECENT,
        half_life_days=30.0,
        strength=0.5,
    )
    plain = make_memory("Lunch is at noon on Fridays", confidence="stale", last_retrieved=RECENT)
    await _store(database, [tagged, replayed, plain])
    result = _plan(database.path, 1, replay=5)
    [again] = result.replayed
    assert again.id == replayed.id
    assert (again.retrieval_count, again.half_life_days, again.strength) == (2, 32.0, 1.0)
    assert again.last_retrieved == "2026-03-01T00:00:00.000Z"
    assert [(m.id, m.retrieval_count) for m in result.live.share] == [(tagged.id, 0)]


async def test_replay_written_by_sql_leaves_the_retrieval_count(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    row = make_memory("Replayed at night", retrieval_count=2, half_life_days=30.0, strength=0.5)
    await _store(database, [row])
    async with database.transaction() as conn:
        await memories.strengthen(conn, [row.id], "2026-03-01T00:00:00.000Z", 2.0, retrieval=False)
    replayed = await memories.get(database.reader, row.tenant_id, row.id)
    assert replayed is not None
    assert (replayed.retrieval_count, replayed.half_life_days, replayed.strength) == (2, 32.0, 1.0)
    async with database.transaction() as conn:
        await memories.strengthen(conn, [row.id], "2026-03-01T00:00:00.000Z", 2.0)  # a recall
    recalled = await memories.get(database.reader, row.tenant_id, row.id)
    assert recalled is not None and recalled.retrieval_count == 3
