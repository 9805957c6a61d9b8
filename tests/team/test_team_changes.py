"""The team server's feed of changes (store/postgres/changes.py) on a real PostgreSQL: pages in order, one
tenant's rows alone, deletions, and a write that commits after a sync read past it."""

from __future__ import annotations

from hippod.store.postgres import changes
from hippod.store.postgres import memories as rows
from hippod.store.postgres.pg import Conn, TeamDatabase
from team.support import store_rows


async def _store(db: TeamDatabase, tenant: str, *contents: str) -> list[str]:
    return [m.id for m in await store_rows(db, tenant, *contents)]


async def _sync(
    db: TeamDatabase, tenant: str, cursor: str | None, limit: int
) -> tuple[list[list[str]], list[str], str]:
    """Every page from `cursor` on: (the ids of each page, the ids deleted, the cursor to keep)."""
    pages: list[list[str]] = []
    deleted: list[str] = []
    keep: str | None = None
    while True:
        async with db.tenant(tenant) as conn:
            page = await changes.since(conn, tenant, cursor, limit)
        pages.append([m.id for m in page.memories])
        deleted += page.deleted
        keep = keep or page.horizon
        if page.next is None:
            return pages, deleted, keep
        cursor = page.next


async def _xid_of(db: TeamDatabase, tenant: str, memory_id: str) -> str:
    async with db.tenant(tenant) as conn:
        row = await (
            await conn.execute("SELECT changed_xid::text FROM memories WHERE id = %s", (memory_id,))
        ).fetchone()
    assert row is not None
    return str(row[0])


async def test_pages_come_in_order_and_hold_one_tenant_alone(team_db: TeamDatabase, tenant: str) -> None:
    ids: list[str] = []
    for n in range(5):  # five transactions of five rows
        ids += await _store(team_db, tenant, *(f"note {n}-{k} about the build" for k in range(5)))
    await _store(team_db, tenant + "_other", "another tenant's note")
    pages, deleted, _ = await _sync(team_db, tenant, None, 10)
    assert [len(p) for p in pages] == [10, 10, 5] and deleted == []
    # Oldest transaction first; inside one, by id.
    in_order = [sorted(ids[n : n + 5]) for n in range(0, 25, 5)]
    assert [i for p in pages for i in p] == [i for chunk in in_order for i in chunk]
    async with team_db.tenant(tenant) as conn:
        try:
            await changes.since(conn, tenant, "not-a-cursor", 10)
        except ValueError as exc:
            assert "not a sync cursor" in str(exc)
        else:
            raise AssertionError("a malformed cursor was taken")


async def test_a_deletion_and_an_update_reach_the_next_sync(team_db: TeamDatabase, tenant: str) -> None:
    first, second = await _store(team_db, tenant, "the VPN is needed", "releases on Tuesdays")
    _, _, cursor = await _sync(team_db, tenant, None, 100)

    async def change(conn: Conn) -> None:
        assert await rows.delete(conn, tenant, first)
        await rows.strengthen(conn, [second], "2026-06-01T00:00:00.000Z", 2.0)

    await team_db.write(tenant, change)
    pages, deleted, _ = await _sync(team_db, tenant, cursor, 100)
    assert deleted == [first] and [i for p in pages for i in p] == [second]


async def test_a_write_that_commits_after_a_sync_read_past_it_is_read_by_the_next(
    team_db: TeamDatabase, tenant: str
) -> None:
    [early] = await _store(team_db, tenant, "an early note")
    _, _, start = await _sync(team_db, tenant, None, 100)
    # An older transaction changes a row and stays open while a younger one writes and commits.
    # (Inserts of one tenant queue behind each other on its term statistics; an update that keeps
    # the terms, such as a retrieval's, does not.)
    async with team_db.tenant(tenant) as late:
        await rows.strengthen(late, [early], "2026-06-01T00:00:00.000Z", 2.0)
        [quick] = await _store(team_db, tenant, "the quick writer's note")
        pages, _, cursor = await _sync(team_db, tenant, start, 100)
        # The quick writer's note is read, last. (The early note's row as it was may come again: a
        # transaction of another test anywhere on the server holds the horizon back, and a member
        # applies rows by id, so reading one twice changes nothing.)
        seen = [i for p in pages for i in p]
        assert seen[-1] == quick and set(seen) <= {early, quick}
        async with team_db.tenant(tenant) as conn:
            last = await changes.since(conn, tenant, start, 100)
        # Resuming from the last row read would start past the open transaction's id...
        assert last.memories[-1].id == quick
    after_row = await _sync(team_db, tenant, f"{await _xid_of(team_db, tenant, quick)}:{quick}", 100)
    # ...but the cursor a member keeps is the horizon, from which the late commit is read.
    pages, _, _ = await _sync(team_db, tenant, cursor, 100)
    assert early in [i for p in pages for i in p]
    assert early not in [i for p in after_row[0] for i in p]
