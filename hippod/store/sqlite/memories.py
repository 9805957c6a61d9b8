"""SQL for the memories table and its companions (meta, audit_log). Handlers call these; no SQL elsewhere."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import aiosqlite
import msgspec

from hippod.model.digest import content_digest
from hippod.model.memory import COLUMNS, Memory
from hippod.model.terms import fts_columns
from hippod.model.tokenize import fts_match_expression
from hippod.store.memory_codec import INSERT_SQL, admission, insert_row, memory_values, row_to_memory
from hippod.store.records import Candidate, TermStats
from hippod.store.sqlite import graph_index

_SELECT = ", ".join(COLUMNS)
_CANDIDATE_COLS = ", ".join(f"m.{c}" for c in COLUMNS) + ", m.fts_content, m.fts_tags, m.rowid"
_json_encode = msgspec.json.encode


async def insert(conn: aiosqlite.Connection, memory: Memory) -> bool:
    """Insert a memory unless its digest is tombstoned in its tenant; False when refused."""
    cursor = await conn.execute(INSERT_SQL, insert_row(memory))
    if cursor.rowcount != 1:
        return False
    await graph_index.index(conn, [memory.id], fresh=True)
    return True


async def update(conn: aiosqlite.Connection, memory: Memory) -> None:
    """Rewrite every field of a stored memory (and its index terms, which follow content and tags)."""
    fts_content, fts_tags = fts_columns(memory.content, memory.tags)
    assignments = ", ".join(f"{c} = ?" for c in COLUMNS)
    await conn.execute(
        f"UPDATE memories SET {assignments}, content_digest = ?, fts_content = ?, fts_tags = ? WHERE id = ?",
        [*memory_values(memory), content_digest(memory.content), fts_content, fts_tags, memory.id],
    )
    await graph_index.index(conn, [memory.id])


async def mark_superseded(conn: aiosqlite.Connection, old_id: str, new_id: str, now: str) -> bool:
    """Point old at its replacement, only if nothing superseded it meanwhile (compare-and-set)."""
    cursor = await conn.execute(
        "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ? AND superseded_by IS NULL",
        (new_id, now, old_id),
    )
    return cursor.rowcount == 1


async def with_digest(conn: aiosqlite.Connection, tenant: str, digest: str) -> list[Memory]:
    """Every memory of the tenant whose content has this digest."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND content_digest = ?", (tenant, digest)
    )
    return [row_to_memory(r) for r in rows]


async def live(conn: aiosqlite.Connection, tenant: str) -> list[Memory]:
    """The tenant's memories in use: not superseded, not archived."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND superseded_by IS NULL "
        "AND kind != 'archived' ORDER BY created, id",
        (tenant,),
    )
    return [row_to_memory(r) for r in rows]


async def get(conn: aiosqlite.Connection, tenant: str, memory_id: str) -> Memory | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE id = ? AND tenant_id = ?", (memory_id, tenant)
    )
    return row_to_memory(next(iter(rows))) if rows else None


async def get_many(conn: aiosqlite.Connection, ids: Sequence[str]) -> list[Memory]:
    """Rows for these ids, in no particular order (missing ids are skipped)."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = await conn.execute_fetchall(f"SELECT {_SELECT} FROM memories WHERE id IN ({marks})", list(ids))
    return [row_to_memory(r) for r in rows]


