"""What changed in a tenant's team memories since a member's last sync (migration 3).

A sync reads pages of rows, oldest transaction first, each page from where the last one ended (its
`next` cursor, `<xid>:<id>`). Every page also gives the horizon: the oldest transaction still
running when the page was read, taken before its rows. Once the last page is read, the member keeps
`<horizon of its first page>:` as where its next sync starts, so a write that commits after the
sync read past it (an older transaction committing late) is read then; rows written since are read
again, which changes nothing, as a member applies each row by its id.
"""

from __future__ import annotations

from typing import NamedTuple

from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory
from hippod.store.postgres.memories import Source, fetch, reading

_SELECT = ", ".join(f"m.{c}" for c in COLUMNS)
MAX_DELETIONS = 10_000


class Changes(NamedTuple):
    memories: list[Memory]
    deleted: list[str]
    next: str | None  # where the next page starts; None on the last page
    horizon: str  # `<xmin>:`, a cursor from which nothing committed later is missed


def parse_cursor(cursor: str | None) -> tuple[int, str]:
    """(transaction id, memory id) of a cursor; (0, "") for none. ValueError when it is not one."""
    if not cursor:
        return 0, ""
    xid, sep, memory_id = cursor.partition(":")
    if not sep or not xid.isdigit():
        raise ValueError(f"{cursor!r} is not a sync cursor")
    return int(xid), memory_id


async def since(conn: Source, tenant: str, cursor: str | None, limit: int) -> Changes:
    """The tenant's memories written after `cursor` (at most `limit`, oldest first) and the ids deleted."""
    xid, after_id = parse_cursor(cursor)
    async with reading(conn) as tx:
        # Before the rows: a statement's snapshot is taken as it starts, so every transaction older
        # than this horizon committed before the rows below were read.
        [(horizon,)] = await fetch(tx, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text", ())
        rows = await fetch(
            tx,
            f"SELECT {_SELECT}, m.changed_xid::text FROM memories m WHERE m.tenant_id = %s "
            "AND (m.changed_xid > %s::text::xid8 "
            'OR (m.changed_xid = %s::text::xid8 AND m.id > %s COLLATE "C")) '
            'ORDER BY m.changed_xid, m.id COLLATE "C" LIMIT %s',
            (tenant, str(xid), str(xid), after_id, limit + 1),
        )
        deleted = await fetch(
            tx,
            "SELECT id FROM memory_deletions WHERE tenant_id = %s AND deleted_xid >= %s::text::xid8 "
            "ORDER BY deleted_xid LIMIT %s",
            (tenant, str(xid), MAX_DELETIONS),
        )
    page = rows[:limit]
    following = f"{page[-1][-1]}:{page[-1][0]}" if len(rows) > limit else None
    return Changes([row_to_memory(r) for r in page], [str(r[0]) for r in deleted], following, f"{horizon}:")
