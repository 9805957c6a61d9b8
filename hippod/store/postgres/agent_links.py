"""The agent-note links of the team store: `hippod.store.sqlite.agent_links`'s `suppress` and `detach`,
on a store that has none.

A laptop imports its agents' own notes into its own store (agentnotes/sync.py); no memory of the team
store is made from a note, so forgetting or restoring one leaves no link to mark.
"""

from __future__ import annotations

from hippod.store.postgres.pg import Conn


async def suppress(conn: Conn, memory_id: str) -> int:
    """`forget` of a memory: no note links to it here. Returns links marked (none)."""
    return 0


async def detach(conn: Conn, memory_id: str) -> int:
    """`dormant restore` of a memory: no note links to it here. Returns links detached (none)."""
    return 0
