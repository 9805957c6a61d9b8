"""`GET /v1/team/changes` on a team server: what a member's cache has to apply (team/changes.py)."""

from __future__ import annotations

import dataclasses

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import TeamChangesReply
from hippod.errors import HippoError
from hippod.request import RequestContext

MAX_PAGE = 1000


async def team_changes(ctx: RequestContext, body: m.TeamChanges) -> tuple[TeamChangesReply, str]:
    if not 1 <= body.limit <= MAX_PAGE:
        raise HippoError("usage", f"limit must be 1 to {MAX_PAGE}")
    store = await ctx.global_store()
    if not store.team:
        raise HippoError("not_implemented", "this hippod is not a team server (see: hippod serve --team)")
    from hippod.team import changes  # psycopg: a team server's alone

    try:
        found = await changes.since(store.db.reader, ctx.tenant, body.after, body.limit)
    except ValueError as exc:
        raise HippoError("usage", str(exc)) from None
    reply = TeamChangesReply(
        memories=[dataclasses.asdict(memory) for memory in found.memories],
        deleted=found.deleted,
        next=found.next,
        horizon=found.horizon,
    )
    return reply, f"{len(found.memories)} changed, {len(found.deleted)} deleted"
