"""Migration 12: the day files a change left stale (mirrors/mirror_days.py), kept apart from
migrations.py for size."""

from __future__ import annotations

import sqlite3


def m012_mirror_days(conn: sqlite3.Connection) -> None:
    """`mirror_days`: each (layer, day) that lost a memory, by deletion or by a move to another layer
    or day, stamped with a number that only grows. The triggers fill it in the same transaction as the
    change, so the day layout's writer learns which day files to rewrite even when it only knows the
    ids, or the daemon died before the mirror pass. One row per (layer, day): a new loss replaces it
    with a higher number."""
    for statement in (
        """CREATE TABLE mirror_days (
            n INTEGER PRIMARY KEY AUTOINCREMENT,
            layer TEXT NOT NULL,
            day TEXT NOT NULL,
            UNIQUE (layer, day)
        )""",
        """CREATE TRIGGER memories_mirror_gone AFTER DELETE ON memories BEGIN
            INSERT OR REPLACE INTO mirror_days (layer, day) VALUES (old.layer, substr(old.created, 1, 10));
        END""",
        """CREATE TRIGGER memories_mirror_moved AFTER UPDATE OF layer, created ON memories
        WHEN old.layer IS NOT new.layer OR substr(old.created, 1, 10) IS NOT substr(new.created, 1, 10) BEGIN
            INSERT OR REPLACE INTO mirror_days (layer, day) VALUES (old.layer, substr(old.created, 1, 10));
        END""",
    ):
        conn.execute(statement)
