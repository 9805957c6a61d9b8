"""Store opening, migrations, FTS and the memories SQL, on real SQLite files (memory-model.md §1, §16)."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from hippod.base.errors import HippoError
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.model.terms import terms
from hippod.model.tokenize import tokenize
from hippod.store.records import Candidate, TermStats
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, migrations, prepare

CJK = "数据管道缓存丢失了序列"
SCHEMA_VERSION_SQL = "SELECT value FROM meta WHERE key = 'schema_version'"


def _query(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _scalar(path: Path, sql: str) -> Any:
    return _query(path, sql)[0][0]


def _tables(path: Path) -> set[str]:
    return {r[0] for r in _query(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}


# --- prepare and migrations --------------------------------------------------------------------------


def test_prepare_fresh_database(tmp_path: Path) -> None:
    path = tmp_path / "hippo.db"
    prepared = prepare.prepare(str(path))
    assert prepared.schema == migrations.SCHEMA_VERSION
    assert migrations.SCHEMA_VERSION >= 1
    assert _scalar(path, "PRAGMA user_version") == migrations.SCHEMA_VERSION
    assert _scalar(path, SCHEMA_VERSION_SQL) == str(migrations.SCHEMA_VERSION)
    assert _scalar(path, "PRAGMA application_id") == 0x48505044 == prepare.APPLICATION_ID
    assert _scalar(path, "PRAGMA journal_mode") == "wal"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert {"memories", "meta", "audit_log", "rejected_values", "raw_archive"} <= _tables(path)
    fts = _scalar(path, "SELECT value FROM meta WHERE key = 'fts5_available'")
    assert fts == ("1" if prepared.fts5 else "0")
    if prepared.fts5:
        assert "memories_fts" in _tables(path)


def test_prepare_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "hippo.db"
    first = prepare.prepare(str(path))
    second = prepare.prepare(str(path))
    assert first == second
    assert _scalar(path, "PRAGMA user_version") == migrations.SCHEMA_VERSION
    assert _scalar(path, "SELECT count(*) FROM meta WHERE key = 'schema_version'") == 1


def test_foreign_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hippo.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1")
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(HippoError) as info:
        prepare.prepare(str(path))
    assert info.value.code == "foreign_store"
    assert info.value.exit_code == 1
    assert info.value.hint is not None and "import --json" in info.value.hint
    # Nothing was written to it.
    assert _scalar(path, "PRAGMA application_id") == 1
    assert _tables(path) == {"memories"}


def test_unstamped_database_with_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hippo.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY)")
    conn.commit()
    conn.close()
    with pytest.raises(HippoError) as info:
        prepare.prepare(str(path))
    assert info.value.code == "foreign_store"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hippo.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {prepare.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 1}")
    conn.execute("CREATE TABLE future (x)")
    conn.commit()
    conn.close()
    with pytest.raises(HippoError) as info:
        prepare.prepare(str(path))
    assert info.value.code == "store_too_new"
    assert info.value.exit_code == 1
    assert _scalar(path, "PRAGMA user_version") == migrations.SCHEMA_VERSION + 1


def test_failing_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def m_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x INTEGER)")
        conn.execute("INSERT INTO meta (key, value) VALUES ('half_done', '1')")
        raise RuntimeError("migration exploded")

    path = tmp_path / "hippo.db"
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m_broken])
    with pytest.raises(RuntimeError, match="migration exploded"):
        prepare.prepare(str(path))
    assert _scalar(path, "PRAGMA user_version") == migrations.SCHEMA_VERSION
    assert _scalar(path, SCHEMA_VERSION_SQL) == str(migrations.SCHEMA_VERSION)
    assert "half_done" not in _tables(path)
    assert _query(path, "SELECT * FROM meta WHERE key = 'half_done'") == []


def test_failing_first_migration_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def m_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("boom")

    path = tmp_path / "hippo.db"
    monkeypatch.setattr(migrations, "MIGRATIONS", [m_broken])
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(RuntimeError, match="boom"):
            migrations.migrate(conn)
    finally:
        conn.close()
    assert _scalar(path, "PRAGMA user_version") == 0
    assert _tables(path) == set()


def test_migrate_runs_only_missing_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hippo.db"
    prepare.prepare(str(path))
    calls: list[int] = []

    def m_next(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("CREATE TABLE extra (x)")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m_next])
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrations.migrate(conn) == migrations.SCHEMA_VERSION + 1
        assert migrations.migrate(conn) == migrations.SCHEMA_VERSION + 1
    finally:
        conn.close()
    assert calls == [1]
    assert _scalar(path, "PRAGMA user_version") == migrations.SCHEMA_VERSION + 1
    assert "extra" in _tables(path)


# --- the async store -----------------------------------------------------------------------------------


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[tuple[dbmod.Database, Path]]:
    path = tmp_path / "hippo.db"
    database, prepared = await dbmod.Database.open(str(path))
    assert prepared.schema == migrations.SCHEMA_VERSION
    try:
        yield database, path
    finally:
        await database.close()


def _needs_fts5(path: Path) -> None:
    if _scalar(path, "SELECT value FROM meta WHERE key = 'fts5_available'") != "1":
        pytest.skip("this SQLite has no FTS5")


async def _match(database: dbmod.Database, query: str, **kwargs: Any) -> list[Candidate]:
    options: dict[str, Any] = {"include_superseded": False, "scope": None}
    options.update(kwargs)
    tenant = options.pop("tenant", "default")
    # Queries match on index terms, as recall does.
    return await memories.candidates_fts(database.reader, tenant, terms(query), **options)


async def test_insert_get_and_fts_candidates(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    _needs_fts5(path)
    fred = make_memory(
        "FRED cache silently dropped the tips_10y series!",
        tags=["error", "path:etl"],
        emotional_valence="negative",
        half_life_days=730.0,
        pinned=True,
        conflicts_with=["mem_other0000001"],
        legacy_base=True,
    )
    cjk = make_memory(CJK)
    other = make_memory("Use pnpm, never npm", tags=["decision"])
    async with database.transaction() as conn:
        for memory in (fred, cjk, other):
            assert await memories.insert(conn, memory) is True

    assert await memories.get(database.reader, "default", fred.id) == fred
    assert await memories.get(database.reader, "other-tenant", fred.id) is None
    assert await memories.get(database.reader, "default", "mem_missing00000") is None

    found = await _match(database, "数据管道")
    assert [m.id for m, *_ in found] == [cjk.id]
    memory, tokens, _ = found[0]
    assert memory == cjk
    assert tokens == terms(CJK)

    found = await _match(database, "tips_10y cache")
    assert [m.id for m, *_ in found] == [fred.id]
    # BM25 tokens are the content tokens followed by the tag tokens.
    assert found[0].terms == terms(fred.content) + terms("error path:etl")

    # Tags are searchable too.
    assert [m.id for m, *_ in await _match(database, "decision")] == [other.id]
    assert await _match(database, "nothing matches this") == []


async def test_fts_admission_filter(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    _needs_fts5(path)
    live = make_memory("export job live")
    superseded = make_memory("export job old", superseded_by=live.id)
    private = make_memory("export job private", scope="team:private:x")
    scoped = make_memory("export job scoped", scope="billing")
    buffer = make_memory("export job buffer", layer="buffer")
    archived = make_memory("export job archived", kind="archived")
    foreign = make_memory("export job other tenant", tenant_id="acme")
    async with database.transaction() as conn:
        for memory in (live, superseded, private, scoped, buffer, archived, foreign):
            assert await memories.insert(conn, memory)

    ids = {m.id for m, *_ in await _match(database, "export")}
    assert ids == {live.id, scoped.id}
    ids = {m.id for m, *_ in await _match(database, "export", include_superseded=True)}
    assert ids == {live.id, scoped.id, superseded.id}
    ids = {m.id for m, *_ in await _match(database, "export", scope="team:private:x")}
    assert ids == {live.id, scoped.id, private.id}
    ids = {m.id for m, *_ in await _match(database, "export", tenant="acme")}
    assert ids == {foreign.id}


async def test_candidates_carry_row_numbers_in_storing_order(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    _needs_fts5(path)
    stored = [make_memory(f"export step {n}") for n in range(3)]
    async with database.transaction() as conn:
        for memory in stored:
            assert await memories.insert(conn, memory)
    rows = {c.memory.id: c.rowid for c in await _match(database, "export")}
    assert [rows[m.id] - rows[stored[0].id] for m in stored] == [0, 1, 2]
    found = await memories.candidates_like(
        database.reader, "default", ["export"], include_superseded=False, scope=None
    )
    assert {c.memory.id: c.rowid for c in found} == rows


async def test_like_fallback_finds_the_same_rows(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, _ = store
    cjk = make_memory(CJK)
    other = make_memory("100%_done marker", tags=["etl"])
    async with database.transaction() as conn:
        assert await memories.insert(conn, cjk)
        assert await memories.insert(conn, other)
    found = await memories.candidates_like(
        database.reader, "default", tokenize("数据管道"), include_superseded=False, scope=None
    )
    assert [m.id for m, *_ in found] == [cjk.id]
    # % and _ are literal in the LIKE pattern.
    found = await memories.candidates_like(
        database.reader, "default", ["0%_d"], include_superseded=False, scope=None
    )
    assert [m.id for m, *_ in found] == [other.id]
    # Unescaped, "1%marker" would match "100%_done marker" through the wildcard.
    assert (
        await memories.candidates_like(
            database.reader, "default", ["1%marker"], include_superseded=False, scope=None
        )
        == []
    )


async def _like(database: dbmod.Database, terms: list[str]) -> list[Any]:
    """The LIKE fallback's candidates for `terms` in the default tenant, superseded left out."""
    return list(
        await memories.candidates_like(
            database.reader, "default", terms, include_superseded=False, scope=None
        )
    )


