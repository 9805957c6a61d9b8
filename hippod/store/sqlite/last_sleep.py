"""The consolidation report a session end keeps for the next session's `last-sleep`
(integrations.md, hooks 1 and 2), one per store, in that store's meta table, as the sleep's reply
in JSON so `last-sleep` can print its summary, its full report or the reply itself."""

from __future__ import annotations

import aiosqlite
import msgspec

from hippoctl.protocol.replies_lifecycle import SleepReply
from hippod.store.sqlite import memories

KEY = "last_sleep_report"
_decode = msgspec.json.Decoder(SleepReply).decode


async def keep(conn: aiosqlite.Connection, reply: SleepReply) -> None:
    """Keep `reply` as the store's report, replacing an earlier one not yet shown."""
    await memories.set_meta(conn, KEY, msgspec.json.encode(reply).decode())


async def kept(conn: aiosqlite.Connection) -> tuple[str, SleepReply | None] | None:
    """(the stored value, its reply) or None when none is kept.

    A value that is not a reply (the plain text an earlier version kept) reads as None, to be
    dropped unshown: that text was the full report, not something to show an agent.
    """
    raw = await memories.get_meta(conn, KEY)
    if not raw:
        return None
    try:
        return raw, _decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return raw, None


async def drop(conn: aiosqlite.Connection, raw: str) -> None:
    """Forget the report, unless a newer one replaced it after `raw` was read."""
    await conn.execute("DELETE FROM meta WHERE key = ? AND value = ?", (KEY, raw))
