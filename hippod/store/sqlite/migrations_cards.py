"""Migration 11: the work-queue cards (integrations.md §14), kept apart from migrations.py for size."""

from __future__ import annotations

import sqlite3


def m011_cards(conn: sqlite3.Connection) -> None:
    """Cards, their dependencies, runs (one per claim, the newest is the live run) and comments."""
    for statement in (
        """CREATE TABLE cards (
            id INTEGER PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            title TEXT NOT NULL,
            repo TEXT,
            contract TEXT,
            budget INTEGER,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX cards_status ON cards (tenant_id, status, updated_at)",
        """CREATE TABLE card_deps (
            card_id INTEGER NOT NULL REFERENCES cards (id),
            depends_on INTEGER NOT NULL REFERENCES cards (id),
            PRIMARY KEY (card_id, depends_on)
        )""",
        "CREATE INDEX card_deps_parent ON card_deps (depends_on)",
        """CREATE TABLE card_runs (
            card_id INTEGER NOT NULL REFERENCES cards (id),
            run INTEGER NOT NULL,
            runtime TEXT NOT NULL,
            started_at TEXT NOT NULL,
            lease_expires_at TEXT NOT NULL,
            ended_at TEXT,
            end_reason TEXT,
            PRIMARY KEY (card_id, run)
        )""",
        "CREATE INDEX card_runs_lease ON card_runs (lease_expires_at) WHERE ended_at IS NULL",
        """CREATE TABLE card_comments (
            id INTEGER PRIMARY KEY,
            card_id INTEGER NOT NULL REFERENCES cards (id),
            ts TEXT NOT NULL,
            author TEXT NOT NULL,
            body TEXT NOT NULL
        )""",
        "CREATE INDEX card_comments_card ON card_comments (card_id, id)",
    ):
        conn.execute(statement)
