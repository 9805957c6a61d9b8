"""The import's SQL on a real SQLite file: one transaction for the whole batch, tombstones, late arrivals."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippod.ingest.chunking import Chunk
from hippod.ingest.import_core import nothing_stored, prepare
from hippod.ingest.planner import Plan, plan_chunk_parts
from hippod.model.memory import Memory
from hippod.store.sqlite import imports as sql
from hippod.store.sqlite import memories, rejections
from hippod.store.sqlite.db import Database


def _memory(text: str, tags: list[str], n: list[int]) -> Memory:
    n[0] += 1
    return Memory(
        id=f"mem_{n[0]:012d}",
        tenant_id="default",
        content=text,
        layer="episodic",
        kind="distilled",
        created="2026-01-01T00:00:00.000Z",
        valid_from="2026-01-01T00:00:00.000Z",
        last_retrieved="2026-01-01T00:00:00.000Z",
        retrieval_count=0,
        half_life_days=365.0,
        strength=1.0,
        emotional_valence="neutral",
        schema_fit=0.5,
        tags=tags,
        source="import:file",
        confidence="observed",
        pinned=False,
        outcome_positive=0,
        outcome_negative=0,
        outcome_score=None,
        updated_at="2026-01-01T00:00:00.000Z",
    )


async def test_a_failing_row_rolls_the_whole_import_back(tmp_path: Path) -> None:
    db, _ = await Database.open(str(tmp_path / "hippo.db"))
    try:
        counter = [0]
        chunks = [Chunk(f"batch memory alpha{i} beta{i} gamma{i}") for i in range(50)]
        prepared = prepare(chunks, ["imported"], [])
        plan = Plan.joined(
            plan_chunk_parts(prepared, nothing_stored, set(), lambda t, tags: _memory(t, tags, counter))
        )
        assert len(plan.rows) == 50
        plan.rows[-1][2] = None  # content NOT NULL: the last insert fails
        with pytest.raises(Exception, match="NOT NULL"):
            async with db.transaction() as conn:
                await sql.insert_rows(conn, plan.rows)
        assert (await sql.live_texts(db.reader, "default"))[1] == []
        plan.rows[-1][2] = "batch memory alpha49 beta49 gamma49"
        async with db.transaction() as conn:
            await sql.insert_rows(conn, plan.rows)
        top, texts = await sql.live_texts(db.reader, "default")
        assert len(texts) == 50
        # Only what came after a row number, and only live rows of the tenant.
        assert (await sql.live_texts(db.reader, "default", top))[1] == []
        assert (await sql.live_texts(db.reader, "other"))[1] == []
        found = await memories.candidates_fts(
            db.reader, "default", ["batch"], include_superseded=False, scope=None
        )
        assert len(found) == 50  # the index terms went in with the rows
    finally:
        await db.close()


async def test_rejected_digests_are_per_tenant(tmp_path: Path) -> None:
    db, _ = await Database.open(str(tmp_path / "hippo.db"))
    try:
        async with db.transaction() as conn:
            await conn.execute(
                "INSERT INTO rejected_values (tenant_id, digest, reason, rejected_at, rejected_by, "
                "normalized_chars) VALUES ('default', 'abc', 'r', '2026-01-01T00:00:00.000Z', 'cli', 3)"
            )
        assert await rejections.all_digests(db.reader, "default") == {"abc"}
        assert await rejections.all_digests(db.reader, "other") == set()
    finally:
        await db.close()
