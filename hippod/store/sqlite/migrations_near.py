"""Migration 21: the near-copy index (hippod.model.minhash), kept apart from migrations.py for size."""

from __future__ import annotations

import sqlite3

SCHEMA = (
    # The memories' band keys, by level: a log-structured index. New keys go to level 0, which is
    # small, so writing them touches few pages whatever the size of the store; a level past its
    # size is merged into the next in key order (store/sqlite/near_index.py), each key rewritten
    # once a level. A lookup asks every level. A key whose memory was since deleted or rewritten
    # stays: it only proposes a candidate, which the exact check turns down.
    """CREATE TABLE near_keys (
        level INTEGER NOT NULL,
        key INTEGER NOT NULL,
        row INTEGER NOT NULL,
        PRIMARY KEY (level, key, row)
    ) WITHOUT ROWID""",
    # How many keys each level holds (counting a level of millions would read all of it).
    "CREATE TABLE near_levels (level INTEGER PRIMARY KEY, keys INTEGER NOT NULL)",
    # The memories whose keys are not written yet. Triggers put every new or rewritten memory here,
    # whoever writes it, so no write path has to remember the index; the daemon hashes them in
    # batches (store/sqlite/near_index.py) and an import's probe compares the few left exactly.
    "CREATE TABLE near_pending (row INTEGER PRIMARY KEY)",
    """CREATE TRIGGER near_new AFTER INSERT ON memories BEGIN
        INSERT OR IGNORE INTO near_pending (row) VALUES (new.rowid);
    END""",
    """CREATE TRIGGER near_rewritten AFTER UPDATE OF content, tenant_id ON memories
        WHEN old.content IS NOT new.content OR old.tenant_id IS NOT new.tenant_id BEGIN
        INSERT OR IGNORE INTO near_pending (row) VALUES (new.rowid);
    END""",
    """CREATE TRIGGER near_gone AFTER DELETE ON memories BEGIN
        DELETE FROM near_pending WHERE row = old.rowid;
    END""",
    # What is already stored waits like any new memory: the migration itself stays quick on a large
    # store, and the daemon indexes the rows in the background after it opens the store.
    "INSERT INTO near_pending (row) SELECT rowid FROM memories",
)


def m021_near_copies(conn: sqlite3.Connection) -> None:
    """The near-copy index's tables and triggers, with every stored memory waiting to be hashed."""
    for statement in SCHEMA:
        conn.execute(statement)