async def test_like_fallback_takes_thousands_of_terms(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    """One statement whatever the query's length: 600 and 5,000 words past SQLite's expression depth."""
    database, _ = store
    walrus = make_memory("the walrus sleeps on the ice floe")
    async with database.transaction() as conn:
        assert await memories.insert(conn, walrus)
        assert await memories.insert(conn, make_memory("nothing of the query here"))
    for n in (600, 5_000):
        terms = [f"word{i}x" for i in range(n)]
        found = await _like(database, [*terms, "floe"])
        assert [c.memory.id for c in found] == [walrus.id]
        assert await _like(database, terms) == []


async def test_rejected_digest_refuses_insert(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    digest = content_digest("  Never   store THIS value ")
    async with database.transaction() as conn:
        await conn.execute(
            "INSERT INTO rejected_values (tenant_id, digest, reason, rejected_by, rejected_at, "
            "source_memory_id, normalized_chars) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("default", digest, "wrong", "cli:1000", "2026-01-01T00:00:00.000Z", None, 22),
        )
    refused = make_memory("never store this value")
    async with database.transaction() as conn:
        assert await memories.insert(conn, refused) is False
    assert await memories.get(database.reader, "default", refused.id) is None
    assert _scalar(path, "SELECT count(*) FROM memories") == 0
    if _scalar(path, "SELECT value FROM meta WHERE key = 'fts5_available'") == "1":
        assert _scalar(path, "SELECT count(*) FROM memories_fts") == 0

    # The tombstone is per tenant.
    elsewhere = make_memory("never store this value", tenant_id="acme")
    async with database.transaction() as conn:
        assert await memories.insert(conn, elsewhere) is True
    assert _scalar(path, "SELECT count(*) FROM memories") == 1


async def test_transaction_that_raises_rolls_back(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    memory = make_memory("this write must not land")
    with pytest.raises(RuntimeError, match="abort"):
        async with database.transaction() as conn:
            assert await memories.insert(conn, memory) is True
            raise RuntimeError("abort")
    assert await memories.get(database.reader, "default", memory.id) is None
    assert await memories.get(database.writer, "default", memory.id) is None
    assert _scalar(path, "SELECT count(*) FROM memories") == 0
    # The writer is usable again afterwards.
    async with database.transaction() as conn:
        assert await memories.insert(conn, memory) is True
    assert await memories.get(database.reader, "default", memory.id) == memory


async def test_fts_index_is_backfilled_when_out_of_step(
    tmp_path: Path, make_memory: Callable[..., Memory]
) -> None:
    path = tmp_path / "hippo.db"
    database, prepared = await dbmod.Database.open(str(path))
    try:
        if not prepared.fts5:
            pytest.skip("this SQLite has no FTS5")
        async with database.transaction() as conn:
            for text in ("first cache memory", CJK, "third deploy memory"):
                assert await memories.insert(conn, make_memory(text))
    finally:
        await database.close()
    assert _scalar(path, "SELECT count(*) FROM memories_fts") == 3

    raw = sqlite3.connect(path)
    raw.execute("DELETE FROM memories_fts")
    raw.commit()
    raw.close()
    assert _scalar(path, "SELECT count(*) FROM memories_fts") == 0

    prepare.prepare(str(path))
    assert _scalar(path, "SELECT count(*) FROM memories") == 3
    assert _scalar(path, "SELECT count(*) FROM memories_fts") == 3

    database, _ = await dbmod.Database.open(str(path))
    try:
        found = await _match(database, "数据管道")
        assert [m.content for m, *_ in found] == [CJK]
    finally:
        await database.close()


def test_memory_fields_follow_the_column_order() -> None:
    # row_to_memory builds Memory positionally from a row selected in COLUMNS order.
    import dataclasses

    from hippod.model.memory import COLUMNS, Memory

    assert tuple(f.name for f in dataclasses.fields(Memory)) == COLUMNS


async def test_short_writes_queue_only_behind_a_long_write(tmp_path: Path) -> None:
    db, _ = await dbmod.Database.open(str(tmp_path / "hippo.db"))
    order: list[str] = []
    release = asyncio.Event()

    async def long_write() -> None:
        async with db.long_transaction() as conn:
            await conn.execute("INSERT INTO meta (key, value) VALUES ('long', '1')")
            await release.wait()
            order.append("long")

    async def short(conn: Any) -> None:
        await conn.execute("INSERT INTO meta (key, value) VALUES ('short', '1')")
        order.append("short")

    assert not db.long_write_pending()
    task = asyncio.create_task(long_write())
    await asyncio.sleep(0.05)
    assert db.long_write_pending()
    db.write_soon(short, lambda: order.append("after"))
    release.set()
    await task
    await db.close()  # waits for the queued write
    assert order == ["long", "short", "after"]
    assert not db.long_write_pending()


async def test_term_statistics_count_the_store_and_the_rows_holding_each_term(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    _needs_fts5(path)
    async with database.transaction() as conn:
        for text, tags in (
            ("deploy the cache service", ["deploy"]),
            ("cache misses on deploys", []),
            ("nothing here", []),
        ):
            assert await memories.insert(conn, make_memory(text, tags=tags)) is True
    # Stems, as recall asks: "deploys" and the tag count once per row.
    stats = await memories.term_statistics(database.reader, ["deploy", "cach", "nope", "deploy"])
    assert stats == TermStats(3, {"deploy": 2, "cach": 2})
    assert await memories.term_statistics(database.reader, []) == TermStats(3, {})
    # A query of more distinct words than one statement binds is looked up in parts.
    many = [f"word{i}" for i in range(1200)] + ["cach"]
    assert await memories.term_statistics(database.reader, many) == TermStats(3, {"cach": 2})


async def test_the_row_count_follows_every_write_and_is_mended_on_open(
    store: tuple[dbmod.Database, Path], make_memory: Callable[..., Memory]
) -> None:
    database, path = store
    _needs_fts5(path)
    kept = [make_memory(f"note {i}") for i in range(4)]
    async with database.transaction() as conn:
        for memory in kept:
            assert await memories.insert(conn, memory) is True
        assert await memories.delete(conn, kept[0].tenant_id, kept[0].id) is True
    assert (await memories.term_statistics(database.reader, ["note"])).rows == 3
    with sqlite3.connect(path) as raw:  # a count gone wrong (written by hand)
        raw.execute("UPDATE memories_rows SET n = 99")
    reopened, _ = await dbmod.Database.open(str(path))
    try:
        assert await memories.term_statistics(reopened.reader, ["note"]) == TermStats(3, {"note": 3})
    finally:
        await reopened.close()


async def test_bookkeeping_after_the_reply_is_in_once_settled(database: dbmod.Database) -> None:
    started = asyncio.Event()

    async def write(conn: Any) -> None:
        started.set()
        await conn.execute("INSERT INTO meta (key, value) VALUES ('after', 'reply')")

    async def value() -> list[Any]:
        return list(await database.reader.execute_fetchall("SELECT value FROM meta WHERE key = 'after'"))

    assert await database.write_bookkeeping(write, after_reply=True) is None
    assert not started.is_set()  # returned before the write began: the reply goes first
    await database.settled()
    assert await value() == [("reply",)]
    # From inside a transaction of the same store, settling returns at once (no wait on its own lock).
    async with database.transaction() as conn:
        await database.write_bookkeeping(write, after_reply=True)
        await asyncio.wait_for(database.settled(), timeout=5)
        await conn.execute("DELETE FROM meta WHERE key = 'after'")
    await database.settled()
    assert await value() == [("reply",)]  # the deferred write ran after the transaction, in order


def test_each_migration_is_named_for_its_place_in_the_list() -> None:
    # A store at version N has run exactly the first N; a migration out of place would be skipped.
    names = [migration.__name__ for migration in migrations.MIGRATIONS]
    assert [int(name[1:4]) for name in names] == list(range(1, len(names) + 1)), names
