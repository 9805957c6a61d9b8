"""Migration 20: what sleep's fact extraction has processed (sleep.md §4), kept apart from
migrations.py for size."""

from __future__ import annotations

import sqlite3


def m020_extraction(conn: sqlite3.Connection) -> None:
    """One row per memory sleep has sent for extraction (or found unreadable), written in the sleep's
    transaction with the facts it brought, so a memory is sent once; the episodic rows newest
    first, the order extraction takes them in; and each fact by its source, which a forget or a
    rejection of the source removes it with."""
    for statement in (
        """CREATE TABLE extraction_sources (
            memory_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            processed_at TEXT NOT NULL,
            model TEXT NOT NULL,
            facts INTEGER NOT NULL,
            status TEXT NOT NULL
        )""",
        "CREATE INDEX memories_layer_created ON memories (layer, created)",
        "CREATE INDEX memories_extracted_from ON memories (extracted_from) WHERE extracted_from IS NOT NULL",
    ):
        conn.execute(statement)