async def _fetch(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
    return list(await conn.execute_fetchall(sql, params))


async def term_statistics(conn: aiosqlite.Connection, terms: Sequence[str]) -> TermStats:
    """The store's row count (kept by its writes, store/sqlite/db.py) and the rows of the FTS index holding
    each of `terms`.

    An `IN (?, ?, ...)` list lets fts5vocab look each term up; through json_each it scans instead.
    """
    distinct = list(dict.fromkeys(terms))
    total = 0
    found: dict[str, int] = {}
    for start in range(0, max(len(distinct), 1), _TERMS_PER_STATEMENT):
        chunk = distinct[start : start + _TERMS_PER_STATEMENT]
        lookup = f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({', '.join('?' * len(chunk))})"
        if start == 0:
            # The row count rides on the first lookup (as the row with no term): one trip to the
            # reader thread instead of two, and both read from the same snapshot.
            lookup = f"SELECT NULL, n FROM memories_rows UNION ALL {lookup}"
        for term, count in await conn.execute_fetchall(lookup, chunk):
            if term is None:
                total = int(count)
            else:
                found[str(term)] = int(count)
    return TermStats(total, found)


# Well under SQLite's limit of bound parameters in one statement.
_TERMS_PER_STATEMENT = 500


def ranked_sql(where: str) -> str:
    """Recall's candidate statement: the best-ranked matches (parameters: the match, how many), then
    those of them `where` admits, tie-broken (parameters: `where`'s, the limit). Its last column
    counts the ranked matches, to tell a full over-fetch."""
    return (
        f"SELECT {_CANDIDATE_COLS}, f.fetched FROM "
        "(SELECT rowid, score, count(*) OVER () AS fetched FROM "
        # bm25() by name, not FTS5's rank column: the same order, and a quarter cheaper at 100k.
        "  (SELECT rowid, bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ? "
        "   ORDER BY score LIMIT ?)) f "
        f"JOIN memories m ON m.rowid = f.rowid WHERE {where} "
        "ORDER BY f.score, m.updated_at DESC, m.content, m.id LIMIT ?"
    )


def _candidates(rows: Iterable[Sequence[Any]]) -> list[Candidate]:
    """Candidates from rows of _CANDIDATE_COLS: the memory's columns, its FTS columns, its rowid."""
    return [Candidate(row_to_memory(r), f"{r[-3]} {r[-2]}".split(), r[-1]) for r in rows]


async def candidates_fts(
    conn: aiosqlite.Connection,
    tenant: str,
    terms: Sequence[str],
    *,
    include_superseded: bool,
    scope: str | None,
    limit: int = 200,
) -> list[Candidate]:
    """Admitted memories matching any of `terms`, best FTS rank first, with their BM25 tokens.

    FTS5 ranks fastest alone (`ORDER BY rank LIMIT`), so the top 2 x limit matches are taken
    first and only those are joined, filtered and tie-broken. When the filter leaves fewer than
    `limit` of a full over-fetch, the exhaustive query runs instead.
    """
    match = fts_match_expression(list(terms))
    where, params = admission(tenant, include_superseded, scope)
    overfetch = 2 * limit
    rows = await _fetch(conn, ranked_sql(where), [match, overfetch, *params, limit])
    if len(rows) < limit and (not rows or rows[0][-1] == overfetch):
        rows = await _fetch(
            conn,
            f"SELECT {_CANDIDATE_COLS}, 0 FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            f"WHERE memories_fts MATCH ? AND {where} "
            "ORDER BY bm25(memories_fts), m.updated_at DESC, m.content, m.id LIMIT ?",
            [match, *params, limit],
        )
    return [Candidate(row_to_memory(r), f"{r[-4]} {r[-3]}".split(), r[-2]) for r in rows]


async def candidates_like(
    conn: aiosqlite.Connection,
    tenant: str,
    terms: Iterable[str],
    *,
    include_superseded: bool,
    scope: str | None,
    limit: int = 200,
) -> list[Candidate]:
    """The fallback when FTS5 is missing: a substring match on content or tags.

    The patterns go in as one JSON array read by json_each, so a query of any number of words is one
    statement of fixed size: an OR per word would pass SQLite's expression depth past ~500 words.
    """
    where, params = admission(tenant, include_superseded, scope)
    patterns = [
        "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        for term in dict.fromkeys(terms)
    ]
    if not patterns:
        return []
    rows = await conn.execute_fetchall(
        f"SELECT {_CANDIDATE_COLS} FROM memories m WHERE {where} AND EXISTS ("
        "SELECT 1 FROM json_each(?) p WHERE LOWER(m.content) LIKE p.value ESCAPE '\\' "
        "OR LOWER(m.tags) LIKE p.value ESCAPE '\\') "
        "ORDER BY m.updated_at DESC, m.created DESC LIMIT ?",
        [*params, msgspec.json.encode(patterns).decode(), limit],
    )
    return _candidates(rows)


async def candidates_oldest(
    conn: aiosqlite.Connection, tenant: str, *, include_superseded: bool, scope: str | None, limit: int = 200
) -> list[Candidate]:
    """The oldest admitted memories, for cosine-only ranking when no term matches (recall.md §2.3)."""
    where, params = admission(tenant, include_superseded, scope)
    rows = await _fetch(
        conn,
        f"SELECT {_CANDIDATE_COLS} FROM memories m WHERE {where} ORDER BY m.created ASC, m.id LIMIT ?",
        [*params, limit],
    )
    return _candidates(rows)


async def candidates_ids(
    conn: aiosqlite.Connection,
    tenant: str,
    ids: Sequence[str],
    *,
    include_superseded: bool,
    scope: str | None,
) -> list[Candidate]:
    """The admitted memories among `ids`, as recall candidates (in no particular order)."""
    if not ids:
        return []
    where, params = admission(tenant, include_superseded, scope)
    rows = await _fetch(
        conn,
        f"SELECT {_CANDIDATE_COLS} FROM memories m WHERE {where} AND m.id IN ({','.join('?' * len(ids))})",
        [*params, *ids],
    )
    return _candidates(rows)


async def admitted(conn: aiosqlite.Connection, tenant: str, *, scope: str | None) -> list[Memory]:
    """Every memory the recall admission filter lets through (recall.md §2), for `context`'s `*` mode."""
    where, params = admission(tenant, False, scope)
    rows = await _fetch(
        conn, f"SELECT {_SELECT} FROM memories m WHERE {where} ORDER BY m.created, m.id", params
    )
    return [row_to_memory(r) for r in rows]


async def strengthen(
    conn: aiosqlite.Connection, ids: Sequence[str], now: str, bonus_days: float, *, retrieval: bool = True
) -> None:
    """One strengthening retrieval for each id (memory-model.md §9.2-9.3), in one round trip; with
    `retrieval` False (sleep's replay) the same strengthening, but `retrieval_count` is left alone: it
    counts the times a memory was handed out, which `retrieved Nx` and the transfer score read.

    The update is relative and its conditions are checked by SQLite, so it applies to the row as
    it is now, never to values read earlier: no strengthening while bad marks lead or once
    superseded. A memory just retrieved has decayed 0 days and carries no penalty, so its cached
    strength is 1.0.
    """
    count = "retrieval_count = retrieval_count + 1, " if retrieval else ""
    await conn.executemany(
        f"UPDATE memories SET {count}last_retrieved = ?, "
        "half_life_days = half_life_days + ?, strength = 1.0, updated_at = ?, "
        "confidence = CASE confidence WHEN 'stale' THEN 'observed' ELSE confidence END "
        "WHERE id = ? AND outcome_negative <= outcome_positive AND superseded_by IS NULL",
        [(now, bonus_days, now, memory_id) for memory_id in ids],
    )


async def update_outcome(conn: aiosqlite.Connection, changed: Sequence[Memory]) -> None:
    """Store the outcome fields of marked memories."""
    await conn.executemany(
        "UPDATE memories SET outcome_positive = ?, outcome_negative = ?, outcome_score = ?, strength = ?, "
        "updated_at = ? WHERE id = ?",
        [
            (m.outcome_positive, m.outcome_negative, m.outcome_score, m.strength, m.updated_at, m.id)
            for m in changed
        ],
    )


async def delete(conn: aiosqlite.Connection, tenant: str, memory_id: str) -> bool:
    cursor = await conn.execute("DELETE FROM memories WHERE id = ? AND tenant_id = ?", (memory_id, tenant))
    return cursor.rowcount == 1


async def delete_facts_of(conn: aiosqlite.Connection, tenant: str, sources: Sequence[str]) -> list[str]:
    """Delete the facts sleep's extraction took from `sources`, which the user forgot or rejected:
    each paraphrases its source. A fact the user pinned stays. The ids deleted."""
    deleted: list[str] = []
    for start in range(0, len(sources), _FACT_BATCH):
        batch = tuple(sources[start : start + _FACT_BATCH])
        marks = ",".join("?" * len(batch))
        rows = await conn.execute_fetchall(
            f"DELETE FROM memories WHERE tenant_id = ? AND pinned = 0 AND extracted_from IN ({marks}) "
            "RETURNING id",
            (tenant, *batch),
        )
        deleted += [str(row[0]) for row in rows]
        await conn.execute(f"DELETE FROM extraction_sources WHERE memory_id IN ({marks})", batch)
    return deleted


# Sources per statement, well under SQLite's bound on a statement's variables.
_FACT_BATCH = 500


async def clear_content(conn: aiosqlite.Connection, memory_id: str) -> None:
    """Blank an archived row's text and index terms (a rejected raw receipt keeps only its metadata)."""
    await conn.execute(
        "UPDATE memories SET content = '', fts_content = '' WHERE id = ? AND kind = 'archived'", (memory_id,)
    )


async def archive_raw(conn: aiosqlite.Connection, memory: Memory, reason: str, now: str) -> None:
    """Keep a raw row's metadata (never its content) and take it out of use."""
    metadata = {k: v for k, v in zip(COLUMNS, memory_values(memory), strict=True) if k != "content"}
    await conn.execute(
        "INSERT OR REPLACE INTO raw_archive (memory_id, tenant_id, archived_at, reason, metadata_json) "
        "VALUES (?, ?, ?, ?, ?)",
        (memory.id, memory.tenant_id, now, reason, _json_encode(metadata).decode()),
    )
    await conn.execute("UPDATE memories SET kind = 'archived', updated_at = ? WHERE id = ?", (now, memory.id))
    await clear_content(conn, memory.id)


async def audit(
    conn: aiosqlite.Connection,
    *,
    ts: str,
    tenant: str,
    actor: str,
    op: str,
    target: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append one audit row; memory content never goes here."""
    await audit_many(conn, ts=ts, tenant=tenant, actor=actor, op=op, targets=[target], metadata=metadata)


async def audit_many(
    conn: aiosqlite.Connection,
    *,
    ts: str,
    tenant: str,
    actor: str,
    op: str,
    targets: Sequence[str | None],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append one audit row per target, in one round trip."""
    await audit_rows(conn, [(ts, tenant, actor, op, target) for target in targets], metadata)


async def audit_rows(
    conn: aiosqlite.Connection,
    rows: Sequence[tuple[str, str, str, str, str | None]],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append audit rows given as (ts, tenant, actor, op, target), in one round trip."""
    meta = _json_encode(metadata or {}).decode()
    await conn.executemany(
        "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(*row, meta) for row in rows],
    )


async def get_meta(conn: aiosqlite.Connection, key: str) -> str | None:
    rows = list(await conn.execute_fetchall("SELECT value FROM meta WHERE key = ?", (key,)))
    return str(rows[0][0]) if rows else None


async def set_meta(conn: aiosqlite.Connection, key: str, value: str) -> None:
    await conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


async def count_created_after(conn: aiosqlite.Connection, moment: str) -> int:
    """Memories (every tenant's) created after an ISO time."""
    rows = list(await conn.execute_fetchall("SELECT count(*) FROM memories WHERE created > ?", (moment,)))
    return int(rows[0][0])


async def superseded_by_chain(conn: aiosqlite.Connection, memory_id: str) -> list[str]:
    """Ids that point at this memory as their replacement (what it superseded)."""
    rows = await conn.execute_fetchall("SELECT id FROM memories WHERE superseded_by = ?", (memory_id,))
    return [str(r[0]) for r in rows]
