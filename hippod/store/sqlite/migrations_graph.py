"""Migration 18: the entity graph (`recall --hops`, `GET /v1/graph`), built for the memories already
stored in the same transaction, kept apart from migrations.py for size."""

from __future__ import annotations

import sqlite3

from hippod.store.sqlite.graph_index import index_sync

SCHEMA = (
    # One row per entity a live memory names (hippod.model.entities), per tenant.
    """CREATE TABLE graph_entities (
        id INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        UNIQUE (tenant_id, type, name)
    )""",
    """CREATE TABLE graph_mentions (
        memory_id TEXT NOT NULL,
        entity_id INTEGER NOT NULL,
        PRIMARY KEY (memory_id, entity_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX graph_mentions_entity ON graph_mentions (entity_id, memory_id)",
    # Entity to entity (a decision or policy `references` what its memory names), by the memory
    # that says so.
    """CREATE TABLE graph_relations (
        memory_id TEXT NOT NULL,
        from_id INTEGER NOT NULL,
        to_id INTEGER NOT NULL,
        rel TEXT NOT NULL,
        PRIMARY KEY (memory_id, from_id, to_id, rel)
    ) WITHOUT ROWID""",
    # Memory to memory: a merge source and the memory sleep made of it (`parents`), a superseded
    # memory and its replacement (`supersedes`).
    """CREATE TABLE graph_links (
        tenant_id TEXT NOT NULL,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        rel TEXT NOT NULL,
        PRIMARY KEY (a, b, rel)
    ) WITHOUT ROWID""",
    "CREATE INDEX graph_links_b ON graph_links (b)",
    # Removals, whatever path makes them (forget, sleep, dormant moves, a raw archive): in SQL, so
    # they hold in the transaction of the write without any caller's help.
    """CREATE TRIGGER graph_memory_gone AFTER DELETE ON memories BEGIN
        DELETE FROM graph_mentions WHERE memory_id = old.id;
        DELETE FROM graph_relations WHERE memory_id = old.id;
        DELETE FROM graph_links WHERE a = old.id OR b = old.id;
    END""",
    """CREATE TRIGGER graph_memory_retired AFTER UPDATE OF superseded_by, kind ON memories
        WHEN new.superseded_by IS NOT NULL OR new.kind = 'archived' BEGIN
        DELETE FROM graph_mentions WHERE memory_id = new.id;
        DELETE FROM graph_relations WHERE memory_id = new.id;
        INSERT OR IGNORE INTO graph_links (tenant_id, a, b, rel)
            SELECT new.tenant_id, new.id, new.superseded_by, 'supersedes' WHERE new.superseded_by IS NOT NULL;
    END""",
    """CREATE TRIGGER graph_entity_unnamed AFTER DELETE ON graph_mentions
        WHEN NOT EXISTS (SELECT 1 FROM graph_mentions WHERE entity_id = old.entity_id) BEGIN
        DELETE FROM graph_entities WHERE id = old.entity_id;
    END""",
)


def m018_graph(conn: sqlite3.Connection) -> None:
    """The graph's tables and triggers, and the graph of every memory already stored."""
    for statement in SCHEMA:
        conn.execute(statement)
    ids = [str(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY rowid")]
    index_sync(conn, ids)
