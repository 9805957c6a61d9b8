"""SQL for sleep's fact extraction (sleep.md §4): the memories it may send, what it has processed,
and the stored texts a new fact must not copy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite
import msgspec

from hippod.model.digest import content_digest
from hippod.model.memory import COLUMNS, Memory
from hippod.model.secrets import looks_secret
from hippod.model.terms import terms
from hippod.model.tokenize import fts_match_expression
from hippod.store.memory_codec import row_to_memory

_COLS = ", ".join(f"m.{c}" for c in COLUMNS)
# One tenant's live episodic notes (kind `distilled`: never a raw receipt, which may hold a webhook's
# Slack or GitHub text, nor an archived or superseded row) not tagged `extracted` and not processed
# yet, newest first.
_CANDIDATES = (
    f"SELECT {_COLS} FROM memories m WHERE m.layer = 'episodic' AND m.superseded_by IS NULL "
    "AND m.kind = 'distilled' AND m.tenant_id = ? "
    "AND NOT EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value = 'extracted') "
    "AND NOT EXISTS (SELECT 1 FROM extraction_sources e WHERE e.memory_id = m.id) "
    "ORDER BY m.created DESC, m.id DESC"
)
# Stored memories a new fact is compared with, found by the fact's terms.
NEAR_LIMIT = 20


@dataclass(frozen=True)
class Processed:
    """A memory extraction is done with: how many facts it brought and how it went (`sent`, or
    `unreadable` when the model's answer held no facts' JSON)."""

    memory_id: str
    tenant: str
    facts: int
    status: str


async def candidates(conn: aiosqlite.Connection, tenant: str, limit: int) -> list[Memory]:
    """Up to `limit` of the tenant's memories extraction may send, newest first; a memory the secret
    detector flags (its text or its tags) is passed over, never returned."""
    found: list[Memory] = []
    cursor = await conn.execute(_CANDIDATES, (tenant,))
    try:
        while len(found) < limit and (rows := list(await cursor.fetchmany(100))):
            for row in rows:
                memory = row_to_memory(row)
                if not looks_secret(memory.content, memory.tags):
                    found.append(memory)
                    if len(found) == limit:
                        break
    finally:
        await cursor.close()
    return found


async def still_live(conn: aiosqlite.Connection, ids: Sequence[str]) -> set[str]:
    """The ids among `ids` of memories still stored and not superseded."""
    rows = await conn.execute_fetchall(
        "SELECT id FROM memories WHERE superseded_by IS NULL AND kind != 'archived' "
        "AND id IN (SELECT value FROM json_each(?))",
        (msgspec.json.encode(list(ids)).decode(),),
    )
    return {str(r[0]) for r in rows}


async def nearby_texts(conn: aiosqlite.Connection, tenant: str, text: str, *, fts5: bool) -> list[str]:
    """Stored texts of the tenant a fact could copy: those with its digest, and (with the FTS index)
    the best matches of its terms."""
    rows = await conn.execute_fetchall(
        "SELECT content FROM memories WHERE tenant_id = ? AND content_digest = ?",
        (tenant, content_digest(text)),
    )
    texts = [str(r[0]) for r in rows]
    words = terms(text)
    if fts5 and words:
        rows = await conn.execute_fetchall(
            "SELECT m.content FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ? AND m.tenant_id = ? AND m.superseded_by IS NULL "
            "AND m.kind != 'archived' ORDER BY bm25(memories_fts) LIMIT ?",
            (fts_match_expression(words), tenant, NEAR_LIMIT),
        )
        texts += [str(r[0]) for r in rows]
    return texts


async def mark(conn: aiosqlite.Connection, done: Sequence[Processed], *, now: str, model: str) -> None:
    """Record memories as processed, so no later sleep sends them again."""
    await conn.executemany(
        "INSERT INTO extraction_sources (memory_id, tenant_id, processed_at, model, facts, status) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO NOTHING",
        [(p.memory_id, p.tenant, now, model, p.facts, p.status) for p in done],
    )
