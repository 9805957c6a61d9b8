"""The consolidation report a session end keeps for the next session's `last-sleep`
(integrations.md, hooks 1 and 2), one per store, in that store's meta table."""

from __future__ import annotations

import aiosqlite

from hippod.store import memories

KEY = "last_sleep_report"


async def keep(conn: aiosqlite.Connection, text: str) -> None:
    """Keep `text` as the store's report, replacing an earlier one not yet shown."""
    await memories.set_meta(conn, KEY, text)


async def kept(conn: aiosqlite.Connection) -> str | None:
    return await memories.get_meta(conn, KEY)


async def drop(conn: aiosqlite.Connection, text: str) -> None:
    """Forget the report, unless a newer one replaced it after `text` was read."""
    await conn.execute("DELETE FROM meta WHERE key = ? AND value = ?", (KEY, text))
