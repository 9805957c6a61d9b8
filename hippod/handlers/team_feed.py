"""A team server's side of its members' link: `GET /v1/team/changes`, what a member's cache has to
apply (store/postgres/changes.py), and `POST /v1/team/marks`, the retrievals and outcome marks a member's
recalls made of team memories, in batches."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import TeamChangesReply, TeamMarksReply
from hippoctl.protocol.validate import TEAM_FEED_PAGE_MAX as MAX_PAGE
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle.outcome import mark_rows
from hippod.model.strength import RETRIEVAL_HALF_LIFE_BONUS

if TYPE_CHECKING:
    from hippod.store.team_store import TeamStore

# Ids in one batch of marks, all kinds together.
MAX_MARKS = 1000


async def _team_store(ctx: RequestContext) -> TeamStore:
    """The team server's store; HippoError `not_implemented` on a laptop."""
    store = await ctx.global_store()
    if store.team:
        from hippod.store.team_store import TeamStore  # psycopg: a team server's alone

        if isinstance(store, TeamStore):
            return store
    raise HippoError("not_implemented", "this hippod is not a team server (see: hippod serve --team)")


def _rounds(ids: list[str]) -> list[list[str]]:
    """Ids split so that none is twice in one round: an id marked three times is in three rounds, so
    each mark counts, as it would have one request at a time."""
    rounds: list[list[str]] = []
    seen: dict[str, int] = {}
    for memory_id in ids:
        n = seen.get(memory_id, 0)
        seen[memory_id] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(memory_id)
    return rounds


async def team_marks(ctx: RequestContext, body: m.TeamMarks) -> tuple[TeamMarksReply, str]:
    """Strengthen each retrieved memory once per mark, as the member's own recall would have, then
    apply the good and bad marks as `outcome` does; ids no longer stored are passed over."""
    if len(body.retrieved) + len(body.good) + len(body.bad) > MAX_MARKS:
        raise HippoError("usage", f"at most {MAX_MARKS} marks in one batch")
    store = await _team_store(ctx)
    from hippod.store.postgres import mark_batches  # psycopg: a team server's alone

    now = clock.iso(clock.now())
    applied = {True: 0, False: 0}
    # One transaction: a batch is applied whole or not at all, so one the laptop sends again after
    # a failure is not applied twice in part.
    async with store.db.transaction() as conn:
        if body.batch_key is not None and not await mark_batches.first_time(conn, body.batch_key, now):
            return TeamMarksReply(retrieved=0, good=0, bad=0, again=True), "this batch was applied before"
        present = {m.id for m in await store.rows.get_many(conn, list(set(body.retrieved)))}
        retrieved = 0
        for ids in _rounds([i for i in body.retrieved if i in present]):
            await store.rows.strengthen(conn, ids, now, RETRIEVAL_HALF_LIFE_BONUS)
            retrieved += len(ids)
        if body.retrieved:
            await store.rows.audit(
                conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="team_retrievals",
                metadata={"retrievals": retrieved, "memories": len(present)},
            )  # fmt: skip
        for good, marked in ((True, body.good), (False, body.bad)):
            for ids in _rounds(marked):
                applied[good] += len(await mark_rows(ctx, store, conn, ids, good))
    text = f"{retrieved} retrievals, {applied[True]} good and {applied[False]} bad marks applied"
    return TeamMarksReply(retrieved=retrieved, good=applied[True], bad=applied[False]), text


async def team_changes(ctx: RequestContext, body: m.TeamChanges) -> tuple[TeamChangesReply, str]:
    if not 1 <= body.limit <= MAX_PAGE:
        raise HippoError("usage", f"limit must be 1 to {MAX_PAGE}")
    store = await _team_store(ctx)
    from hippod.store.postgres import changes  # psycopg: a team server's alone

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
