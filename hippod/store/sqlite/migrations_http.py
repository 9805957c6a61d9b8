"""Migration 10: the tables of the HTTP API and its webhooks (kept apart from migrations.py for size)."""

from __future__ import annotations

import sqlite3


def m010_http(conn: sqlite3.Connection) -> None:
    """The HTTP API's keys, the Slack and GitHub webhooks' logs, dead letters, routing and cursors
    (integrations.md §9, §10), and when a decision was superseded."""
    for statement in (
        """CREATE TABLE api_keys (
            id INTEGER PRIMARY KEY,
            key_id TEXT NOT NULL UNIQUE,
            key_hash TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            label TEXT,
            role TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        """CREATE TABLE slack_event_log (
            event_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            ingested_at TEXT NOT NULL,
            memory_id TEXT
        )""",
        """CREATE TABLE github_event_log (
            delivery_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            event_name TEXT NOT NULL,
            ingested_at TEXT NOT NULL,
            memory_id TEXT
        )""",
        """CREATE TABLE dead_letters (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            received_at TEXT NOT NULL,
            bucket TEXT NOT NULL,
            error TEXT NOT NULL,
            raw_payload BLOB NOT NULL,
            headers_json TEXT NOT NULL DEFAULT '{}',
            retry_count INTEGER NOT NULL DEFAULT 0,
            retried_at TEXT
        )""",
        "CREATE INDEX dead_letters_source ON dead_letters (source, tenant_id, received_at)",
        # The spec's two tables, as views over the one that holds both.
        "CREATE VIEW slack_dlq AS SELECT * FROM dead_letters WHERE source = 'slack'",
        "CREATE VIEW github_dlq AS SELECT * FROM dead_letters WHERE source = 'github'",
        """CREATE TABLE slack_workspaces (
            team_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            added_at TEXT NOT NULL
        )""",
        """CREATE TABLE github_installations (
            installation_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            added_at TEXT NOT NULL
        )""",
        """CREATE TABLE slack_cursors (
            tenant_id TEXT NOT NULL,
            channel_id TEXT NOT NULL,
            latest_ts TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, channel_id)
        )""",
        "CREATE INDEX memories_artifact ON memories (tenant_id, artifact_ref) WHERE artifact_ref IS NOT NULL",
        "ALTER TABLE decisions ADD COLUMN superseded_at TEXT",
    ):
        conn.execute(statement)
