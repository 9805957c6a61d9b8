"""The token ledger (continuity.md §7), kept in the global store: what memory text cost, never the text.

`tokens` is the global estimate ceil(chars / 4) of the exact block delivered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import aiosqlite

KEEP_DAYS = 90  # rows older than this are pruned by sleep phase 14 of the global store
SURFACES = ("prompt_hook", "compact_resume", "context", "recall", "mcp", "http")


def estimate(text: str) -> int:
    """ceil(chars / 4): the one token estimate every surface uses."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True, slots=True)
class LedgerRow:
    surface: str
    tokens: int
    items: int = 0
    skipped: bool = False
    kind: str = "sent"
    session_id: str | None = None
    project: str = ""
    store: str = ""


async def record(conn: aiosqlite.Connection, tenant: str, row: LedgerRow, when: datetime) -> None:
    """One ledger row; `day` is the local calendar date of `when`."""
    await conn.execute(
        "INSERT INTO token_ledger (ts, day, tenant_id, surface, kind, session_id, project, store, tokens, "
        "items, skipped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            when.astimezone().isoformat(timespec="milliseconds"),
            when.astimezone().date().isoformat(),
            tenant,
            row.surface,
            row.kind,
            row.session_id,
            row.project,
            row.store,
            row.tokens,
            row.items,
            int(row.skipped),
        ),
    )


async def prune(conn: aiosqlite.Connection, before: str) -> int:
    """Delete rows older than `before` (ISO time); returns how many went."""
    cursor = await conn.execute("DELETE FROM token_ledger WHERE ts < ?", (before,))
    return cursor.rowcount
