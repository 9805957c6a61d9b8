"""Copies of a store's database: `hippoctl backup` writes one with SQLite's online backup, consistent
while the daemon goes on writing, and `hippoctl restore` checks one and makes the live store a copy
of it in one transaction.

The blocking functions run in a worker thread; `replace` runs on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from datetime import datetime
from pathlib import Path

import aiosqlite

from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.store.sqlite.db import COMMIT_POINT, Database
from hippod.store.sqlite.migrations import SCHEMA_VERSION
from hippod.store.sqlite.prepare import APPLICATION_ID, prepare

BACKUP_DIR = "backups"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def file_name(moment: datetime, kind: str = "") -> str:
    """`hippo-<local date>T<time>.db` (`hippo-before-restore-...` for the copy a restore keeps)."""
    stamp = moment.astimezone().strftime("%Y%m%dT%H%M%S")
    return f"hippo-{kind + '-' if kind else ''}{stamp}.db"


def destination(root: str, given: str | None, kind: str = "") -> str:
    """The file a backup goes to: `given`, or the default name inside it when it is a folder, or the
    default name in the store's backups/ folder (made 0700) when nothing is given."""
    name = file_name(clock.now(), kind)
    if given is None:
        folder = os.path.join(root, BACKUP_DIR)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return _free(os.path.join(folder, name))
    if os.path.isdir(given):
        return _free(os.path.join(given, name))
    return given


def _free(path: str) -> str:
    """`path`, or `<stem>-2.db` and on when a backup of the same second is there."""
    stem, ext = os.path.splitext(path)
    candidate, n = path, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{stem}-{n}{ext}"
    return candidate


def _write_failed(path: str, exc: OSError) -> HippoError:
    if isinstance(exc, FileExistsError):
        return HippoError("backup_exists", f"{path} already exists; a backup never overwrites a file")
    if isinstance(exc, FileNotFoundError):
        return HippoError("backup_dest", f"cannot write {path}: no folder {os.path.dirname(path)}")
    return HippoError("backup_dest", f"cannot write {path}: {exc.strerror or exc.__class__.__name__}")


def copy_database(source: str, dest: str) -> tuple[int, int]:
    """Copy the database at `source` to the new file `dest` (0600, a single file: no -wal beside it)
    through SQLite's online backup, in one step, so the copy is the store as one transaction left it
    however the daemon writes meanwhile; returns (bytes, memory rows). An existing `dest` is refused."""
    try:
        os.close(os.open(dest, _CREATE, 0o600))
    except OSError as exc:
        raise _write_failed(dest, exc) from None
    try:
        _copy(source, dest)
        with contextlib.closing(sqlite3.connect(dest, isolation_level=None)) as conn:
            memories = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        with open(dest, "rb") as handle:
            os.fsync(handle.fileno())
        return os.path.getsize(dest), memories
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(dest)
        raise


def _copy(source: str, dest: str, *, uri: bool = False) -> None:
    """The database at `source` (a `file:` URI when `uri`) copied into the empty file `dest`."""
    with (
        contextlib.closing(sqlite3.connect(source, timeout=5.0, isolation_level=None, uri=uri)) as src,
        contextlib.closing(sqlite3.connect(dest, isolation_level=None)) as out,
    ):
        src.execute("PRAGMA query_only=ON")
        src.backup(out)  # every page in one step: one read transaction of the source
        # A copy of a WAL database is one too; a backup is a single file to carry around.
        out.execute("PRAGMA journal_mode=DELETE")


def candidate(source: str, root: str, page_size: int | None) -> tuple[str, int]:
    """A checked, migrated copy of the backup at `source` in the store's folder, ready to replace the
    store; returns (its path, the backup's schema). Refuses, naming the problem, a file that is not
    there, not a SQLite database, not a hippod store, newer than this hippod, or fails integrity_check.

    `page_size`: the live store's, which the copy takes on (SQLite's backup into a WAL database needs
    the two to match)."""
    if not os.path.isfile(source):
        raise HippoError("restore_source", f"{source}: no such file")
    temp = os.path.join(root, f"hippo.db.restore-{os.getpid()}.tmp")
    for leftover in (temp, temp + "-wal", temp + "-shm", temp + "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(leftover)
    try:
        os.close(os.open(temp, _CREATE, 0o600))
        try:
            _copy(Path(source).as_uri() + "?mode=ro", temp, uri=True)
        except sqlite3.Error as exc:
            raise HippoError("restore_source", f"{source} is not a hippod store ({exc})") from None
        schema = _check(source, temp)
        prepare(temp)  # migrations, the FTS index, WAL
        if page_size is not None:
            _match_page_size(temp, page_size)
        return temp, schema
    except BaseException:
        for leftover in (temp, temp + "-wal", temp + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
        raise


def _check(source: str, temp: str) -> int:
    """The backup's schema, once its copy proved to be an intact hippod store of a schema we know."""
    with contextlib.closing(sqlite3.connect(temp, isolation_level=None)) as conn:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        schema = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if app_id != APPLICATION_ID:
            raise HippoError("restore_source", f"{source} is not a hippod store (application id {app_id:#x})")
        if schema > SCHEMA_VERSION:
            raise HippoError(
                "store_too_new",
                f"{source} has schema {schema}; this hippod knows schema {SCHEMA_VERSION} at most",
                hint="upgrade hippod, then run: hippoctl daemon restart",
            )
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]
        if rows != ["ok"]:
            raise HippoError("restore_source", f"{source} fails integrity_check: {'; '.join(rows[:3])}")
    return schema


def _match_page_size(path: str, page_size: int) -> None:
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        if int(conn.execute("PRAGMA page_size").fetchone()[0]) == page_size:
            return
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute(f"PRAGMA page_size={int(page_size)}")
        conn.execute("VACUUM")
        conn.execute("PRAGMA journal_mode=WAL")


def record_restore(path: str, *, tenant: str, actor: str, source: str, schema: int) -> None:
    """The audit row of the restore, written into the copy, so that it arrives with it."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(
            "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
            "VALUES (?, ?, ?, 'restore', NULL, json_object('source', ?, 'from_schema', ?))",
            (clock.iso(clock.now()), tenant, actor, source, schema),
        )


class KeepFailed(Exception):
    """The store could not be copied aside before a restore (its own file is damaged); `__cause__` is
    SQLite's error."""


async def replace(db: Database, path: str, keep: str) -> None:
    """Copy the open store `db` to `keep`, then make it a copy of the database at `path`, both in one
    transaction of its writer (SQLite's backup into it): no write commits between the two, and a
    reader sees the store before or after, never a mix. Raises KeepFailed when the store's own file
    cannot be copied, with nothing changed."""
    async with db.transaction() as writer:
        try:
            await asyncio.to_thread(copy_database, db.path, keep)
        except sqlite3.DatabaseError as exc:
            raise KeepFailed from exc
        point = COMMIT_POINT.get()
        if point is not None:
            point.reached = True  # past here a cancelled request still finishes: the copy is one step
        source = await aiosqlite.connect(path)
        try:
            await source.backup(writer)
        finally:
            await source.close()
    db.checkpoint_soon()


async def page_size(db: Database) -> int:
    rows = list(await db.reader.execute_fetchall("PRAGMA page_size"))
    return int(rows[0][0])
