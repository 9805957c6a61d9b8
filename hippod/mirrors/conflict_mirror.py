"""The mirror file of an open conflict, `conflicts/conflict_<id>.md` (memory-model.md §2)."""

from __future__ import annotations

import aiosqlite

from hippod.store.records import ConflictRecord
from hippod.store.sqlite import conflicts as conflict_sql

PREVIEW_CHARS = 120


def preview(text: str) -> str:
    """A memory as a conflict shows it: whitespace collapsed, the first 120 characters."""
    return " ".join(text.split())[:PREVIEW_CHARS]


def path(number: int) -> str:
    return f"conflicts/conflict_{number}.md"


def render(conflict: ConflictRecord, texts: dict[str, str]) -> str:
    """Front matter with the conflict's fields, then each side's id and first 120 chars."""
    fields = [
        ("id", conflict.id),
        ("status", conflict.status),
        ("reason", conflict.reason),
        ("score", f"{conflict.score:.2f}"),
        ("memory_a", conflict.memory_a_id),
        ("memory_b", conflict.memory_b_id),
        ("detected_at", conflict.detected_at),
        ("updated_at", conflict.updated_at),
    ]
    if conflict.tenant_id != "default":
        fields.append(("tenant_id", conflict.tenant_id))
    front = "\n".join(f"{k}: {v}" for k, v in fields)
    sides = "\n".join(
        f"- {mid}: {preview(texts.get(mid, '(gone)'))}"
        for mid in (conflict.memory_a_id, conflict.memory_b_id)
    )
    return f"---\n{front}\n---\n\n{sides}\n"


async def files(conn: aiosqlite.Connection) -> dict[str, str | None]:
    """Mirror text for every open conflict and removal for every resolved one (for MirrorWriter.files)."""
    rows = await conflict_sql.listing(conn, None, "all")
    ids = sorted({i for c in rows if c.status == "open" for i in (c.memory_a_id, c.memory_b_id)})
    texts = await conflict_sql.contents(conn, ids)
    return {path(c.id): render(c, texts) if c.status == "open" else None for c in rows}
