"""Migration 6: the continuity tables (continuity.md), compactions, the per-prompt hook's skip state
and the token ledger, kept apart from migrations.py for size."""

from __future__ import annotations

import sqlite3


def m006_continuity(conn: sqlite3.Connection) -> None:
    """Task snapshots, session events, handoffs, working memory (continuity.md §1-§5), compactions
    (ingest.md §8), the per-prompt hook's skip state (recall.md §9) and the token ledger (§7)."""
    for statement in (
        """CREATE TABLE task_snapshots (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL,
            summary TEXT NOT NULL,
            next_step TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            source TEXT NOT NULL DEFAULT 'cli',
            session_id TEXT,
            scope TEXT,
            tenant_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX task_snapshots_status ON task_snapshots (tenant_id, status, updated_at)",
        """CREATE TABLE session_events (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            task TEXT,
            event_type TEXT NOT NULL DEFAULT 'note',
            content TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT 'cli',
            scope TEXT,
            metadata_json TEXT NOT NULL DEFAULT '{}',
            tenant_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX session_events_session ON session_events (tenant_id, session_id, id)",
        "CREATE INDEX session_events_task ON session_events (tenant_id, task, id)",
        """CREATE TABLE session_handoffs (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            repo_root TEXT,
            task_id TEXT,
            summary TEXT NOT NULL,
            next_action TEXT,
            artifacts_json TEXT NOT NULL DEFAULT '[]',
            scope TEXT,
            tenant_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX session_handoffs_session ON session_handoffs (tenant_id, session_id, id)",
        """CREATE TABLE working_memory (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL DEFAULT 'default',
            session_id TEXT,
            task_id TEXT,
            importance REAL NOT NULL DEFAULT 0.5,
            content TEXT NOT NULL,
            metadata_json TEXT NOT NULL DEFAULT '{}',
            tenant_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX working_memory_scope ON working_memory (tenant_id, scope, importance, created_at)",
        """CREATE TABLE compactions (
            id TEXT PRIMARY KEY,
            session_id TEXT,
            started_at TEXT NOT NULL,
            trigger TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            summary TEXT,
            items_json TEXT NOT NULL DEFAULT '[]',
            saved INTEGER NOT NULL DEFAULT 0,
            tenant_id TEXT NOT NULL
        )""",
        "CREATE INDEX compactions_session ON compactions (tenant_id, session_id, started_at)",
        # Per (tenant, session): the digest of the last pinned block sent and the skips since.
        """CREATE TABLE pinned_inject_state (
            tenant_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            skips INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, session_id)
        )""",
        # Counted in the global store (continuity.md §6): never the text, never the query.
        """CREATE TABLE token_ledger (
            id INTEGER PRIMARY KEY,
            ts TEXT NOT NULL,
            day TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            surface TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'sent',
            session_id TEXT,
            project TEXT NOT NULL DEFAULT '',
            store TEXT NOT NULL DEFAULT '',
            tokens INTEGER NOT NULL,
            items INTEGER NOT NULL DEFAULT 0,
            skipped INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX token_ledger_ts ON token_ledger (tenant_id, ts)",
        "CREATE INDEX token_ledger_session ON token_ledger (tenant_id, session_id, surface, kind)",
    ):
        conn.execute(statement)
