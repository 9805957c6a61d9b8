"""`tokens`: what memory text cost over the last days, from the global store's ledger
(continuity.md §7)."""

from __future__ import annotations

from datetime import timedelta

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_context import TokensReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.context.tokens_table import render, totals
from hippod.store.stores import sqlite_only

MAX_WINDOW_DAYS = 36_500


async def tokens(ctx: RequestContext, body: m.Tokens) -> tuple[TokensReply, str]:
    """Sent, re-read and saved tokens per surface over the last `days` local calendar days."""
    if body.days < 1:
        raise HippoError("usage", "--days must be 1 or more")
    # Today counts as the first of the days; the cap keeps the date arithmetic in range.
    today = clock.now().astimezone().date()
    since = (today - timedelta(days=min(body.days, MAX_WINDOW_DAYS) - 1)).isoformat()
    project: str | None = None
    sql = "SELECT surface, kind, tokens, skipped FROM token_ledger WHERE tenant_id = ? AND day >= ?"
    params: list[object] = [ctx.tenant, since]
    if body.here:
        here = await ctx.project_store()
        project = here.project if here is not None else ""
        sql += " AND project = ?"
        params.append(project)
    store = sqlite_only(await ctx.global_store(), ctx.verb)
    rows = await store.db.reader.execute_fetchall(sql, params)
    surfaces, total = totals((str(r[0]), str(r[1]), int(r[2]), bool(r[3])) for r in rows)
    reply = TokensReply(days=body.days, since=since, surfaces=surfaces, total=total, project=project)
    return reply, render(reply)
