"""SQL for agent_notes: the links from agents' own notes to the memories made from them (ingest.md §4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

_COLUMNS = "tool, note_key, note_path, content_digest, memory_id, project, last_seen_at, suppressed"


@dataclass(frozen=True, slots=True)
class Link:
    tool: str
    note_key: str
    note_path: str
    content_digest: str
    memory_id: str | None
    project: str
    last_seen_at: str
    suppressed: bool


def _link(row: Sequence[object]) -> Link:
    return Link(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        None if row[4] is None else str(row[4]),
        str(row[5]),
        str(row[6]),
        bool(row[7]),
    )


async def of_tool(conn: aiosqlite.Connection, tool: str) -> dict[str, Link]:
    """Every link of one tool in this store, by note key."""
    rows = await conn.execute_fetchall(f"SELECT {_COLUMNS} FROM agent_notes WHERE tool = ?", (tool,))
    return {link.note_key: link for link in map(_link, rows)}


async def put(conn: aiosqlite.Connection, link: Link) -> None:
    """Insert or replace one link."""
    await conn.execute(
        f"INSERT OR REPLACE INTO agent_notes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            link.tool,
            link.note_key,
            link.note_path,
            link.content_digest,
            link.memory_id,
            link.project,
            link.last_seen_at,
            int(link.suppressed),
        ),
    )


async def seen(conn: aiosqlite.Connection, tool: str, keys: Sequence[str], now: str) -> None:
    """Unchanged notes: only last_seen_at moves."""
    await conn.executemany(
        "UPDATE agent_notes SET last_seen_at = ? WHERE tool = ? AND note_key = ?",
        [(now, tool, key) for key in keys],
    )


async def drop(conn: aiosqlite.Connection, tool: str, key: str) -> None:
    await conn.execute("DELETE FROM agent_notes WHERE tool = ? AND note_key = ?", (tool, key))


async def suppress(conn: aiosqlite.Connection, memory_id: str) -> int:
    """`forget` of a linked memory: its unchanged note is not imported again. Returns links marked."""
    cursor = await conn.execute("UPDATE agent_notes SET suppressed = 1 WHERE memory_id = ?", (memory_id,))
    return cursor.rowcount


async def detach(conn: aiosqlite.Connection, memory_id: str) -> int:
    """`dormant restore`: the memory no longer follows its note. Returns links detached."""
    cursor = await conn.execute("UPDATE agent_notes SET memory_id = NULL WHERE memory_id = ?", (memory_id,))
    return cursor.rowcount
