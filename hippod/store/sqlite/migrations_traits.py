"""Migrations 22, 23 and 25: what keeps a daily sleep of a large store from reading and comparing
all of it again: the traits sleep keeps of each memory's text (hippod.model.sleep_traits), gone with
that text, an index of merge sources, and the rows the last sleep wrote after comparing them."""

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


# Migration 25. The rows a whole-store sleep writes (merged episodes, its semantic memories) carry its
# time, which is also the `last_sleep` the next sleep compares against, so by time alone they count
# as changed since. That sleep compared them, and names them here (in its own transaction, after its
# last write to them); any later update or delete of one removes it, so a row named here is one no
# request has touched since. The update trigger costs about 4.5 µs a row updated (150,000 strength
# writes: 2.5 s against 1.8 s); a list of columns would spare it, at the risk of leaving one out.
COMPARED = (
    "CREATE TABLE sleep_compared (id TEXT PRIMARY KEY) WITHOUT ROWID",
    """CREATE TRIGGER sleep_compared_changed AFTER UPDATE ON memories BEGIN
        DELETE FROM sleep_compared WHERE id = old.id;
    END""",
    """CREATE TRIGGER sleep_compared_gone AFTER DELETE ON memories BEGIN
        DELETE FROM sleep_compared WHERE id = old.id;
    END""",
)


def m025_sleep_compared(conn: sqlite3.Connection) -> None:
    """The table of rows the last sleep wrote after comparing them, empty, and its triggers."""
    for statement in COMPARED:
        conn.execute(statement)
