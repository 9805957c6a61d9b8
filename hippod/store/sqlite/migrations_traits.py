"""Migrations 22 and 23: what keeps a daily sleep of a large store from reading all of it again: the
traits sleep keeps of each memory's text (hippod.model.sleep_traits), gone with that text, and an
index of merge sources."""

from __future__ import annotations

import sqlite3

SCHEMA = (
    # One row per memory a sleep has read: its text's traits, and `key`, a hash of the text they are
    # of. A sleep uses a row only when `key` matches the memory's text as it reads it, so a text
    # changed since is worked out again, whichever way it was changed.
    """CREATE TABLE sleep_traits (
        row INTEGER PRIMARY KEY,
        key BLOB NOT NULL,
        words TEXT NOT NULL,
        distinct_words TEXT NOT NULL,
        sides INTEGER NOT NULL,
        junk TEXT,
        warning TEXT
    )""",
    """CREATE TRIGGER sleep_traits_gone AFTER DELETE ON memories BEGIN
        DELETE FROM sleep_traits WHERE row = old.rowid;
    END""",
    # A merged memory that dedupe deletes hands its sources to the copy it kept (sleep.py: apply):
    # one lookup per deleted memory, not one pass over the store.
    "CREATE INDEX memories_merged_into ON memories (merged_into) WHERE merged_into IS NOT NULL",
)


def m022_sleep_traits(conn: sqlite3.Connection) -> None:
    """The table of kept traits, empty (the next sleep of each store fills it), and the index."""
    for statement in SCHEMA:
        conn.execute(statement)


# A memory's kept traits go with its text too: a text blanked or rewritten (a rejected receipt's, by
# any path) leaves none of its tokens behind until the next sleep.
TEXT_CHANGED = """CREATE TRIGGER sleep_traits_rewritten AFTER UPDATE OF content ON memories
    WHEN old.content IS NOT new.content BEGIN
        DELETE FROM sleep_traits WHERE row = new.rowid;
    END"""


def m023_traits_follow_text(conn: sqlite3.Connection) -> None:
    """Kept traits removed when their memory's text changes."""
    conn.execute(TEXT_CHANGED)
