"""SQL of re-read accounting (continuity.md §7): a session's sent prompt-hook and compact-resume
rows, and the replacement of its `reread` rows. The ledger lives in the global store."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from hippod.base.clock import parse_iso
from hippod.store.records import Reread, SentBlock
from hippod.store.sqlite import ledger

TRACKED = ("prompt_hook", "compact_resume")


async def sent_blocks(conn: aiosqlite.Connection, tenant: str, session_id: str) -> list[SentBlock]:
    """The blocks actually delivered to the session (skipped prompt-hook rows delivered nothing)."""
    rows = await conn.execute_fetchall(
        "SELECT surface, ts, tokens FROM token_ledger WHERE tenant_id = ? AND session_id = ? "
        "AND kind = 'sent' AND skipped = 0 AND surface IN (?, ?) ORDER BY ts",
        (tenant, session_id, *TRACKED),
    )
    return [SentBlock(surface=str(s), ts=parse_iso(str(ts)), tokens=int(t)) for s, ts, t in rows]


async def replace(
    conn: aiosqlite.Connection,
    tenant: str,
    session_id: str,
    found: Sequence[Reread],
    *,
    project: str,
    store: str,
) -> None:
    """The session's `reread` rows become `found`: one row per (surface, call day)."""
    await conn.execute(
        "DELETE FROM token_ledger WHERE tenant_id = ? AND session_id = ? AND kind = 'reread'",
        (tenant, session_id),
    )
    for item in found:
        row = ledger.LedgerRow(
            surface=item.surface,
            tokens=item.tokens,
            items=item.calls,
            kind="reread",
            session_id=session_id,
            project=project,
            store=store,
        )
        await ledger.record(conn, tenant, row, item.last)
