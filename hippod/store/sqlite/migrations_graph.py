"""Migration 18: the entity graph (`recall --hops`, `GET /v1/graph`), built for the memories already
stored in the same transaction, kept apart from migrations.py for size; migration 24: its relations
counted by the statement that writes them, not a trigger."""

from __future__ import annotations

import sqlite3

from hippod.store.sqlite.graph_index import index_sync

SCHEMA = (
    # One row per entity a live memory names (hippod.model.entities), per tenant, with the number of
    # memories that name it (kept by the triggers below): the graph's view and the walk's hub test
    # read it instead of counting mentions.
    """CREATE TABLE graph_entities (
        id INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        mentions INTEGER NOT NULL DEFAULT 0,
        UNIQUE (tenant_id, type, name)
    )""",
    "CREATE INDEX graph_entities_most_named ON graph_entities (tenant_id, mentions DESC, type, name)",
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
    # Each relation once, with the number of memories that say so (raised by graph_index.py, lowered
    # by a trigger below): what the graph's view reads, however many memories repeat a relation.
    """CREATE TABLE graph_edges (
        from_id INTEGER NOT NULL,
        to_id INTEGER NOT NULL,
        rel TEXT NOT NULL,
        memories INTEGER NOT NULL,
        PRIMARY KEY (from_id, to_id, rel)
    ) WITHOUT ROWID""",
    "CREATE INDEX graph_edges_to ON graph_edges (to_id)",
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
    """CREATE TRIGGER graph_entity_named AFTER INSERT ON graph_mentions BEGIN
        UPDATE graph_entities SET mentions = mentions + 1 WHERE id = new.entity_id;
    END""",
    """CREATE TRIGGER graph_entity_unnamed AFTER DELETE ON graph_mentions BEGIN
        UPDATE graph_entities SET mentions = mentions - 1 WHERE id = old.entity_id;
        DELETE FROM graph_entities WHERE id = old.entity_id AND mentions <= 0;
    END""",
    # A relation's count is raised by graph_index.py, one statement for a batch's relations; a
    # trigger for each relation did it in the stores that ran this migration before migration 24.
    """CREATE TRIGGER graph_edge_unsaid AFTER DELETE ON graph_relations BEGIN
        UPDATE graph_edges SET memories = memories - 1
            WHERE from_id = old.from_id AND to_id = old.to_id AND rel = old.rel;
        DELETE FROM graph_edges
            WHERE from_id = old.from_id AND to_id = old.to_id AND rel = old.rel AND memories <= 0;
    END""",
)


def m018_graph(conn: sqlite3.Connection) -> None:
    """The graph's tables and triggers, and the graph of every memory already stored."""
    for statement in SCHEMA:
        conn.execute(statement)
    ids = [str(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY rowid")]
    index_sync(conn, ids, fresh=True)


def m024_edges_counted(conn: sqlite3.Connection) -> None:
    """A relation's count of memories raised by graph_index's one statement a batch, not by a
    trigger for each relation written (the counts it kept are right: only the trigger goes)."""
    conn.execute("DROP TRIGGER IF EXISTS graph_edge_said")
