"""Migration 16: global copies record the project they came from, kept apart from migrations.py for
size."""

from __future__ import annotations

import json
import sqlite3

from hippod.base import clock
from hippod.model.locality import tie
from hippod.model.share import AUTO_SHARED, SHARED, contributor

_COPIES = (
    "SELECT id, source, content FROM {table} WHERE (origin_project IS NULL OR origin_project = '') "
    "AND (source GLOB 'shared:*' OR source GLOB 'promoted:*')"
)
DORMANT_REASON = "unshared"
# Every stored column of memories as of this migration (as store/sqlite/dormant.py moves a row): written out,
# since a later migration's columns are not there yet when a schema-15 store runs this one.
_MOVED = (
    "id, tenant_id, content, layer, kind, created, valid_from, last_retrieved, retrieval_count, "
    "half_life_days, strength, emotional_valence, schema_fit, tags, source, confidence, pinned, "
    "outcome_positive, outcome_negative, outcome_score, conflicts_with, parents, merged_into, "
    "superseded_by, scope, owner, artifact_ref, origin_project, source_session_id, compaction_id, "
    "trace_outcome, extracted_from, legacy_base, updated_at, content_digest, fts_content, fts_tags"
)


def m016_share_origins(conn: sqlite3.Connection) -> None:
    """Copies made by `share`, `promote` and auto-share before copies recorded their origin.

    Each gets its project, parsed from its `shared:<project>:<iso>` or `promoted:<project>` source, as
    origin_project. A copy auto-share made (audited `share` by `daemon`) gets the `auto-shared:` source
    auto-share now gives; and one whose text is tied to its project by what the rows alone tell (a
    "this repo" phrase, a path, the project's name: hippod.model.locality) never held beyond it,
    so it moves to the dormant store with reason `unshared`, out of every project's reads (its
    project keeps the original; `dormant restore` brings the copy back).
    """
    auto = {
        str(target)
        for (target,) in conn.execute(
            "SELECT target_id FROM audit_log "
            "WHERE op = 'share' AND actor = 'daemon' AND target_id IS NOT NULL"
        )
    }
    tied: list[str] = []
    for table in ("memories", "dormant_memories"):
        for memory_id, source, content in conn.execute(_COPIES.format(table=table)).fetchall():
            project = contributor(source)
            if not project:
                continue
            made_by_sleep = memory_id in auto and source.startswith(SHARED)
            if made_by_sleep:
                source = AUTO_SHARED + source[len(SHARED) :]
                if table == "memories" and tie(content, [project]) is not None:
                    tied.append(memory_id)
            conn.execute(
                f"UPDATE {table} SET origin_project = ?, source = ? WHERE id = ?",
                (project, source, memory_id),
            )
    if not tied:
        return
    now = clock.iso(clock.now())
    marks = ", ".join("?" * len(tied))
    tenants = dict(conn.execute(f"SELECT id, tenant_id FROM memories WHERE id IN ({marks})", tied))
    conn.executemany(
        f"INSERT OR REPLACE INTO dormant_memories ({_MOVED}, dormant_at, dormant_reason) "
        f"SELECT {_MOVED}, ?, ? FROM memories WHERE id = ?",
        [(now, DORMANT_REASON, i) for i in tied],
    )
    conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", tied)
    conn.executemany(
        "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (now, tenants[i], "migration", "dormant_move", i, json.dumps({"reason": DORMANT_REASON}))
            for i in tied
        ],
    )
