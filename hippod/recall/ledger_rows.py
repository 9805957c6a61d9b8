"""Writing token-ledger rows (continuity.md §6-§7): one row per block of memory text handed out.

The ledger lives in the global store. A row is queued behind whatever holds that store's writer,
so counting a block never delays the reply that carries it.
"""

from __future__ import annotations

import logging

import aiosqlite

from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.store.sqlite import ledger
from hippod.store.stores import SqliteStore, Store

log = logging.getLogger("hippod.context.ledger_rows")


def session_of(ctx: RequestContext) -> str | None:
    """The request's session id, or None when it has none."""
    key = ctx.session_key
    return None if key == "-" else key


async def queue_sent(ctx: RequestContext, source: Store, *, surface: str, text: str, items: int) -> None:
    """Queue one `sent` row for `text` as printed; `source` is the store the block was read from."""
    row = ledger.LedgerRow(
        surface=surface,
        tokens=ledger.estimate(text),
        items=items,
        session_id=session_of(ctx),
        project=source.project,
        store=source.root,
    )
    await queue(ctx, row)


async def queue(ctx: RequestContext, row: ledger.LedgerRow) -> None:
    """Queue `row` in the global store's ledger, stamped now; a store that cannot open drops it."""
    tenant, when = ctx.tenant, clock.now()
    try:
        # Not settled: the row is queued behind the writes before it, and waiting for them here would
        # put the recall's own strengthening, written after its reply, in front of that reply.
        target = await ctx.global_store(settle=False)
    except HippoError:
        # Named and logged where the store was opened (a corrupt file, a full disk).
        return
    except Exception:
        # The ledger is bookkeeping: a global store that cannot open must not fail the read.
        log.exception("token ledger: the global store did not open; row dropped")
        return

    if not isinstance(target, SqliteStore):
        # The ledger is a laptop's account of what its agents were sent; a team server keeps none.
        return

    async def write(conn: aiosqlite.Connection) -> None:
        await ledger.record(conn, tenant, row, when)

    target.db.write_soon(write)
