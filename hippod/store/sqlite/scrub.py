"""SQL that removes a rejected value from the tables that keep text beside `memories` and
`dormant_memories`: decisions, compactions (summary and items), working memory and session events
(memory-model.md §12).

Runs inside the reject's transaction, so the value leaves every table at once or not at all.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiosqlite
import msgspec

from hippod.model import passages
from hippod.model.digest import digests, refused


@dataclass(slots=True)
class Decided:
    """The decisions a reject deleted: their texts, and the memories mirroring them still to remove."""

    texts: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)


async def decisions(
    conn: aiosqlite.Connection, tenant: str, digests: Collection[str], memory_ids: Collection[str]
) -> Decided:
    """Delete the decisions whose text is the value or whose memory was removed with it."""
    rows = await conn.execute_fetchall(
        "SELECT n, text, memory_id FROM decisions WHERE tenant_id = ?", (tenant,)
    )
    done = Decided()
    for n, text, memory_id in rows:
        if memory_id in memory_ids or refused(str(text), digests):
            await conn.execute("DELETE FROM decisions WHERE n = ?", (n,))
            done.texts.append(str(text))
            if memory_id is not None:
                done.memories.append(str(memory_id))
    return done


def _clean_items(raw: str, value: str, digests: Collection[str]) -> str:
    items: list[dict[str, Any]] = msgspec.json.decode(raw)
    for item in items:
        text = str(item.get("text") or "")
        if refused(text, digests) or passages.holds(text, value):
            item.update(text="", outcome="rejected", memory_id=None)
    return msgspec.json.encode(items).decode()


async def compactions(conn: aiosqlite.Connection, tenant: str, value: str, digests: Collection[str]) -> int:
    """Cut the value out of every compaction's summary and items; returns the rows rewritten."""
    rows = await conn.execute_fetchall(
        "SELECT id, summary, items_json FROM compactions WHERE tenant_id = ?", (tenant,)
    )
    changed = 0
    for compaction_id, summary, items_json in rows:
        new_summary = passages.cut(summary, value) if summary is not None else None
        new_items = _clean_items(items_json, value, digests)
        if new_summary != summary or new_items != items_json:
            await conn.execute(
                "UPDATE compactions SET summary = ?, items_json = ? WHERE id = ?",
                (new_summary, new_items, compaction_id),
            )
            changed += 1
    return changed


async def _whole_values(conn: aiosqlite.Connection, table: str, tenant: str, digests: Collection[str]) -> int:
    """Delete the rows of a continuity table whose content is the value; returns how many."""
    rows = await conn.execute_fetchall(f"SELECT id, content FROM {table} WHERE tenant_id = ?", (tenant,))
    gone = [(int(i),) for i, content in rows if refused(str(content), digests)]
    await conn.executemany(f"DELETE FROM {table} WHERE id = ?", gone)
    return len(gone)


async def elsewhere(conn: aiosqlite.Connection, tenant: str, values: Sequence[str]) -> None:
    """Remove the values from compactions, working memory and session events."""
    for value in dict.fromkeys(values):
        tombstoned = set(digests(value))
        await compactions(conn, tenant, value, tombstoned)
        await _whole_values(conn, "working_memory", tenant, tombstoned)
        await _whole_values(conn, "session_events", tenant, tombstoned)
