"""SQL for the team store's memories: the functions of `hippod.store.sqlite.memories`, on PostgreSQL.

Each function has the name, parameters and result of its SQLite twin, so the code above the store
calls either (store/backend.py `MemoryRows`). `conn` is a connection inside a transaction of
`TeamDatabase`, whose row-level security already limits every statement to one tenant (the tenant
is still named in the SQL, as in SQLite); a read function also takes `TeamDatabase.reader`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from hippod.model.digest import content_digest, digests
from hippod.model.memory import COLUMNS, Memory
from hippod.model.terms import terms as index_terms
from hippod.store.memory_codec import memory_values, row_to_memory
from hippod.store.postgres.candidates import admitted as admitted
from hippod.store.postgres.candidates import candidates_fts as candidates_fts
from hippod.store.postgres.candidates import candidates_ids as candidates_ids
from hippod.store.postgres.candidates import candidates_oldest as candidates_oldest
from hippod.store.postgres.candidates import term_statistics as term_statistics
from hippod.store.postgres.facts import delete_facts_of as delete_facts_of
from hippod.store.postgres.pg import Conn, TeamReader
from hippod.store.postgres.pg import Source as Source
from hippod.store.postgres.pg import fetch as fetch
from hippod.store.postgres.pg import reading as reading

_SELECT = ", ".join(COLUMNS)


def _index_terms(memory: Memory) -> list[str]:
    """The memory's index terms as FTS5 holds them in SQLite: content terms, then tag terms."""
    return index_terms(memory.content) + index_terms(" ".join(memory.tags))


_INSERT = (
    f"INSERT INTO memories ({_SELECT}, content_digest, terms, nterms) "
    f"SELECT {', '.join(['%s'] * (len(COLUMNS) + 3))} WHERE NOT EXISTS "
    "(SELECT 1 FROM rejected_values WHERE tenant_id = %s AND digest IN (%s, %s)) "
    # The same id twice is one memory (a retried write, handlers/memory.py `keyed_id`).
    "ON CONFLICT (tenant_id, id) DO NOTHING"
)


def _insert_row(memory: Memory) -> list[Any]:
    digest, legacy = digests(memory.content)
    found = _index_terms(memory)
    return [*memory_values(memory), digest, found, len(found), memory.tenant_id, digest, legacy]


async def insert(conn: Conn, memory: Memory) -> bool:
    """Insert a memory unless its digest is tombstoned in its tenant or its id is taken; False when
    refused."""
    cursor = await conn.execute(_INSERT, _insert_row(memory))
    return cursor.rowcount == 1


async def insert_many(conn: Conn, batch: Sequence[Memory]) -> list[bool]:
    """insert() for several memories, in order; for each, whether it was stored."""
    return [await insert(conn, memory) for memory in batch]


async def update(conn: Conn, memory: Memory) -> None:
    """Rewrite every field of a stored memory (and its index terms, which follow content and tags)."""
    found = _index_terms(memory)
    assignments = ", ".join(f"{c} = %s" for c in COLUMNS)
    await conn.execute(
        f"UPDATE memories SET {assignments}, content_digest = %s, terms = %s, nterms = %s WHERE id = %s",
        [*memory_values(memory), content_digest(memory.content), found, len(found), memory.id],
    )


async def mark_superseded(conn: Conn, old_id: str, new_id: str, now: str) -> bool:
    """Point old at its replacement, only if nothing superseded it meanwhile (compare-and-set)."""
    cursor = await conn.execute(
        "UPDATE memories SET superseded_by = %s, updated_at = %s WHERE id = %s AND superseded_by IS NULL",
        (new_id, now, old_id),
    )
    return cursor.rowcount == 1


def _locking(conn: Source) -> str:
    """Inside a write transaction, the rows read are locked until it ends, as SQLite's one writer holds
    the whole store: a handler that reads a row, changes it in Python and writes it back (an outcome
    mark, a resolve) must not lose another server's change made in between. Rows are locked in
    `seq` order, as a sleep and a strengthening lock them, so that none of them deadlock."""
    return "" if isinstance(conn, TeamReader) else " ORDER BY seq FOR UPDATE"


async def get(conn: Source, tenant: str, memory_id: str) -> Memory | None:
    rows = await fetch(
        conn,
        f"SELECT {_SELECT} FROM memories WHERE id = %s AND tenant_id = %s{_locking(conn)}",
        (memory_id, tenant),
    )
    return row_to_memory(rows[0]) if rows else None


async def get_many(conn: Source, ids: Sequence[str]) -> list[Memory]:
    """Rows for these ids, in no particular order (missing ids are skipped)."""
    if not ids:
        return []
    rows = await fetch(
        conn, f"SELECT {_SELECT} FROM memories WHERE id = ANY(%s){_locking(conn)}", (list(ids),)
    )
    return [row_to_memory(r) for r in rows]


async def with_digest(conn: Source, tenant: str, digest: str) -> list[Memory]:
    """Every memory of the tenant whose content has this digest."""
    rows = await fetch(
        conn, f"SELECT {_SELECT} FROM memories WHERE tenant_id = %s AND content_digest = %s", (tenant, digest)
    )
    return [row_to_memory(r) for r in rows]


