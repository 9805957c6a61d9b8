"""Team recall under writes: the statistics FTS5's bm25() needs (a tenant's rows, and how many of them
hold each term) are read in one snapshot, so a write committed in the middle of a recall never
leaves a term in more rows than the tenant holds (a negative IDF's logarithm)."""

from __future__ import annotations

import asyncio

import psycopg
from e2e.sleep_support import make

from hippod.base.tenancy import REQUEST_TENANT
from hippod.store.postgres import memories as rows
from hippod.store.postgres.pg import TeamDatabase
from team.support import store_rows


async def _waiting_on(watch: psycopg.AsyncConnection[tuple[object, ...]], table: str) -> None:
    """Until some backend waits for a lock on `table` (the recall, reading it)."""
    while True:
        cursor = await watch.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = %s::regclass "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (table,),
        )
        found = await cursor.fetchone()
        if found is not None and int(str(found[0])) > 0:
            return
        await asyncio.sleep(0.01)


async def test_a_write_committed_during_a_recall_leaves_its_statistics_consistent(
    team_db: TeamDatabase, pg_dsn: str, tenant: str
) -> None:
    first = (await store_rows(team_db, tenant, "deploy the staging cluster"))[0]
    REQUEST_TENANT.set(tenant)
    async with (
        await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as writer,
        await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as watch,
    ):
        # The writer holds the term statistics: a recall that began reading before it committed waits
        # here, while two more memories holding "deploy" are written (the term's rows then outnumber
        # the rows the tenant held when the recall began).
        await writer.execute("BEGIN")
        await writer.execute("LOCK TABLE term_stats IN ACCESS EXCLUSIVE MODE")
        recall = asyncio.create_task(
            rows.candidates_fts(team_db.reader, tenant, ["deploy"], include_superseded=False, scope=None)
        )
        await asyncio.wait_for(_waiting_on(watch, "term_stats"), timeout=30)
        later = [make(text, tenant_id=tenant) for text in ("deploy on fridays", "deploy after the notes")]
        for memory in later:
            assert await rows.insert(writer, memory)
        await writer.execute("COMMIT")
        found = await asyncio.wait_for(recall, timeout=30)
    # The recall answers from one snapshot: before the writes or after them, whole.
    assert {c.memory.id for c in found} in ({first.id}, {first.id, *(m.id for m in later)})
