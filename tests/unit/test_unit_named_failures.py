"""A full disk and a corrupt file as SQLite reports them, named by the store; the door's checks."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippod.base.errors import HippoError
from hippod.daemon import door
from hippod.model.memory import Memory
from hippod.store.roots import DB_NAME
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, prepare, sqlite_errors


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_sqlite_full_is_disk_full_naming_the_store(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    """SQLITE_FULL (here from max_page_count, as a full disk gives it) rolls back and names the store."""
    async with database.transaction() as conn:
        [(pages,)] = await conn.execute_fetchall("PRAGMA page_count")
        await conn.execute(f"PRAGMA max_page_count = {pages}")
    big = make_memory("a memory too big for the pages left " + "x" * 20_000)
    with pytest.raises(HippoError) as caught:
        async with database.transaction() as conn:
            await memories.insert(conn, big)
    error = caught.value
    assert error.code == sqlite_errors.DISK_FULL and error.exit_code == 1
    assert (
        error.message
        == f"store {database.path}: the disk is full (database or disk is full); nothing was written"
    )
    assert await memories.get_many(database.reader, [big.id]) == []
    # The writer is usable again: the failed transaction was rolled back.
    small = make_memory("a small one")
    async with database.transaction() as conn:
        await conn.execute("PRAGMA max_page_count = 1073741823")
        assert await memories.insert(conn, small)


async def test_bookkeeping_on_a_full_disk_is_skipped_not_raised(
    database: dbmod.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    async def write(conn: object) -> None:
        ran.append("write")

    monkeypatch.setattr(sqlite_errors, "MIN_FREE_BYTES", 2**62)  # no disk has that much free
    skipped = await database.write_bookkeeping(write, lambda: ran.append("after"))
    assert skipped is not None and skipped.code == sqlite_errors.DISK_FULL
    assert "KiB free, under the 1 MiB a write needs" in skipped.message
    assert ran == []
    with pytest.raises(HippoError, match="the disk is full"):
        async with database.transaction():
            pass


def test_a_corrupt_file_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    db.write_bytes(b"\xa5" * 8192)
    before = _digest(db)
    with pytest.raises(HippoError) as caught:
        prepare.prepare(str(db))
    assert caught.value.code == sqlite_errors.CORRUPT
    assert caught.value.message == f"store {db} is corrupt (file is not a database)"
    assert _digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [DB_NAME]


@pytest.mark.parametrize(
    ("request_", "problem"),
    [
        (
            m.Request(id=1, cwd="/a\x00b", body=m.Status()),
            "the working directory '/a\\x00b' holds a NUL byte",
        ),
        (m.Request(id=1, cwd="/", env={"X": "\x00"}, body=m.Status()), "the environment variable 'X' holds"),
        (m.Request(id=1, cwd="/", body=m.Resolve(n=0)), "the conflict number must be between 1 and"),
        (m.Request(id=1, cwd="/", body=m.Resolve(n=2**63)), "the conflict number must be between 1 and"),
        (m.Request(id=1, cwd="/", body=m.HandoffShow(id=-1)), "the handoff number must be between 1 and"),
        (m.Request(id=1, cwd="/", body=m.AuditPrune(days=2**63)), f"days is out of range: {2**63}"),
        (m.Request(id=1, cwd="/", body=mc.CardShow(id=2**63)), "the card number must be between 1 and"),
        (m.Request(id=1, cwd="/", body=mc.CardReview(id=1, run=0)), "the run number must be between 1 and"),
        (
            m.Request(id=1, cwd="/", body=mc.CardCreate(title="t", depends_on=[1, -5])),
            "a dependency's card number must be between 1 and",
        ),
        (m.Request(id=1, cwd="/", body=mc.CardDepend(id=1, on=[2**63])), "a dependency's card number"),
        (m.Request(id=1, cwd="/", body=mc.CardHeartbeat(id=2**63 - 1)), None),
        (m.Request(id=1, cwd="/", body=m.Resolve(n=2**63 - 1)), None),
        (m.Request(id=1, cwd="/", body=m.Recall(query="x", limit=-(2**63))), None),
    ],
)
def test_the_door(request_: m.Request, problem: str | None) -> None:
    found = door.refusal(request_)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem), found
