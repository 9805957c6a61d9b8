"""Schema migrations as plain numbered functions, each run in its own transaction.

After migration N, `PRAGMA user_version` and `meta.schema_version` both hold N.
Add a migration by appending a function to MIGRATIONS; never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from hippod.model.digest import content_digest
from hippod.store.sqlite.migrations_cards import m011_cards
from hippod.store.sqlite.migrations_continuity import m006_continuity
from hippod.store.sqlite.migrations_extraction import m020_extraction
from hippod.store.sqlite.migrations_goals import m017_goals
from hippod.store.sqlite.migrations_graph import m018_graph, m024_edges_counted
from hippod.store.sqlite.migrations_http import m010_http
from hippod.store.sqlite.migrations_mirrors import m012_mirror_days
from hippod.store.sqlite.migrations_near import m021_near_copies
from hippod.store.sqlite.migrations_replay import m019_dead_letter_replay
from hippod.store.sqlite.migrations_share import m016_share_origins
from hippod.store.sqlite.migrations_sleeps import m015_tenant_sleeps
from hippod.store.sqlite.migrations_team import m013_team_outbox, m014_team_marks
from hippod.store.sqlite.migrations_traits import (
    m022_sleep_traits,
    m023_traits_follow_text,
    m025_sleep_compared,
)


def m001_initial(conn: sqlite3.Connection) -> None:
    """Memories, meta, the audit log, tombstones and the raw-row archive."""
    for statement in (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL DEFAULT 'default',
            content TEXT NOT NULL,
            layer TEXT NOT NULL DEFAULT 'episodic',
            kind TEXT NOT NULL DEFAULT 'distilled',
            created TEXT NOT NULL,
            valid_from TEXT NOT NULL,
            last_retrieved TEXT NOT NULL,
            retrieval_count INTEGER NOT NULL DEFAULT 0,
            half_life_days REAL NOT NULL,
            strength REAL NOT NULL DEFAULT 1.0,
            emotional_valence TEXT NOT NULL DEFAULT 'neutral',
            schema_fit REAL NOT NULL DEFAULT 0.5,
            tags TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT 'cli',
            confidence TEXT NOT NULL DEFAULT 'verified',
            pinned INTEGER NOT NULL DEFAULT 0,
            outcome_positive INTEGER NOT NULL DEFAULT 0,
            outcome_negative INTEGER NOT NULL DEFAULT 0,
            outcome_score INTEGER,
            conflicts_with TEXT NOT NULL DEFAULT '[]',
            parents TEXT NOT NULL DEFAULT '[]',
            merged_into TEXT,
            superseded_by TEXT,
            scope TEXT,
            owner TEXT,
            artifact_ref TEXT,
            origin_project TEXT,
            source_session_id TEXT,
            compaction_id TEXT,
            trace_outcome TEXT,
            extracted_from TEXT,
            legacy_base INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            content_digest TEXT NOT NULL,
            fts_content TEXT NOT NULL,
            fts_tags TEXT NOT NULL
        )""",
        "CREATE INDEX memories_tenant_layer ON memories (tenant_id, layer)",
        "CREATE INDEX memories_digest ON memories (tenant_id, content_digest)",
        """CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY,
            ts TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            op TEXT NOT NULL,
            target_id TEXT,
            metadata_json TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE INDEX audit_log_op_ts ON audit_log (op, ts)",
        """CREATE TABLE rejected_values (
            tenant_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            reason TEXT NOT NULL,
            rejected_by TEXT NOT NULL,
            rejected_at TEXT NOT NULL,
            source_memory_id TEXT,
            normalized_chars INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, digest)
        )""",
        """CREATE TABLE raw_archive (
            memory_id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            archived_at TEXT NOT NULL,
            reason TEXT NOT NULL,
            metadata_json TEXT NOT NULL
        )""",
        # The stats.json counters follow the audit log inside the same transaction.
        """CREATE TRIGGER audit_counters AFTER INSERT ON audit_log BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1
                WHERE key = 'total_remembered' AND new.op = 'remember';
            UPDATE meta SET value = CAST(value AS INTEGER) + 1
                WHERE key = 'total_forgotten' AND new.op = 'forget';
            UPDATE meta SET value = CAST(value AS INTEGER) + json_extract(new.metadata_json, '$.results')
                WHERE key = 'total_recalled' AND new.op = 'recall';
        END""",
        """INSERT INTO meta (key, value) VALUES
            ('total_remembered', '0'), ('total_forgotten', '0'), ('total_recalled', '0'),
            ('sleep_count', '0')""",
    ):
        conn.execute(statement)


def m002_embeddings(conn: sqlite3.Connection) -> None:
    """Vectors for the optional embeddings (recall.md §10), dropped with their memory."""
    conn.execute(
        """CREATE TABLE embeddings (
            memory_id TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            content_digest TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TRIGGER embeddings_forget AFTER DELETE ON memories BEGIN
            DELETE FROM embeddings WHERE memory_id = old.id;
        END"""
    )


def m003_lifecycle(conn: sqlite3.Connection) -> None:
    """Dormant memories, decisions, conflicts and the record of each sleep (memory-model.md, sleep.md)."""
    for statement in (
        # Same columns, in the same order, as memories (so a row moves with INSERT ... SELECT *),
        # plus when and why it went dormant. Not in the FTS index.
        "CREATE TABLE dormant_memories AS SELECT * FROM memories WHERE 0",
        "ALTER TABLE dormant_memories ADD COLUMN dormant_at TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE dormant_memories ADD COLUMN dormant_reason TEXT NOT NULL DEFAULT 'faded'",
        "CREATE UNIQUE INDEX dormant_memories_id ON dormant_memories (id)",
        "CREATE INDEX dormant_memories_at ON dormant_memories (tenant_id, dormant_at)",
        """CREATE TABLE decisions (
            n INTEGER PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            text TEXT NOT NULL,
            context TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            memory_id TEXT,
            superseded_by INTEGER,
            created_at TEXT NOT NULL,
            closed_at TEXT
        )""",
        "CREATE INDEX decisions_memory ON decisions (memory_id)",
        """CREATE TABLE memory_conflicts (
            id INTEGER PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            memory_a_id TEXT NOT NULL,
            memory_b_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            score REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',
            resolved_by TEXT,
            detected_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (memory_a_id, memory_b_id),
            CHECK (memory_a_id < memory_b_id)
        )""",
        """CREATE TABLE consolidation_runs (
            id INTEGER PRIMARY KEY,
            ts TEXT NOT NULL,
            results_json TEXT NOT NULL
        )""",
    ):
        conn.execute(statement)


def m004_ingest(conn: sqlite3.Connection) -> None:
    """Links from agents' own notes to memories, and the failed-tool-call log (ingest.md §4, §7)."""
    for statement in (
        # memory_id is NULL for a note recorded as a duplicate of an existing memory; suppressed
        # marks a note whose memory was forgotten, so the unchanged note is not imported again.
        """CREATE TABLE agent_notes (
            tool TEXT NOT NULL,
            note_key TEXT NOT NULL,
            note_path TEXT NOT NULL,
            content_digest TEXT NOT NULL,
            memory_id TEXT,
            project TEXT NOT NULL DEFAULT '',
            last_seen_at TEXT NOT NULL,
            suppressed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tool, note_key)
        )""",
        "CREATE INDEX agent_notes_memory ON agent_notes (memory_id)",
        "CREATE INDEX agent_notes_path ON agent_notes (tool, note_path)",
        # The session, the tool and two hashes only: never the error text (continuity.md §8).
        """CREATE TABLE tool_failures (
            id INTEGER PRIMARY KEY,
            ts TEXT NOT NULL,
            tenant_id TEXT NOT NULL,
            session_id TEXT,
            project TEXT NOT NULL DEFAULT '',
            tool TEXT NOT NULL,
            outcome TEXT NOT NULL,
            exact_hash TEXT NOT NULL,
            shape_hash TEXT NOT NULL
        )""",
        "CREATE INDEX tool_failures_ts ON tool_failures (tenant_id, ts)",
        "CREATE INDEX tool_failures_shape ON tool_failures (tenant_id, shape_hash, ts)",
    ):
        conn.execute(statement)


def m005_spool(conn: sqlite3.Connection) -> None:
    """Hook request keys applied (the spool's exactly-once record) and the shape of each stored
    tool-failure memory (capture-error's duplicate rule), ingest.md §7-§8."""
    for statement in (
        # One row per hook request key, written in the transaction that applied the request.
        """CREATE TABLE spool_applied (
            request_key TEXT PRIMARY KEY,
            applied_at TEXT NOT NULL
        )""",
        "CREATE INDEX spool_applied_at ON spool_applied (applied_at)",
        """CREATE TABLE error_shapes (
            tenant_id TEXT NOT NULL,
            shape_hash TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            PRIMARY KEY (tenant_id, shape_hash)
        )""",
    ):
        conn.execute(statement)


def m007_prompt_hook(conn: sqlite3.Connection) -> None:
    """An index for the per-prompt hook (recall.md §9): its pinned rows and its newest unpinned rows are
    read before every prompt, and without it each read scans and sorts the whole table."""
    conn.execute("CREATE INDEX memories_pinned_created ON memories (tenant_id, pinned, created)")


def m008_imported_files(conn: sqlite3.Connection) -> None:
    """The digest of each file imported into the store (ingest.md §1), so importing an unchanged
    file again is answered without reading it into chunks."""
    conn.execute(
        """CREATE TABLE imported_files (
            tenant_id TEXT NOT NULL,
            format TEXT NOT NULL,
            path TEXT NOT NULL,
            digest TEXT NOT NULL,
            chunks INTEGER NOT NULL,
            imported_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, format, path)
        )"""
    )


def m009_digest_normalisation(conn: sqlite3.Connection) -> None:
    """Digests made with the current normalisation (NFKC, format characters removed, trailing
    punctuation trimmed), so a reject finds every copy of a value. Tombstones keep no text and cannot
    be recomputed; checks also compare each text's legacy digest (hippod.model.digest.digests)."""
    for table in ("memories", "dormant_memories"):
        rows = conn.execute(f"SELECT rowid, content, content_digest FROM {table}").fetchall()
        fresh = [(content_digest(content), rowid, old) for rowid, content, old in rows]
        changed = [(new, rowid) for new, rowid, old in fresh if new != old]
        conn.executemany(f"UPDATE {table} SET content_digest = ? WHERE rowid = ?", changed)


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_initial,
    m002_embeddings,
    m003_lifecycle,
    m004_ingest,
    m005_spool,
    m006_continuity,
    m007_prompt_hook,
    m008_imported_files,
    m009_digest_normalisation,
    m010_http,
    m011_cards,
    m012_mirror_days,
    m013_team_outbox,
    m014_team_marks,
    m015_tenant_sleeps,
    m016_share_origins,
    m017_goals,
    m018_graph,
    m019_dead_letter_replay,
    m020_extraction,
    m021_near_copies,
    m022_sleep_traits,
    m023_traits_follow_text,
    m024_edges_counted,
    m025_sleep_compared,
]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database up to SCHEMA_VERSION; returns the version it now has.

    `conn` must be in autocommit mode (isolation_level=None) so each migration's
    BEGIN/COMMIT is ours.
    """
    current: int = conn.execute("PRAGMA user_version").fetchone()[0]
    for number, migration in enumerate(MIGRATIONS, start=1):
        if number <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            migration(conn)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(number),),
            )
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        current = number
    return current
