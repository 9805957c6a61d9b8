"""`sleep`: consolidate one store (sleep.md §1-§9), and `sleep_store`, which the daily run also calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import SleepReply
from hippod import clock
from hippod.request import RequestContext
from hippod.state import DaemonState
from hippod.store import memories
from hippod.store.stores import Store

Say = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SleepOptions:
    dry_run: bool = False
    no_learn: bool = False
    no_share: bool = False
    # The daily run learns from git itself first, so its sleeps skip phase 1's git part.
    git: bool = True


async def sleep_store(
    state: DaemonState, store: Store, options: SleepOptions, say: Say | None = None
) -> SleepReply:
    """Run every phase of sleep.md §2 on one store and return its results.

    Only phase 15 (the record) exists so far: the run is counted, audited and timestamped.
    """
    reply = SleepReply(dry_run=options.dry_run)
    if options.dry_run:
        return reply
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await memories.audit(conn, ts=now, tenant="default", actor="daemon", op="consolidate", metadata={})
        count = int(await memories.get_meta(conn, "sleep_count") or 0)
        await memories.set_meta(conn, "sleep_count", str(count + 1))
        await memories.set_meta(conn, "last_sleep", now)
    return reply


async def sleep(ctx: RequestContext, body: m.Sleep) -> tuple[SleepReply, str]:
    store = await ctx.target_store(write=True)
    options = SleepOptions(dry_run=body.dry_run, no_learn=body.no_learn, no_share=body.no_share)
    reply = await sleep_store(ctx.state, store, options, ctx.say)
    return reply, "Running consolidation...\n\nResults:\n  (phases not yet built)"
