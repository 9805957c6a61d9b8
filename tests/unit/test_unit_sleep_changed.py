"""Whether the store changed under a sleep's plan (store/sqlite/sleep.py: changed_since), across
more rows than one page of its check."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hippod.model.memory import Memory
from hippod.store.sleep_rows import row_mark
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories
from hippod.store.sqlite.sleep import _Marks, _still_there, _unique, changed_since
from hippod.store.sqlite.sleep_snapshot import SnapshotReader

ROWS = 5_300  # past the check's page of 5,000


def _marks(path: str) -> list[int]:
    with SnapshotReader(path) as source:
        for _ in source.pages():
            pass
        return list(source.marks)


async def _changed(database: dbmod.Database, marks: Sequence[int]) -> bool:
    async with database.transaction() as conn:
        return await changed_since(conn, marks, {})


async def test_a_plan_holds_until_a_row_it_read_changes_or_goes(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rows = [make_memory(f"Fact number {n} about the build of service {n % 97}") for n in range(ROWS)]
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)
    marks = _marks(database.path)
    assert len(marks) == ROWS
    assert not await _changed(database, marks)

    # A memory added since does not count.
    async with database.transaction() as conn:
        assert await memories.insert(conn, make_memory("A fact stored after the snapshot was read"))
    assert not await _changed(database, marks)

    last = rows[-1].id  # on the check's second page
    async with database.transaction() as conn:
        await conn.execute("UPDATE memories SET updated_at = '2031-01-01T00:00:00.000Z' WHERE id = ?", [last])
    assert await _changed(database, marks)

    marks = _marks(database.path)
    assert not await _changed(database, marks)
    async with database.transaction() as conn:
        await conn.execute("DELETE FROM memories WHERE id = ?", (rows[0].id,))
    assert await _changed(database, marks)


async def test_a_plan_holds_without_a_look_at_its_rows_while_nothing_is_committed(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    async with database.transaction() as conn:
        assert await memories.insert(conn, make_memory("A fact read by the snapshot"))
    wrong = [1, 2, 3]  # marks of rows the store does not hold: checked, they say it changed
    assert await _changed(database, wrong)
    read = _Marks(wrong, database, await database.commits())
    assert list(read) == wrong and read[1:] == [2, 3]
    assert not await _changed(database, read)  # nothing committed since: the rows are not read
    async with database.transaction() as conn:
        await memories.set_meta(conn, "a_key", "a value")
    assert await _changed(database, read)  # a commit since: the marks are checked

    # A request paging through rows holds the reader's read transaction open meanwhile: a commit
    # is seen all the same.
    async with database.transaction() as conn:
        assert await memories.insert(conn, make_memory("Another fact, so that a cursor stays open"))
    cursor = await database.reader.execute("SELECT id FROM memories")
    assert await cursor.fetchone() is not None
    read = _Marks(wrong, database, await database.commits())
    async with database.transaction() as conn:
        await memories.set_meta(conn, "a_key", "another value")
    assert await _changed(database, read)
    await cursor.close()


def test_the_marks_found_again_are_those_the_snapshot_holds() -> None:
    import numpy as np

    rows = [(f"mem_{n}", "2026-01-01T00:00:00.000Z") for n in range(6)]
    marks = sorted(row_mark(i, u) for i, u in rows)
    # The smallest and the largest mark are gone from the snapshot: found rows below the first and
    # past the last of those it holds are not among them.
    wanted = np.asarray(marks[1:-1], dtype=np.int64)
    assert sorted(_still_there(rows, wanted).tolist()) == marks[1:-1]
    assert _still_there(rows, np.empty(0, dtype=np.int64)).tolist() == []


def test_the_distinct_marks_come_sorted_as_numpy_gives_them() -> None:
    import numpy as np

    rng = np.random.default_rng(11)
    marks = rng.integers(-(1 << 62), 1 << 62, 20_000, dtype=np.int64)
    with_repeats = np.concatenate([marks, marks[:500], marks[-3:]])
    for given in (with_repeats, with_repeats.tolist(), [], [7], [7, 7], [9, -2, 9]):
        got = _unique(given)
        assert got.dtype == np.int64
        assert got.tolist() == sorted(set(np.asarray(given, dtype=np.int64).tolist()))
