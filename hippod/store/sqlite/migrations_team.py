"""Migrations 13-14: what a laptop queues for its team server (store/sqlite/team_outbox.py,
store/sqlite/team_marks.py), kept apart from migrations.py for size."""

from __future__ import annotations

import sqlite3


def m013_team_outbox(conn: sqlite3.Connection) -> None:
    """`team_outbox`: each write for the team server, in the order it was made, until the server has
    it. `request_key` is unique, so a memory is queued for its team once, and is sent as the
    request's Idempotency-Key, so a write sent twice (its answer lost) is stored once. Sent rows stay,
    marked, as the record of what was shared."""
    conn.execute(
        """CREATE TABLE team_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            request_key TEXT NOT NULL UNIQUE,
            body TEXT NOT NULL,
            queued_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'queued',
            error TEXT,
            done_at TEXT
        )"""
    )
    conn.execute("CREATE INDEX team_outbox_status ON team_outbox (status, seq)")


def m014_team_marks(conn: sqlite3.Connection) -> None:
    """`team_marks`: each retrieval of a team memory this laptop's recall returned, and each outcome
    mark on one, until the sender has delivered them to the team server in a batch."""
    conn.execute(
        """CREATE TABLE team_marks (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('retrieved', 'good', 'bad')),
            memory_id TEXT NOT NULL,
            at TEXT NOT NULL
        )"""
    )
