"""Lifecycle tables on a real SQLite file: dormant moves, tombstones, decisions (memory-model.md §12-§13)."""

from __future__ import annotations

from collections.abc import Callable

from hippod.lifecycle import invalidate as inv
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.store.records import Rejection
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import decisions, dormant, memories, rejections

NOW = "2026-06-01T00:00:00.000Z"


async def _fts_ids(db: dbmod.Database, term: str) -> list[str]:
    rows = await db.reader.execute_fetchall("SELECT id FROM memories_fts WHERE memories_fts MATCH ?", (term,))
    return [r[0] for r in rows]


async def test_dormant_round_trip_keeps_every_field_and_the_index(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    faded = make_memory("nightly export failed on the replica", tags=["error", "path:etl"], retrieval_count=3)
    async with database.transaction() as conn:
        assert await memories.insert(conn, faded)
        assert await dormant.move_in(conn, [faded.id, "mem_missing"], "faded", NOW) == 1
    assert await memories.get(database.reader, "default", faded.id) is None
    assert await _fts_ids(database, "replica") == []  # out of recall with it
    found = await dormant.get(database.reader, "default", faded.id)
    assert found is not None and (found.dormant_at, found.reason) == (NOW, "faded")
    assert found.memory == faded
    assert await dormant.count(database.reader, "default") == 1
    assert [d.memory.id for d in await dormant.newest(database.reader, "default")] == [faded.id]

    async with database.transaction() as conn:
        assert await dormant.move_out(conn, faded.id)
        assert not await dormant.move_out(conn, faded.id)
    assert await memories.get(database.reader, "default", faded.id) == faded
    assert await _fts_ids(database, "replica") == [faded.id]
    assert await dormant.count(database.reader, "default") == 0


async def test_dormant_copies_of_a_value_are_deleted_by_digest(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    one, two = make_memory("Use the old API"), make_memory("use the  OLD api")
    other = make_memory("Use the new API")
    async with database.transaction() as conn:
        for memory in (one, two, other):
            assert await memories.insert(conn, memory)
        await dormant.move_in(conn, [one.id, two.id, other.id], "faded", NOW)
        removed = await dormant.delete_digest(conn, "default", content_digest("use the old api"))
    assert sorted(removed) == sorted([one.id, two.id])
    assert [d.memory.id for d in await dormant.newest(database.reader, "default")] == [other.id]


async def test_tombstones_block_inserts_and_match_by_prefix(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    digest = content_digest("never store this")
    tomb = Rejection(digest, "wrong", "cli:1", NOW, None, 16)
    async with database.transaction() as conn:
        assert await rejections.add(conn, "default", tomb)
        assert not await rejections.add(conn, "default", tomb)  # once
        assert not await memories.insert(conn, make_memory("Never store  THIS"))
        assert await memories.insert(conn, make_memory("never store this", tenant_id="other"))
    assert await rejections.matching(database.reader, "default", digest[:5]) == [digest]
    assert await rejections.matching(database.reader, "other", digest[:5]) == []
    assert [r.digest for r in await rejections.all_of(database.reader, "default")] == [digest]
    async with database.transaction() as conn:
        assert await rejections.remove(conn, "default", digest)
        assert await memories.insert(conn, make_memory("never store this"))


async def test_decisions_supersede_and_close(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        first = await decisions.insert(conn, "default", "Use Postgres", "ACID", "mem_a", NOW)
        second = await decisions.insert(conn, "default", "Use SQLite", None, "mem_b", NOW)
        assert await decisions.supersede_active_for(conn, "default", "mem_a", second, NOW) == [first]
        assert await decisions.close(conn, "default", second, NOW)
        assert not await decisions.close(conn, "default", second, NOW)
    got = await decisions.get(database.reader, "default", first)
    assert got is not None and (got.status, got.superseded_by, got.superseded_at) == (
        "superseded",
        second,
        NOW,
    )
    assert [d.n for d in await decisions.listed(database.reader, "default", "closed")] == [second]
    assert [d.n for d in await decisions.listed(database.reader, "default", None)] == [second, first]


def test_invalidate_tokens_and_matching() -> None:
    assert inv.tokens("The old Redis-cache is on port 6379, v2.1!") == {"redis-cache", "port", "6379", "v2.1"}
    # Half of the pattern's tokens (rounded up) must be in the memory.
    assert inv.matches("redis session cache", "the session cache lives in redis", [])
    assert inv.matches("redis session cache", "redis and session things", [])
    assert not inv.matches("redis session cache", "redis alone here", [])
    assert not inv.matches("redis session cache", "sessions are cached in redis", [])  # no stemming
    # Or a tag equal to the whole pattern, whatever the content.
    assert inv.matches("Legacy-Billing", "nothing in common", ["legacy-billing"])
    assert not inv.matches("the of", "the of", [])  # only stopwords: nothing to match
    assert [inv.halved(x) for x in (365, 3, 1, 1.5)] == [182, 1, 1, 1]
