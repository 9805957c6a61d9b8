"""SQL for bulk imports and exports: the live texts to de-duplicate against, tombstoned digests, one
executemany insert, and the rows an export writes out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiosqlite

from hippod.store.memories import row_to_memory
from hippod.store.records import COLUMNS, Memory

_SELECT = ", ".join(COLUMNS)
_INSERT = (
    f"INSERT INTO memories ({_SELECT}, content_digest, fts_content, fts_tags) "
    f"VALUES ({', '.join('?' * (len(COLUMNS) + 3))})"
)
_LIVE = "tenant_id = ? AND superseded_by IS NULL AND kind != 'archived'"


async def live_texts(conn: aiosqlite.Connection, tenant: str, after_rowid: int = 0) -> tuple[int, list[str]]:
    """(highest row number in the table, contents of the tenant's live memories after `after_rowid`).

    The row number lets a later call fetch only what was stored since.
    """
    top = await conn.execute_fetchall("SELECT coalesce(max(rowid), 0) FROM memories")
    rows = await conn.execute_fetchall(
        f"SELECT content FROM memories WHERE rowid > ? AND {_LIVE}", (after_rowid, tenant)
    )
    return int(next(iter(top))[0]), [str(r[0]) for r in rows]


async def rejected_digests(conn: aiosqlite.Connection, tenant: str) -> set[str]:
    """Every tombstoned digest of the tenant (memory-model.md §12)."""
    rows = await conn.execute_fetchall("SELECT digest FROM rejected_values WHERE tenant_id = ?", (tenant,))
    return {str(r[0]) for r in rows}


async def insert_rows(conn: aiosqlite.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Insert prepared rows: COLUMNS values, then content_digest, fts_content, fts_tags.

    The caller has checked every digest against the tombstones inside the same transaction.
    """
    await conn.executemany(_INSERT, rows)


async def exported(conn: aiosqlite.Connection, tenant: str) -> list[Memory]:
    """The tenant's live and superseded memories (not archived; dormant ones live elsewhere), oldest first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND kind != 'archived' ORDER BY created, rowid",
        (tenant,),
    )
    return [row_to_memory(r) for r in rows]
