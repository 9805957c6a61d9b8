"""Migration 16: global copies record the project they came from, kept apart from migrations.py for
size."""

from __future__ import annotations

import json
import sqlite3

from hippod import clock
from hippod.lifecycle.locality import tie
from hippod.lifecycle.share import AUTO_SHARED, SHARED, contributor
from hippod.store.records import COLUMNS

_COPIES = (
    "SELECT id, source, content FROM {table} WHERE (origin_project IS NULL OR origin_project = '') "
    "AND (source LIKE 'shared:%' OR source LIKE 'promoted:%')"
)
DORMANT_REASON = "unshared"
# Every stored column of memories (as store/dormant.py moves a row), as of this migration.
_MOVED = ", ".join([*COLUMNS, "content_digest", "fts_content", "fts_tags"])


def m016_share_origins(conn: sqlite3.Connection) -> None:
    """Copies made by `share`, `promote` and auto-share before copies recorded their origin.

    Each gets its project, parsed from its `shared:<project>:<iso>` or `promoted:<project>` source, as
    origin_project. A copy auto-share made (audited `share` by `daemon`) gets the `auto-shared:` source
    auto-share now gives; and one whose text is tied to its project by what the rows alone tell (a
    "this repo" phrase, a path, the project's name: hippod.lifecycle.locality) never held beyond it,
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
