"""Working memory on a real SQLite file (continuity.md §5): capacity, eviction order, scopes, tenants."""

from __future__ import annotations

from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import working_memory as wm


def _at(n: int) -> str:
    return f"2026-06-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


async def _push(database: dbmod.Database, content: str, importance: float, n: int, **kw: str) -> int:
    scope = kw.get("scope", "repo")
    tenant = kw.get("tenant", "default")
    async with database.transaction() as conn:
        _, evicted = await wm.push(
            conn, tenant, scope=scope, content=content, importance=importance, session_id=None, now=_at(n)
        )
    return evicted


async def test_the_spec_example_evicts_the_older_of_two_lowest(database: dbmod.Database) -> None:
    assert await _push(database, "high", 0.9, 0) == 0
    await _push(database, "older half", 0.5, 1)
    await _push(database, "newer half", 0.5, 2)
    for n in range(17):
        await _push(database, f"filler {n}", 0.8, 3 + n)
    assert await _push(database, "new", 0.7, 30) == 1
    contents = [e.content for e in await wm.read(database.reader, "default", "repo")]
    assert len(contents) == 20
    assert "older half" not in contents and contents[-1] == "newer half"


async def test_a_new_entry_below_every_other_is_itself_evicted(database: dbmod.Database) -> None:
    for n in range(20):
        await _push(database, f"e{n}", 0.6, n)
    assert await _push(database, "weak", 0.1, 40) == 1
    contents = [e.content for e in await wm.read(database.reader, "default", "repo")]
    assert "weak" not in contents and len(contents) == 20


async def test_eviction_stays_inside_its_scope_and_tenant(database: dbmod.Database) -> None:
    await _push(database, "other scope", 0.0, 0, scope="x")
    await _push(database, "other tenant", 0.0, 0, tenant="acme")
    for n in range(21):
        await _push(database, f"e{n}", 0.5, n + 1)
    assert [e.content for e in await wm.read(database.reader, "default", "x")] == ["other scope"]
    assert [e.content for e in await wm.read(database.reader, "acme", "repo")] == ["other tenant"]
    repo = [e.content for e in await wm.read(database.reader, "default", "repo")]
    assert "e0" not in repo and repo[0] == "e20"  # equal importance: newest first, the oldest went


async def test_remove_filters_by_session(database: dbmod.Database) -> None:
    async with database.transaction() as conn:
        for n, session in enumerate(["a", "b", None]):
            await wm.push(
                conn, "default", scope="s", content=f"c{n}", importance=0.5, session_id=session, now=_at(n)
            )
    async with database.transaction() as conn:
        removed = await wm.remove(conn, "default", "s", "a")
    assert [e.content for e in removed] == ["c0"]
    async with database.transaction() as conn:
        removed = await wm.remove(conn, "default", "s", None)
    assert [e.content for e in removed] == ["c2", "c1"]
    assert await wm.read(database.reader, "default", "s") == []
