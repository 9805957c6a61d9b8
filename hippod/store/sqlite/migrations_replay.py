"""Migration 19: replaying the webhooks' dead letters (kept apart from migrations.py for size)."""

from __future__ import annotations

import sqlite3


def m019_dead_letter_replay(conn: sqlite3.Connection) -> None:
    """When a dead letter was replayed and what it became (a replayed letter is done: it is never
    applied again), the items the sources deleted, so that no late or replayed delivery brings one
    back (integrations.md §10), and each source item's receipt: the one the connectors left live (None:
    they left none) and the source's time of the newest edit applied, so that an older edit, late or
    replayed, does not replace a newer text, and an edit of a receipt archived here does not bring
    it back."""
    for statement in (
        "ALTER TABLE dead_letters ADD COLUMN replayed_at TEXT",
        "ALTER TABLE dead_letters ADD COLUMN replay_status TEXT",
        "ALTER TABLE dead_letters ADD COLUMN replay_memory_id TEXT",
        """CREATE TABLE connector_removals (
            tenant_id TEXT NOT NULL,
            artifact_ref TEXT NOT NULL,
            removed_at TEXT NOT NULL,
            delivery TEXT NOT NULL,
            PRIMARY KEY (tenant_id, artifact_ref)
        )""",
        """CREATE TABLE connector_receipts (
            tenant_id TEXT NOT NULL,
            artifact_ref TEXT NOT NULL,
            memory_id TEXT,
            source_edited_us INTEGER,
            delivery TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, artifact_ref)
        )""",
    ):
        conn.execute(statement)
