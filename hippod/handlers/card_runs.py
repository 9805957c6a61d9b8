"""`card claim|heartbeat|block|review|complete|reclaim`: the moves of a card's run (integrations.md §14).

Each move is one transaction whose UPDATE names the states it moves from, so of two agents claiming
one card at the same moment exactly one wins; the other is told the card is no longer claimable.
"""

from __future__ import annotations

import aiosqlite

from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.replies_cards import CardReclaimReply, CardReply, ReclaimedRun
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import cards as rules
from hippod.lifecycle.card_rows import (
    RUNTIME_MAX,
    TEXT_MAX,
    audit,
    card_of,
    live_reply,
    reclaim_expired,
    text_field,
)
from hippod.store.sqlite import cards
from hippod.store.sqlite.cards import Card, Run
from hippod.store.stores import sqlite_only


def _bad_state(card: Card, verb: str, run: Run | None) -> HippoError:
    allowed = rules.MOVES[verb][0]
    if run is None:
        ended = ""
    elif run.end_reason:
        ended = f" (run {run.run} ended: {run.end_reason})"
    else:
        ended = f" (run {run.run} by {run.runtime})"
    return HippoError(
        "bad_state",
        f"card #{card.id} is {card.status}{ended}; `card {verb}` needs it {' or '.join(allowed)}",
    )


async def _held(
    conn: aiosqlite.Connection, ctx: RequestContext, card_id: int, verb: str, run: int | None
) -> tuple[Card, Run | None]:
    """The card and its live run for a move by the holder of run `run` (None: whoever holds it).

    A `--run` other than the live run refuses the move first (`run_mismatch`): the caller's run was
    reclaimed or replaced, whatever state the card is in now. Then the state must allow the move.
    """
    card = await card_of(conn, ctx, card_id)
    live = await cards.live_run(conn, card.id)
    if run is not None and (live is None or live.run != run):
        now_live = f"the live run is {live.run} ({live.runtime})" if live else "it has no run"
        raise HippoError("run_mismatch", f"card #{card.id}: run {run} is not its live run; {now_live}")
    if card.status not in rules.MOVES[verb][0]:
        raise _bad_state(card, verb, live)
    return card, live


async def claim(ctx: RequestContext, body: mc.CardClaim) -> tuple[CardReply, str]:
    runtime = text_field(body.runtime, "--runtime", RUNTIME_MAX)
    assert runtime is not None
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now_at = clock.now()
    now, lease = clock.iso(now_at), clock.iso(rules.lease_until(now_at))
    async with store.db.transaction() as conn:
        card = await card_of(conn, ctx, body.id)
        if not await cards.move(conn, card.id, "running", now, only_from=rules.MOVES["claim"][0]):
            raise _bad_state(card, "claim", await cards.live_run(conn, card.id))
        number = await cards.start_run(conn, card.id, runtime, now, lease)
        await audit(conn, ctx, "card_claim", card.id, run=number, runtime=runtime)
        card = await card_of(conn, ctx, card.id)
        run = await cards.live_run(conn, card.id)
    return live_reply(card, run), f"Claimed card #{card.id}: run {number}, lease until {lease}"


async def heartbeat(ctx: RequestContext, body: mc.CardHeartbeat) -> tuple[CardReply, str]:
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now_at = clock.now()
    lease = clock.iso(rules.lease_until(now_at))
    async with store.db.transaction() as conn:
        card, live = await _held(conn, ctx, body.id, "heartbeat", body.run)
        assert live is not None  # a running card has a run
        await cards.extend_lease(conn, card.id, live.run, lease)
        run = await cards.live_run(conn, card.id)
    return live_reply(card, run), f"Card #{card.id} run {live.run}: lease until {lease}"


async def _end(
    ctx: RequestContext, card_id: int, verb: str, run: int | None, *, reason: str | None = None
) -> tuple[CardReply, str]:
    """block and review: the card moves on and its live run ends with the verb's name."""
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    to = rules.MOVES[verb][1]
    async with store.db.transaction() as conn:
        card, live = await _held(conn, ctx, card_id, verb, run)
        assert live is not None
        # _held checked the state in this transaction, which no other write can interleave with.
        await cards.move(conn, card.id, to, now, only_from=rules.MOVES[verb][0])
        await cards.end_run(conn, card.id, live.run, now, to)
        if reason is not None:
            await cards.add_comment(conn, card.id, now, live.runtime, reason)
        await audit(conn, ctx, f"card_{verb}", card.id, run=live.run)
        card = await card_of(conn, ctx, card.id)
        ended = await cards.live_run(conn, card.id)
    return live_reply(card, ended), f"Card #{card.id} is {to} (run {live.run} ended)"


async def block(ctx: RequestContext, body: mc.CardBlock) -> tuple[CardReply, str]:
    reason = text_field(body.reason, "--reason", TEXT_MAX)
    return await _end(ctx, body.id, "block", body.run, reason=reason)


async def review(ctx: RequestContext, body: mc.CardReview) -> tuple[CardReply, str]:
    return await _end(ctx, body.id, "review", body.run)


async def complete(ctx: RequestContext, body: mc.CardComplete) -> tuple[CardReply, str]:
    if body.outcome not in rules.OUTCOMES:
        raise HippoError(
            "usage", f"--outcome must be one of {', '.join(rules.OUTCOMES)}, not {body.outcome!r}"
        )
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    to = rules.completed_state(body.outcome)
    readied: list[int] = []
    async with store.db.transaction() as conn:
        card, live = await _held(conn, ctx, body.id, "complete", body.run)
        await cards.move(conn, card.id, to, now, only_from=rules.MOVES["complete"][0])
        if to == "done":
            # Every waiting card whose dependencies are now all done becomes ready.
            for child in await cards.dependents(conn, card.id):
                if not await cards.unfinished_deps(conn, child) and await cards.move(
                    conn, child, "ready", now, only_from=("waiting",)
                ):
                    readied.append(child)
        await audit(conn, ctx, "card_complete", card.id, outcome=body.outcome, readied=readied)
        card = await card_of(conn, ctx, card.id)
    freed = f"; now ready: {', '.join(f'#{c}' for c in readied)}" if readied else ""
    return live_reply(card, live, readied), f"Card #{card.id} is {to} ({body.outcome}){freed}"


async def reclaim(ctx: RequestContext, body: mc.CardReclaim) -> tuple[CardReclaimReply, str]:
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        found = await reclaim_expired(conn, ctx.tenant, now, ctx.actor)
    reply = CardReclaimReply(reclaimed=[ReclaimedRun(card=c, run=r) for c, r in found])
    if not found:
        return reply, "No expired leases."
    listed = ", ".join(f"#{c} (run {r})" for c, r in found)
    return reply, f"Reclaimed {len(found)} card{'s' if len(found) != 1 else ''}: {listed}"
