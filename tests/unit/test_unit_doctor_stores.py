"""doctor's Stores check on real SQLite files: made by the real migrations, foreign, too new, corrupt."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from e2e.sleep_support import make, plant

from hippod.doctor import stores
from hippod.doctor.sleep import sleep_check
from hippod.store.roots import DB_NAME
from hippod.store.sqlite import prepare
from hippod.store.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _store(tmp_path: Path, name: str = "store") -> str:
    """A store folder whose hippo.db was made by the real migrations."""
    root = tmp_path / name
    root.mkdir()
    prepare.prepare(str(root / DB_NAME))
    return str(root)


def _sql(root: str, *statements: str) -> None:
    conn = sqlite3.connect(os.path.join(root, DB_NAME), isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def _digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def test_a_healthy_store_is_ok_with_its_counts(tmp_path: Path) -> None:
    root = _store(tmp_path)
    db = os.path.join(root, DB_NAME)
    plant(db, [make("one"), make("two", layer="semantic", pinned=True), make("three")])
    _sql(root, "INSERT INTO meta (key, value) VALUES ('last_sleep', '2026-02-27T00:00:00.000Z')")
    facts = stores.inspect(root, "global", NOW)
    assert facts.readable and not facts.foreign and facts.schema == SCHEMA_VERSION
    assert facts.last_sleep == "2026-02-27T00:00:00.000Z"
    assert facts.counts is not None
    assert facts.counts.layers == {"episodic": 2, "semantic": 1}
    assert (facts.counts.memories, facts.counts.pinned, facts.counts.dormant) == (3, 1, 0)
    [check] = stores.store_check(facts)
    assert (check.name, check.status, check.fix) == ("Global store", "ok", None)
    assert [c.status for c in sleep_check([facts], NOW)] == ["ok"]


def test_inspect_changes_no_byte_of_the_database(tmp_path: Path) -> None:
    root = _store(tmp_path)
    db = os.path.join(root, DB_NAME)
    plant(db, [make("kept as it is")])
    before, mtime = _digest(db), os.stat(db).st_mtime_ns
    stores.inspect(root, "project", NOW)
    assert _digest(db) == before
    assert os.stat(db).st_mtime_ns == mtime


def test_the_connection_refuses_writes(tmp_path: Path) -> None:
    root = _store(tmp_path)
    conn = stores.open_readonly(os.path.join(root, DB_NAME))
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO meta (key, value) VALUES ('x', 'y')")
    finally:
        conn.close()


def test_a_missing_global_store_is_a_warning_naming_init(tmp_path: Path) -> None:
    facts = stores.inspect(str(tmp_path / "nothing"), "global", NOW)
    assert not facts.exists
    [check] = stores.store_check(facts)
    assert check.status == "warn" and check.fix == "hippoctl init --global"
    assert not (tmp_path / "nothing").exists()


def test_a_foreign_application_id_fails(tmp_path: Path) -> None:
    root = _store(tmp_path)
    _sql(root, "PRAGMA application_id = 1234")
    [check] = stores.store_check(stores.inspect(root, "project", NOW))
    assert check.status == "fail" and "not written by hippod" in check.message
    assert check.fix is not None and "hippoctl -C" in check.fix


def test_a_database_of_another_program_fails(tmp_path: Path) -> None:
    root = tmp_path / "other"
    root.mkdir()
    conn = sqlite3.connect(root / DB_NAME)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    facts = stores.inspect(str(root), "global", NOW)
    assert facts.foreign
    assert [c.status for c in stores.store_check(facts)] == ["fail"]


def test_a_schema_ahead_fails_and_names_an_upgrade(tmp_path: Path) -> None:
    root = _store(tmp_path)
    _sql(root, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    [check] = stores.store_check(stores.inspect(root, "global", NOW))
    assert check.status == "fail"
    assert f"schema {SCHEMA_VERSION + 1}" in check.message
    assert check.fix is not None and "hippoctl daemon restart" in check.fix


def test_a_schema_behind_is_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    conn = sqlite3.connect(root / DB_NAME, isolation_level=None)
    conn.execute(f"PRAGMA application_id = {prepare.APPLICATION_ID}")
    MIGRATIONS[0](conn)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    facts = stores.inspect(str(root), "global", NOW)
    assert facts.schema == 1 and facts.readable
    check, *others = stores.store_check(facts)
    assert check.status == "warn" and "schema 1" in check.message
    assert check.fix == "hippoctl status --global"
    assert [(o.status, o.message) for o in others] == [("warn", f"{facts.db} has no full-text index yet")]


def test_a_file_that_is_not_a_database_is_corrupt_and_the_fix_says_move_it_aside(tmp_path: Path) -> None:
    root = tmp_path / "junk"
    root.mkdir()
    db = root / DB_NAME
    db.write_bytes(b"this is not sqlite at all\n" * 400)
    facts = stores.inspect(str(root), "project", NOW)
    assert facts.corrupt and facts.error == "file is not a database"
    [check] = stores.store_check(facts)
    assert check.status == "fail"
    assert check.message == f"store {db} is corrupt (file is not a database)"
    assert check.fix == (
        f"hippoctl -C {tmp_path} restore <backup> (a copy `hippoctl backup` wrote); "
        f"without one, mv {db} {db}.corrupt, then run: hippoctl -C {tmp_path} init"
    )
    [check] = stores.store_check(stores.inspect(str(root), "global", NOW))
    assert check.fix == (
        "hippoctl restore <backup> --global (a copy `hippoctl backup` wrote); "
        f"without one, mv {db} {db}.corrupt: hippod starts an empty store there"
    )


def test_the_fix_for_a_corrupt_store_restores_its_newest_backup(tmp_path: Path) -> None:
    root = tmp_path / "junk"
    backups = root / "backups"
    backups.mkdir(parents=True)
    (root / DB_NAME).write_bytes(b"this is not sqlite at all\n" * 400)
    for name in (
        "hippo-20260101T090000.db",
        "hippo-20260102T090000.db",
        "hippo-20260102T090000-2.db",  # the second of that second: the newest
        "hippo-before-restore-20260301T090000.db",  # the store as a restore found it, not a backup
        "notes.txt",
    ):
        (backups / name).write_bytes(b"")
    newest = backups / "hippo-20260102T090000-2.db"
    [check] = stores.store_check(stores.inspect(str(root), "global", NOW))
    assert check.fix == f"hippoctl restore {newest} --global (the newest backup there)"
    [check] = stores.store_check(stores.inspect(str(root), "project", NOW))
    assert check.fix == f"hippoctl -C {tmp_path} restore {newest} (the newest backup there)"


def test_a_damaged_page_fails_quick_check(tmp_path: Path) -> None:
    root = _store(tmp_path)
    db = os.path.join(root, DB_NAME)
    plant(db, [make(f"memory number {i} " + "padding " * 40) for i in range(200)])
    _sql(root, "PRAGMA wal_checkpoint(TRUNCATE)")
    page = 4096
    with open(db, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        assert size > 6 * page
        # Garbage over pages in the middle: the header stays readable, the b-trees do not.
        handle.seek(3 * page)
        handle.write(b"\xa5" * (2 * page))
    facts = stores.inspect(root, "global", NOW)
    [check] = stores.store_check(facts)
    assert check.status == "fail", check
    assert "failed quick_check" in check.message
    assert facts.counts is None


def test_stale_pending_compactions_are_counted(tmp_path: Path) -> None:
    root = _store(tmp_path)
    _sql(
        root,
        "INSERT INTO compactions (id, started_at, status, tenant_id) "
        "VALUES ('old', '2026-02-28T23:00:00.000Z', 'pending', 'default'), "
        "('fresh', '2026-02-28T23:55:00.000Z', 'pending', 'default'), "
        "('done', '2026-02-01T00:00:00.000Z', 'done', 'default')",
    )
    facts = stores.inspect(root, "global", NOW)
    assert facts.stale_compactions == 1


def test_counts_of_a_store_that_cannot_be_read_say_why(tmp_path: Path) -> None:
    missing = stores.counts_of(stores.inspect(str(tmp_path / "none"), "global", NOW))
    assert missing.error == "no database yet" and missing.memories == 0


def test_a_large_store_with_a_file_per_memory_is_pointed_at_the_day_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stores, "MANY_MIRRORS", 3)
    root = _store(tmp_path)
    plant(os.path.join(root, DB_NAME), [make("one"), make("two"), make("three")])
    [check] = stores.store_check(stores.inspect(root, "global", NOW))
    assert check.status == "warn"
    assert f"3 memories make as many mirror files in {root}" in check.message
    assert check.fix is not None and '"mirrors": {"layout": "day"}' in check.fix
    Path(root, "config.json").write_text('{"mirrors": {"layout": "day"}}', encoding="utf-8")
    [check] = stores.store_check(stores.inspect(root, "global", NOW))
    assert check.status == "ok"
