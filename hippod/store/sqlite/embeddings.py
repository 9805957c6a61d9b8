"""SQL for the embeddings table (recall.md §10.3): stored vectors, what lacks one, coverage."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite
import msgspec

_decode_tags = msgspec.json.Decoder(list[str])


async def texts(conn: aiosqlite.Connection, ids: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """(id, content, tags) of the given memories that still exist."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = await conn.execute_fetchall(f"SELECT id, content, tags FROM memories WHERE id IN ({marks})", ids)
    return [(r[0], r[1], _decode_tags.decode(r[2])) for r in rows]


async def texts_page(
    conn: aiosqlite.Connection, after_rowid: int, limit: int
) -> list[tuple[int, str, str, list[str]]]:
    """(rowid, id, content, tags) of the next `limit` memories after `after_rowid`, to walk a store."""
    rows = await conn.execute_fetchall(
        "SELECT rowid, id, content, tags FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (after_rowid, limit),
    )
    return [(r[0], r[1], r[2], _decode_tags.decode(r[3])) for r in rows]


async def digests(conn: aiosqlite.Connection, model: str, ids: Sequence[str]) -> dict[str, str]:
    """memory id -> the text digest its stored vector of `model` was made from."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = await conn.execute_fetchall(
        f"SELECT memory_id, content_digest FROM embeddings WHERE model = ? AND memory_id IN ({marks})",
        [model, *ids],
    )
    return {r[0]: r[1] for r in rows}


async def vectors(conn: aiosqlite.Connection, model: str, ids: Sequence[str]) -> dict[str, tuple[bytes, str]]:
    """memory id -> (vector blob, text digest) for the given memories' vectors of `model`."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = await conn.execute_fetchall(
        "SELECT memory_id, vector, content_digest FROM embeddings "
        f"WHERE model = ? AND memory_id IN ({marks})",
        [model, *ids],
    )
    return {r[0]: (bytes(r[1]), r[2]) for r in rows}


async def vectors_page(
    conn: aiosqlite.Connection, model: str, after_rowid: int, limit: int
) -> list[tuple[int, str, bytes]]:
    """(rowid, memory id, vector blob) of the next `limit` vectors of `model` after `after_rowid`, to
    read the table a page at a time, in the order the vectors were first written."""
    rows = await conn.execute_fetchall(
        "SELECT rowid, memory_id, vector FROM embeddings "
        "WHERE model = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        (model, after_rowid, limit),
    )
    return [(r[0], r[1], bytes(r[2])) for r in rows]


async def total(conn: aiosqlite.Connection) -> int:
    """How many vectors the store holds, of any model (counted on the key's index, not the blobs)."""
    rows = await conn.execute_fetchall("SELECT count(*) FROM embeddings")
    return int(next(iter(rows))[0])


async def has_any(conn: aiosqlite.Connection, model: str) -> bool:
    rows = await conn.execute_fetchall("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", (model,))
    return bool(rows)


async def upsert(
    conn: aiosqlite.Connection, model: str, dim: int, rows: Sequence[tuple[str, bytes, str]]
) -> int:
    """Store (memory id, vector, text digest) rows, skipping memories deleted meanwhile; returns the count."""
    before = conn.total_changes
    await conn.executemany(
        "INSERT INTO embeddings (memory_id, model, dim, vector, content_digest) "
        "SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1) "
        "ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model, dim = excluded.dim, "
        "vector = excluded.vector, content_digest = excluded.content_digest",
        [(memory_id, model, dim, blob, digest) for memory_id, blob, digest in rows],
    )
    return conn.total_changes - before


async def count(conn: aiosqlite.Connection, model: str) -> tuple[int, int]:
    """(memories with a vector of `model`, all memories); `embed --status` also checks staleness."""
    rows = await conn.execute_fetchall(
        "SELECT (SELECT count(*) FROM embeddings WHERE model = ?), (SELECT count(*) FROM memories)", (model,)
    )
    have, total = next(iter(rows))
    return int(have), int(total)


# Set in a store's meta table when its daemon stopped before every memory had a current vector;
# cleared once the next one has embedded them (embed/queue.py).
UNFINISHED_KEY = "embeddings_unfinished"


async def unfinished(conn: aiosqlite.Connection) -> bool:
    """Whether a stop left memories of this store to embed."""
    rows = list(await conn.execute_fetchall("SELECT 1 FROM meta WHERE key = ?", (UNFINISHED_KEY,)))
    return bool(rows)


async def set_unfinished(conn: aiosqlite.Connection, left: bool) -> None:
    """Note that memories were left to embed (`left`), or that none are any more."""
    if left:
        await conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING", (UNFINISHED_KEY,)
        )
    else:
        await conn.execute("DELETE FROM meta WHERE key = ?", (UNFINISHED_KEY,))
