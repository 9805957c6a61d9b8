"""The team store's rows on a real PostgreSQL: tenants kept apart by the database itself, migrations
run once however many servers start together, and the term statistics FTS5's bm25() needs kept
exact through inserts, updates and deletes."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from e2e.sleep_support import make

from hippod.model.memory import Memory
from hippod.model.terms import terms
from hippod.store.postgres import memories as rows
from hippod.store.postgres.migrations import MIGRATIONS
from hippod.store.postgres.pg import Conn, TeamDatabase
from team.support import store_rows


async def _count(db: TeamDatabase, tenant: str, query: str) -> int:
    async with db.tenant(tenant) as conn:
        row = await (await conn.execute(query)).fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


async def test_a_tenant_sees_and_writes_only_its_own_rows_whatever_the_sql(team_db: TeamDatabase) -> None:
    await store_rows(team_db, "acme_a", "the staging deploy needs the VPN")
    await store_rows(team_db, "acme_b", "the staging deploy needs a ticket", "use the blue runner")
    # No WHERE clause: row-level security alone keeps each tenant's count to its own rows.
    assert await _count(team_db, "acme_a", "SELECT count(*) FROM memories") == 1
    assert await _count(team_db, "acme_b", "SELECT count(*) FROM memories") == 2
    assert await _count(team_db, "acme_b", "SELECT count(*) FROM term_stats WHERE term = 'vpn'") == 0
    # A row for another tenant cannot be written from inside a tenant's transaction.
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        async with team_db.tenant("acme_a") as conn:
            await rows.insert(conn, make("planted", tenant_id="acme_b"))
    assert await _count(team_db, "acme_b", "SELECT count(*) FROM memories") == 2
    # A transaction that names no tenant sees nothing, although the test logs in as a superuser.
    async with team_db.pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT set_config('role', %s, true)", (team_db.role,))
        row = await (await conn.execute("SELECT count(*) FROM memories")).fetchone()
    assert row == (0,)


async def test_the_same_id_in_two_tenants_is_two_memories(team_db: TeamDatabase) -> None:
    for tenant in ("same_a", "same_b"):
        async with team_db.tenant(tenant) as conn:
            assert await rows.insert(conn, make(f"note of {tenant}", id="mem_shared", tenant_id=tenant))
    async with team_db.tenant("same_b") as conn:
        got = await rows.get(conn, "same_b", "mem_shared")
    assert got is not None and got.content == "note of same_b"


async def test_servers_starting_together_migrate_once(pg_dsn: str) -> None:
    opened = await asyncio.gather(*(TeamDatabase.open(pg_dsn, max_size=1) for _ in range(4)))
    try:
        async with await psycopg.AsyncConnection.connect(pg_dsn) as conn:
            versions = await (await conn.execute("SELECT version FROM schema_version ORDER BY 1")).fetchall()
        assert [v for (v,) in versions] == list(range(1, len(MIGRATIONS) + 1))
    finally:
        for db in opened:
            await db.close()


async def _stats(db: TeamDatabase, tenant: str) -> tuple[dict[str, int], tuple[int, int]]:
    async with db.tenant(tenant) as conn:
        kept = await (await conn.execute("SELECT term, rows FROM term_stats WHERE rows > 0")).fetchall()
        corpus = await (await conn.execute("SELECT rows, tokens FROM tenant_stats")).fetchall()
    return {str(t): int(n) for t, n in kept}, (int(corpus[0][0]), int(corpus[0][1]))


def _expected(memories: list[Memory]) -> tuple[dict[str, int], tuple[int, int]]:
    counts: dict[str, int] = {}
    tokens = 0
    for memory in memories:
        found = terms(memory.content) + terms(" ".join(memory.tags))
        tokens += len(found)
        for term in set(found):
            counts[term] = counts.get(term, 0) + 1
    return counts, (len(memories), tokens)


async def test_term_statistics_follow_every_insert_update_and_delete(
    team_db: TeamDatabase, tenant: str
) -> None:
    kept = await store_rows(team_db, tenant, "deploy the api deploy", "the api key rotates", "a cache note")
    assert await _stats(team_db, tenant) == _expected(kept)
    changed = make("the cache was rebuilt twice", id=kept[2].id, tenant_id=tenant, tags=["cache", "ops"])
    async with team_db.tenant(tenant) as conn:
        await rows.update(conn, changed)
        assert await rows.delete(conn, tenant, kept[0].id)
    assert await _stats(team_db, tenant) == _expected([kept[1], changed])


async def test_a_tombstoned_text_is_refused(team_db: TeamDatabase, tenant: str) -> None:
    from hippod.model.digest import content_digest

    async with team_db.tenant(tenant) as conn:
        await conn.execute(
            "INSERT INTO rejected_values (tenant_id, digest, reason, rejected_by, rejected_at, "
            "normalized_chars) VALUES (%s, %s, 'wrong', 'key:k1', '2026-01-01T00:00:00Z', 10)",
            (tenant, content_digest("Port 8080 is the API")),
        )
    async with team_db.tenant(tenant) as conn:
        assert not await rows.insert(conn, make("port 8080 is the api", tenant_id=tenant))
        assert await rows.insert(conn, make("port 9090 is the api", tenant_id=tenant))


async def test_two_members_superseding_one_memory_at_once_one_wins(
    team_db: TeamDatabase, tenant: str
) -> None:
    [old] = await store_rows(team_db, tenant, "the build uses node 18")

    async def supersede(new_id: str) -> bool:
        async def work(conn: Conn) -> bool:
            return await rows.mark_superseded(conn, old.id, new_id, "2026-02-01T00:00:00Z")

        return await team_db.write(tenant, work)

    results = await asyncio.gather(supersede("mem_new_a"), supersede("mem_new_b"))
    assert sorted(results) == [False, True]
    async with team_db.tenant(tenant) as conn:
        stored = await rows.get(conn, tenant, old.id)
    assert stored is not None
    assert stored.superseded_by == ("mem_new_a" if results[0] else "mem_new_b")
