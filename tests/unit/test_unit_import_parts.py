"""An import planned part by part, on real SQLite stores: a planning process gives the parts the
daemon's own planning gives (ingest/plan_process.py), and the write begins once the plan is near its
end (ingest/import_write.py)."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hippod.calls.progress import Steps
from hippod.ingest.chunking import Chunk
from hippod.ingest.import_core import DUPLICATE_ABOVE, JUDGE_BATCH, prepare, token_set
from hippod.ingest.import_write import Handoff, worth_writing
from hippod.ingest.plan_process import Job, plan_in_child
from hippod.ingest.planner import ChunkMemory, Plan, plan_chunk_parts
from hippod.lifecycle.new_memory import Origin
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, near_index
from hippod.store.sqlite.import_probe import StoredProbe
from hippod.store.sqlite.near_lookup import AHEAD, Ahead, NearLookup, snapshot

WORDS = "deploy cache redis postgres build broke test lint pipeline config auth token queue worker".split()
MAKE = ChunkMemory(Origin("default", "session-1", "proj"), "markdown", 365.0)


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(4, 10))) + f" {rng.randrange(10**6)}"


def _near(rng: random.Random, text: str) -> str:
    words = text.split()
    words[rng.randrange(len(words) - 1)] = rng.choice(WORDS)
    return " ".join(words)


def _shape(parts: list[Plan]) -> list[tuple[Any, ...]]:
    """What a plan's parts decided, without the ids and times each run makes afresh."""
    return [
        (
            part.total,
            part.skipped,
            part.rejected,
            [
                (m.content, m.tags, m.source, m.confidence, m.half_life_days, m.origin_project)
                for m in part.memories
            ],
            part.digests,
            [row[-3:] for row in part.rows],  # the digest and the index terms
        )
        for part in parts
    ]


async def test_a_planning_process_gives_the_parts_of_the_planning_thread(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rng = random.Random(38)
    live = [_text(rng) for _ in range(400)]
    async with database.transaction() as conn:
        for text in live:
            assert await memories.insert(conn, make_memory(text))
    # The stored memories' band keys go into the index's levels, as the daemon writes them, so the
    # plan searches them there (a planning process, in a thread ahead of its judge).
    assert await near_index.catch_up(database) == len(live)
    await near_index.compact(database)
    texts = [_near(rng, rng.choice(live)) for _ in range(600)] + [_text(rng) for _ in range(1_800)]
    texts += [_near(rng, t) for t in texts[-300:]]  # near-copies within the run
    rng.shuffle(texts)
    prepared = prepare([Chunk(t, ["notes"]) for t in texts], ("imported",), [])
    with StoredProbe(database.path, "default", DUPLICATE_ABOVE) as probe:
        rejected = probe.rejected_digests()
        here = list(plan_chunk_parts(prepared, probe.duplicates, rejected, MAKE))

    handoff = Handoff(asyncio.get_running_loop(), len(prepared.texts))
    job = Job(database.path, "default", True, prepared, MAKE, True)
    steps = Steps(least=1)
    await plan_in_child(job, handoff, steps)
    there = [part async for part in handoff.parts()]

    assert len(there) == -(-len(texts) // JUDGE_BATCH) > 1
    assert _shape(there) == _shape(here)
    whole = Plan.joined(there)
    assert whole.total == len(texts) and whole.skipped > 400 and len(whole.memories) > 1_500
    assert handoff.done and steps.take()[0][-1].done == len(texts)
    assert handoff.seen == (len(live), set())  # the highest row number the plan saw, no tombstone


async def test_a_planning_process_that_fails_raises_its_sqlite_error_here_and_in_the_parts(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "hippo.db"
    bad.write_bytes(b"this is not a database, " * 200)
    prepared = prepare([Chunk("one chunk of text to plan", [])], ("imported",), [])
    handoff = Handoff(asyncio.get_running_loop(), 1)
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        await plan_in_child(Job(str(bad), "default", True, prepared, MAKE, True), handoff, Steps.quiet())
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        _ = [part async for part in handoff.parts()]


def test_the_write_begins_once_the_plan_left_is_no_longer_than_the_write() -> None:
    # 10,000 chunks planned at 3,000 a second, each a memory: 2 s of writing at 4,000 rows a second.
    assert not worth_writing(10_000, 1_024, 1_024, 0, 0.0)  # no pace yet
    assert not worth_writing(10_000, 2_048, 2_048, 1_024, 0.34)  # 2.7 s of plan left
    assert worth_writing(10_000, 5_120, 5_120, 4_096, 1.37)  # 1.6 s left
    # A file of near-copies of each other: 60,000 chunks at 100 a second, few of them new.
    assert not worth_writing(60_000, 50_000, 200, 49_000, 490.0)
    assert worth_writing(60_000, 59_999, 200, 58_999, 590.0)
    # Nothing to store so far: no reason to hold the writer; the whole plan: always.
    assert not worth_writing(10_000, 5_000, 0, 4_000, 1.0)
    assert worth_writing(10_000, 10_000, 0, 9_000, 3.0)


async def test_lookups_ahead_read_one_moment_and_stay_a_few_batches_ahead(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    live = [_text(rng) for _ in range(300)]
    async with database.transaction() as conn:
        for text in live:
            assert await memories.insert(conn, make_memory(text))
    await near_index.catch_up(database)  # every key in level 0
    sets = [token_set(_near(rng, text)) for text in live]

    # A merge into a level that did not exist when the lookup began moves every key: a lookup on
    # one moment still finds them where they were.
    view = snapshot(database.path)
    try:
        lookup = NearLookup(view, "default")
        before = lookup.candidates(sets[:50])
        assert sum(map(len, before)) >= 50
        monkeypatch.setattr(near_index, "LEVEL0_KEYS", 800)
        assert await near_index.compact(database) > 0
        assert lookup.candidates(sets[:50]) == before
    finally:
        view.close()

    # The thread ahead stops AHEAD batches past what was asked for, and finds what a lookup finds.
    view = snapshot(database.path)
    try:
        plain = NearLookup(view, "default")
        ahead = Ahead(database.path, plain, sets, 5)
        try:
            assert ahead.candidates([0, 1]) == plain.candidates(sets[:2])
            for _ in range(50):
                assert ahead._ready <= ahead._wanted + (AHEAD + 1) * 5
                time.sleep(0.01)
            assert ahead.candidates(list(range(2, len(sets)))) == plain.candidates(sets[2:])
        finally:
            ahead.close()
    finally:
        view.close()
