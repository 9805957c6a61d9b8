"""Migration 17: the goal stack and what was recalled under each goal, kept apart from migrations.py
for size."""

from __future__ import annotations

import sqlite3


def m017_goals(conn: sqlite3.Connection) -> None:
    """Goals pushed on a tenant's stack (session '' for the store's own stack, else the session key),
    kept after they are popped with their outcome; and the memories a recall returned while a goal
    lifted them, for the outcome its pop hands on."""
    for statement in (
        """CREATE TABLE goals (
            id INTEGER PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            tag TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            outcome TEXT,
            pushed_at TEXT NOT NULL,
            popped_at TEXT
        )""",
        "CREATE INDEX goals_stack ON goals (tenant_id, status, session, id)",
        """CREATE TABLE goal_recalls (
            goal_id INTEGER NOT NULL REFERENCES goals (id) ON DELETE CASCADE,
            memory_id TEXT NOT NULL,
            recalled_at TEXT NOT NULL,
            PRIMARY KEY (goal_id, memory_id)
        ) WITHOUT ROWID""",
    ):
        conn.execute(statement)
