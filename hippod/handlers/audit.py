"""`audit list` and `audit prune` (memory-model.md §15)."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import AuditItem, AuditPruneReply, AuditReply
from hippoctl.protocol.validate import AUDIT_PAGE_MAX as MAX_LIMIT
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext


async def audit_list(ctx: RequestContext, body: m.AuditList) -> tuple[AuditReply, str]:
    if not 1 <= body.limit <= MAX_LIMIT:
        raise HippoError("usage", f"--limit must be between 1 and {MAX_LIMIT}")
    since = None
    if body.since is not None:
        try:
            since = clock.iso(clock.parse_iso(body.since))
        except ValueError:
            raise HippoError("usage", f"--since {body.since!r} is not an ISO date or time") from None
    store = await ctx.target_store(write=False)
    entries = await store.audit_log.newest(
        store.db.reader, ctx.tenant, op=body.op, since=since, limit=body.limit
    )
    items = [AuditItem(e.id, e.ts, e.tenant, e.actor, e.op, e.target, e.metadata) for e in entries]
    lines = [
        f"{i.ts} {i.op} {i.target or '-'} {i.actor}"
        + (f" {msgspec.json.encode(i.metadata).decode()}" if i.metadata else "")
        for i in items
    ]
    return AuditReply(entries=items), "\n".join(lines) or "No audit entries."


async def audit_prune(ctx: RequestContext, body: m.AuditPrune) -> tuple[AuditPruneReply, str]:
    if body.days < 0:
        raise HippoError("usage", "--days must be 0 or more")
    store = await ctx.target_store(write=True)
    moment = clock.now()
    before = clock.iso(moment - timedelta(days=body.days))
    now = clock.iso(moment)
    async with store.db.transaction() as conn:
        deleted = await store.audit_log.prune(conn, before)
        await store.rows.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="audit_prune",
            metadata={"days": body.days, "deleted": deleted},
        )
    return AuditPruneReply(
        deleted=deleted, before=before
    ), f"Pruned {deleted} audit entries older than {before}"
