"""Making a store's database ready to open: its identity checked, its pragmas, its migrations, and
the FTS index with its triggers (blocking; Database.open runs it in a thread)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass

from hippod.base.errors import HippoError
from hippod.model.terms import TERMS_VERSION, fts_columns
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.migrations import SCHEMA_VERSION, migrate

APPLICATION_ID = 0x48505044
PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA wal_autocheckpoint=100",
    # Deleted rows are overwritten with zeros, so a rejected or forgotten text leaves no bytes behind.
    "PRAGMA secure_delete=ON",
)
# Our tokenizer already split the text (CJK bigrams included); FTS only has to keep its tokens whole.
FTS_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
FTS_SETUP = (
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts
        USING fts5(id UNINDEXED, content, tags, tokenize="{FTS_TOKENIZER}")""",
    # How many rows hold each term, read by recall to leave very common terms out of a match.
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row')",
    # How many rows the store holds, kept by its writes: recall's IDF reads it, and count(*) would
    # walk every row (3 ms at 100k).
    "CREATE TABLE IF NOT EXISTS memories_rows (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)",
    """CREATE TRIGGER IF NOT EXISTS memories_rows_insert AFTER INSERT ON memories BEGIN
        UPDATE memories_rows SET n = n + 1;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_rows_delete AFTER DELETE ON memories BEGIN
        UPDATE memories_rows SET n = n - 1;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, id, content, tags)
            VALUES (new.rowid, new.id, new.fts_content, new.fts_tags);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.rowid;
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_update
        AFTER UPDATE OF fts_content, fts_tags ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.rowid;
        INSERT INTO memories_fts (rowid, id, content, tags)
            VALUES (new.rowid, new.id, new.fts_content, new.fts_tags);
    END""",
)


@dataclass(frozen=True, slots=True)
class Prepared:
    """What opening learned about a database."""

    schema: int
    fts5: bool


def prepare(path: str) -> Prepared:
    """Create or check the database at `path`, migrate it and set up FTS (blocking; run in a thread).

    A file SQLite cannot read and a disk with no room raise the HippoError of sqlite_errors.
    """
    fresh = not os.path.exists(path)
    try:
        return _prepare(path, fresh)
    except sqlite3.Error as exc:
        named = sqlite_errors.named(path, exc)
        if named is None:
            raise
        if fresh:
            # A store that could not be made leaves no empty file to be taken for one.
            for leftover in (path, path + "-wal", path + "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
        raise named from None


def _prepare(path: str, fresh: bool) -> Prepared:
    if fresh:
        # Create the file 0600 before SQLite touches it.
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _check_identity(conn, path)
        for pragma in PRAGMAS:
            conn.execute(pragma)
        schema = migrate(conn)
        fts5 = _setup_fts(conn)
        return Prepared(schema, fts5)
    finally:
        conn.close()


def _check_identity(conn: sqlite3.Connection, path: str) -> None:
    app_id: int = conn.execute("PRAGMA application_id").fetchone()[0]
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id == 0:
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables:
            raise _foreign(path)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    elif app_id != APPLICATION_ID:
        raise _foreign(path)
    if version > SCHEMA_VERSION:
        raise HippoError(
            "store_too_new",
            f"{path} has schema {version}; this hippod knows schema {SCHEMA_VERSION} at most",
            hint="upgrade hippod, then run: hippoctl daemon restart",
        )


def _foreign(path: str) -> HippoError:
    return HippoError(
        "foreign_store",
        f"{path} was not written by hippod and will not be opened",
        hint="export it from the tool that wrote it, then run: hippoctl import --json <export>",
    )


def _refresh_terms(conn: sqlite3.Connection) -> None:
    """Recompute every row's index terms when the text-to-terms mapping changed since they were made."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'terms_version'").fetchone()
    if row is not None and row[0] == str(TERMS_VERSION):
        return
    rows = conn.execute("SELECT rowid, content, tags FROM memories").fetchall()
    updates = [(*fts_columns(content, json.loads(tags)), rowid) for rowid, content, tags in rows]
    conn.executemany("UPDATE memories SET fts_content = ?, fts_tags = ? WHERE rowid = ?", updates)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('terms_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(TERMS_VERSION),),
    )


def _setup_fts(conn: sqlite3.Connection) -> bool:
    available = bool(conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0])
    conn.execute("BEGIN IMMEDIATE")
    try:
        _refresh_terms(conn)
        if available:
            for statement in FTS_SETUP:
                conn.execute(statement)
            indexed = conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
            stored = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            if indexed != stored:
                conn.execute("DELETE FROM memories_fts")
                conn.execute(
                    "INSERT INTO memories_fts (rowid, id, content, tags) "
                    "SELECT rowid, id, fts_content, fts_tags FROM memories"
                )
            counted = conn.execute("SELECT n FROM memories_rows").fetchone()
            if counted is None or counted[0] != stored:
                conn.execute("INSERT OR REPLACE INTO memories_rows (one, n) VALUES (1, ?)", (stored,))
        conn.execute(
            # Written only when it changes: opening a store on a full disk must not need a write.
            "INSERT INTO meta (key, value) VALUES ('fts5_available', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value",
            ("1" if available else "0",),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return available