async def live(conn: Source, tenant: str) -> list[Memory]:
    """The tenant's memories in use: not superseded, not archived."""
    rows = await fetch(
        conn,
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = %s AND superseded_by IS NULL "
        "AND kind != 'archived' ORDER BY created, id COLLATE \"C\"",
        (tenant,),
    )
    return [row_to_memory(r) for r in rows]


async def strengthen(
    conn: Conn, ids: Sequence[str], now: str, bonus_days: float, *, retrieval: bool = True
) -> None:
    """One strengthening retrieval for each id (memory-model.md §9.2-9.3), relative to the row as it is
    now: none while bad marks lead or once superseded; the cached strength becomes 1.0. With
    `retrieval` False (sleep's replay) `retrieval_count` is left alone: it counts real retrievals."""
    count = "retrieval_count = retrieval_count + 1, " if retrieval else ""
    await conn.execute(
        f"UPDATE memories SET {count}last_retrieved = %s, "
        "half_life_days = half_life_days + %s, strength = 1.0, updated_at = %s, "
        "confidence = CASE confidence WHEN 'stale' THEN 'observed' ELSE confidence END "
        "WHERE id = ANY(%s) AND outcome_negative <= outcome_positive AND superseded_by IS NULL "
        # Locked first in seq order, as everything else here locks rows (see _locking).
        "AND seq IN (SELECT seq FROM memories WHERE id = ANY(%s) ORDER BY seq FOR UPDATE)",
        (now, bonus_days, now, list(ids), list(ids)),
    )


async def update_outcome(conn: Conn, changed: Sequence[Memory]) -> None:
    """Store the outcome fields of marked memories."""
    async with conn.cursor() as cursor:
        await cursor.executemany(
            "UPDATE memories SET outcome_positive = %s, outcome_negative = %s, outcome_score = %s, "
            "strength = %s, updated_at = %s WHERE id = %s",
            [
                (m.outcome_positive, m.outcome_negative, m.outcome_score, m.strength, m.updated_at, m.id)
                for m in changed
            ],
        )


async def delete(conn: Conn, tenant: str, memory_id: str) -> bool:
    cursor = await conn.execute("DELETE FROM memories WHERE id = %s AND tenant_id = %s", (memory_id, tenant))
    return cursor.rowcount == 1


async def audit(
    conn: Conn,
    *,
    ts: str,
    tenant: str,
    actor: str,
    op: str,
    target: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append one audit row; memory content never goes here."""
    await audit_rows(conn, [(ts, tenant, actor, op, target)], metadata)


async def audit_many(
    conn: Conn,
    *,
    ts: str,
    tenant: str,
    actor: str,
    op: str,
    targets: Sequence[str | None],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append one audit row per target."""
    await audit_rows(conn, [(ts, tenant, actor, op, target) for target in targets], metadata)


async def audit_rows(
    conn: Conn,
    rows: Sequence[tuple[str, str, str, str, str | None]],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Append audit rows given as (ts, tenant, actor, op, target)."""
    meta = msgspec.json.encode(metadata or {}).decode()
    async with conn.cursor() as cursor:
        await cursor.executemany(
            "INSERT INTO audit_log (ts, tenant_id, actor, op, target_id, metadata_json) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            [(*row, meta) for row in rows],
        )


async def get_meta(conn: Source, key: str) -> str | None:
    rows = await fetch(conn, "SELECT value FROM meta WHERE key = %s", (key,))
    return str(rows[0][0]) if rows else None


async def set_meta(conn: Conn, key: str, value: str) -> None:
    """Set a key of the transaction's tenant."""
    await conn.execute(
        "INSERT INTO meta (tenant_id, key, value) VALUES (current_setting('hippo.tenant'), %s, %s) "
        "ON CONFLICT (tenant_id, key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


async def archive_raw(conn: Conn, memory: Memory, reason: str, now: str) -> None:
    """Keep a raw row's metadata (never its content) and take it out of use, its text blanked."""
    metadata = {k: v for k, v in zip(COLUMNS, memory_values(memory), strict=True) if k != "content"}
    await conn.execute(
        "INSERT INTO raw_archive (memory_id, tenant_id, archived_at, reason, metadata_json) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant_id, memory_id) DO UPDATE SET "
        "archived_at = excluded.archived_at, reason = excluded.reason, "
        "metadata_json = excluded.metadata_json",
        (memory.id, memory.tenant_id, now, reason, msgspec.json.encode(metadata).decode()),
    )
    # The tags' terms stay, as in SQLite, where archiving blanks the content's index column alone.
    tag_terms = index_terms(" ".join(memory.tags))
    await conn.execute(
        "UPDATE memories SET kind = 'archived', updated_at = %s, content = '', terms = %s, nterms = %s "
        "WHERE id = %s AND tenant_id = %s",
        (now, tag_terms, len(tag_terms), memory.id, memory.tenant_id),
    )


async def superseded_by_chain(conn: Source, memory_id: str) -> list[str]:
    """Ids that point at this memory as their replacement (what it superseded)."""
    rows = await fetch(conn, "SELECT id FROM memories WHERE superseded_by = %s", (memory_id,))
    return [str(r[0]) for r in rows]
