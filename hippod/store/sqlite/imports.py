"""SQL for bulk imports and exports: the live texts to de-duplicate against, tombstoned digests, the
batched insert, each imported file's digest, and the rows an export writes out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory
from hippod.store.sqlite import graph_index

_SELECT = ", ".join(COLUMNS)
_ID = COLUMNS.index("id")
_INSERT = (
    f"INSERT INTO memories ({_SELECT}, content_digest, fts_content, fts_tags) "
    f"VALUES ({', '.join('?' * (len(COLUMNS) + 3))})"
)

# A memory of the tenant still in use (a `?` for the tenant).
LIVE = "tenant_id = ? AND superseded_by IS NULL AND kind != 'archived'"
# The same for rows picked by row number: unary + keeps SQLite from walking the tenant's index
# instead of looking the numbers up (15 times slower at 100,000 memories).
LIVE_BY_ROW = "+" + LIVE


async def live_texts(conn: aiosqlite.Connection, tenant: str, after_rowid: int = 0) -> tuple[int, list[str]]:
    """(highest row number in the table, contents of the tenant's live memories after `after_rowid`).

    The row number lets a later call fetch only what was stored since.
    """
    top = await conn.execute_fetchall("SELECT coalesce(max(rowid), 0) FROM memories")
    # The row numbers after `after_rowid` are few (0.16 s at 100,000 through the tenant's index,
    # inside the import's write transaction).
    rows = await conn.execute_fetchall(
        f"SELECT content FROM memories WHERE rowid > ? AND {LIVE_BY_ROW}", (after_rowid, tenant)
    )
    return int(next(iter(top))[0]), [str(r[0]) for r in rows]


INSERT_BATCH = 1_000


async def insert_rows(
    conn: aiosqlite.Connection,
    rows: Sequence[Sequence[Any]],
    tick: Callable[[int], None] | None = None,
) -> None:
    """Insert prepared rows: COLUMNS values, then content_digest, fts_content, fts_tags.

    The caller has checked every digest against the tombstones inside the same transaction. The
    rows go in batches, `tick` hearing how many are in after each (the transaction is the caller's).
    """
    for start in range(0, len(rows), INSERT_BATCH):
        batch = rows[start : start + INSERT_BATCH]
        await conn.executemany(_INSERT, batch)
        await graph_index.index(conn, [str(row[_ID]) for row in batch], fresh=True)
        if tick is not None:
            tick(min(start + INSERT_BATCH, len(rows)))


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """A file as it was when last imported into the store: its digest and chunk count."""

    digest: str
    chunks: int
    imported_at: str


async def imported_file(conn: aiosqlite.Connection, tenant: str, fmt: str, path: str) -> ImportedFile | None:
    """The last import of `path` as `fmt` into this tenant, if there was one."""
    rows = await conn.execute_fetchall(
        "SELECT digest, chunks, imported_at FROM imported_files "
        "WHERE tenant_id = ? AND format = ? AND path = ?",
        (tenant, fmt, path),
    )
    for digest, chunks, imported_at in rows:
        return ImportedFile(str(digest), int(chunks), str(imported_at))
    return None


async def record_file(
    conn: aiosqlite.Connection, tenant: str, fmt: str, path: str, seen: ImportedFile
) -> None:
    """Remember that `path` (as `fmt`) is imported with this digest, replacing an older record."""
    await conn.execute(
        "INSERT INTO imported_files (tenant_id, format, path, digest, chunks, imported_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, format, path) DO UPDATE SET "
        "digest = excluded.digest, chunks = excluded.chunks, imported_at = excluded.imported_at",
        (tenant, fmt, path, seen.digest, seen.chunks, seen.imported_at),
    )


async def exported(conn: aiosqlite.Connection, tenant: str) -> list[Memory]:
    """The tenant's live and superseded memories (not archived; dormant ones live elsewhere), oldest first."""
    rows = await conn.execute_fetchall(
        f"SELECT {_SELECT} FROM memories WHERE tenant_id = ? AND kind != 'archived' ORDER BY created, rowid",
        (tenant,),
    )
    return [row_to_memory(r) for r in rows]
