"""The traits a sleep keeps of each text (model/sleep_traits.py, store/sqlite/sleep_traits.py): kept
after a sleep, read back by the next one instead of worked out again, and never used for a text
they are not of."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hippod.model.memory import Memory
from hippod.model.sleep_plan import Plan, Settings, plan
from hippod.model.sleep_traits import Traits, traits_of
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, sleep_traits
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

NOW = datetime(2026, 3, 1, tzinfo=UTC)
RECENT = "2026-02-20T00:00:00.000Z"
LINTER = "Run the linter before every commit in this repository"
SECRET = "Deploy key sk_live_4eC39HqLyjWDarjtT1zdp7dc goes in the vault"

TEXTS = [
    "Deploy to staging failed because the migration was skipped",
    "Staging deploy failed: the migration step was skipped again today",
    "Run the linter before every commit in this repository please",
    LINTER,
    "The feature flag is enabled for production users",
    "The feature flag is disabled for production users",
    "Always use Sled for local storage",
    "Never use Sled for local storage",
    "to fix it",
    "wip",
    "bump version to v1.2.3",
    "数据库迁移 需要 先运行 migrate 命令",
    "Use `cargo nextest` for the test suite; it is faster than cargo test",
]


def _plan(path: str, *, dry_run: bool = False) -> tuple[Plan, str | None, int]:
    """The plan of the store at `path`, its spill file (None: nothing new), and how many memories'
    traits were read back rather than worked out."""
    ids = itertools.count(1)
    spill = None if dry_run else sleep_traits.new_path(os.path.join(os.path.dirname(path), "spill"))
    with SnapshotReader(path, page=4, spill=spill) as source:
        counting = _Counting(source)
        settings = Settings(now=NOW, replay_count=0, dry_run=dry_run)
        result = plan(counting, settings, lambda: f"sem_{next(ids)}")
        source.spill.close()
        if not source.spill.written:
            sleep_traits.discard(spill)
            spill = None
        return result, spill, counting.known


class _Counting:
    """A snapshot that counts the traits it hands back kept."""

    def __init__(self, source: SnapshotReader) -> None:
        self._source = source
        self.known = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._source, name)

    def pages(self) -> Iterator[tuple[list[Memory], list[Traits | None]]]:
        for page, known in self._source.pages():
            self.known += sum(t is not None for t in known)
            yield page, known


def _outcome(result: Plan) -> tuple[object, ...]:
    """What a plan decides, without the ids it makes up."""
    return (
        [sorted(m.id for m in merge.members) for merge in result.merges],
        [merge.semantic.content for merge in result.merges],
        [(d.deleted.id, d.kept.id) for d in result.duplicates],
        [(j.id, j.reason) for j in result.junk_removed],
        [(j.id, j.reason) for j in result.junk_warnings],
        [(c.a, c.b, c.reason) for c in result.conflicts.insert],
        result.live.count,
    )


async def _sql(database: dbmod.Database, statement: str, *params: object) -> None:
    """One statement in a transaction of its own, as another request would write it."""
    async with database.transaction() as conn:
        await conn.execute(statement, params)


async def _store(database: dbmod.Database, rows: list[Memory]) -> None:
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)


async def _spilled(database: dbmod.Database, rows: list[Memory]) -> str:
    """Store these memories and plan a sleep of the store; the spill file of the traits it worked out."""
    await _store(database, rows)
    _, spill, _ = _plan(database.path)
    assert spill is not None
    return spill


def _rows(path: str, statement: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(statement).fetchall()


def _all_words(path: str) -> str:
    """Every kept token of the store, as one text."""
    return " ".join(str(w) for (w,) in _rows(path, "SELECT words FROM sleep_traits"))


def _kept(path: str) -> int:
    return int(_rows(path, "SELECT count(*) FROM sleep_traits")[0][0])


@pytest.mark.parametrize("text", TEXTS)
def test_traits_read_back_are_the_traits_worked_out(text: str) -> None:
    traits = traits_of(text)
    row = sleep_traits.encode(7, text, traits)
    assert row[0] == 7
    assert sleep_traits.decode(text, row[1:]) == traits
    # Kept for another text, they are not this one's.
    assert sleep_traits.decode(text + ".", row[1:]) is None


async def test_a_plan_from_kept_traits_is_the_plan_from_the_texts(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rows = [
        make_memory(text, created=f"2026-02-20T00:00:{n:02d}.000Z", updated_at=RECENT, last_retrieved=RECENT)
        for n, text in enumerate(TEXTS)
    ]
    await _store(database, rows)

    first, spill, known = _plan(database.path)
    assert known == 0
    assert spill is not None
    assert await sleep_traits.keep(database, spill) == len(TEXTS)
    assert not os.path.exists(spill)
    assert _kept(database.path) == len(TEXTS)

    again, spill, known = _plan(database.path)
    assert known == len(TEXTS)
    assert spill is None  # nothing new to keep
    assert _outcome(again) == _outcome(first)
    assert first.merges and first.duplicates and first.junk_removed and first.conflicts.insert


async def test_a_text_changed_since_is_worked_out_again(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    fact = make_memory(LINTER, updated_at=RECENT)
    other = make_memory("Use `cargo nextest` for the test suite; it is faster", updated_at=RECENT)
    spill = await _spilled(database, [fact, other])
    # Changed behind the daemon's back, with the same updated_at, after the plan read it and before
    # its traits were copied in (so the trigger had no row to remove): only the text tells, and the
    # copy writes none of the old text's tokens.
    await _sql(database, "UPDATE memories SET content = 'wip' WHERE id = ?", fact.id)
    assert await sleep_traits.keep(database, spill) == 1
    assert "linter" not in _all_words(database.path)

    result, spill, known = _plan(database.path)
    assert known == 1
    assert [(j.id, j.reason) for j in result.junk_removed] == [(fact.id, "shorter than 10 chars")]
    sleep_traits.discard(spill)


async def test_a_dry_run_keeps_nothing_and_a_deleted_memory_gets_no_row(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    first = make_memory("Deploy to staging failed because the migration was skipped", updated_at=RECENT)
    second = make_memory("Never use Sled for local storage in this service", updated_at=RECENT)
    await _store(database, [first, second])
    _, spill, _ = _plan(database.path, dry_run=True)
    assert spill is None

    _, spill, _ = _plan(database.path)
    assert spill is not None
    await _sql(database, "DELETE FROM memories WHERE id = ?", second.id)
    assert await sleep_traits.keep(database, spill) == 1  # the deleted memory's are dropped
    assert _kept(database.path) == 1
    # A memory deleted later takes its traits with it.
    await _sql(database, "DELETE FROM memories WHERE id = ?", first.id)
    assert _kept(database.path) == 0


async def test_a_rowid_a_new_memory_took_gets_none_of_the_old_texts_tokens(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # SQLite gives the largest rowid again once its row is deleted: the copy must not file the
    # forgotten text's tokens under the new memory.
    first = make_memory(LINTER, updated_at=RECENT)
    last = make_memory(SECRET, updated_at=RECENT)
    spill = await _spilled(database, [first, last])
    await _sql(database, "DELETE FROM memories WHERE id = ?", last.id)
    await _store(database, [make_memory("Use `cargo nextest` for the test suite", updated_at=RECENT)])
    assert await sleep_traits.keep(database, spill) == 1
    assert "sk_live" not in _all_words(database.path)


async def test_a_changed_or_blanked_text_takes_its_kept_traits_with_it(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # A rejected receipt's text is blanked (memories.clear_content): none of its tokens may stay.
    receipt = make_memory(SECRET, updated_at=RECENT)
    kept = make_memory(LINTER, updated_at=RECENT)
    spill = await _spilled(database, [receipt, kept])
    assert await sleep_traits.keep(database, spill) == 2
    async with database.transaction() as conn:
        await conn.execute("UPDATE memories SET kind = 'archived' WHERE id = ?", (receipt.id,))
        await memories.clear_content(conn, receipt.id)
        await conn.execute("UPDATE memories SET tags = '[\"x\"]' WHERE id = ?", (kept.id,))  # not its text
    assert _kept(database.path) == 1
    words = _all_words(database.path)
    assert "sk_live" not in words and "linter" in words


def test_a_spill_that_cannot_be_written_only_stops_the_spilling(tmp_path: Path) -> None:
    spill = sleep_traits.Spill(str(tmp_path / "missing" / "traits.bin"))
    text = "Run the linter before every commit"
    spill.write([sleep_traits.encode(1, text, traits_of(text))])
    spill.close()
    assert (spill.path, spill.written) == (None, 0)


def test_a_spill_folder_loses_what_an_earlier_daemon_left(tmp_path: Path) -> None:
    folder = str(tmp_path / "spill")
    os.makedirs(folder)
    left = os.path.join(folder, "traits-1-left.bin")  # no daemon of this test is pid 1
    Path(left).write_bytes(b"x")
    mine = sleep_traits.new_path(folder)
    assert os.listdir(folder) == [os.path.basename(mine)]
    assert os.stat(mine).st_mode & 0o777 == 0o600
