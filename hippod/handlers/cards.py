"""`card create|show|list|comment|depend`: the work-queue cards that do not move a run
(integrations.md §14). The moves of a run are in card_runs.py."""

from __future__ import annotations

import aiosqlite

from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.replies_cards import (
    CardCommentItem,
    CardDetailReply,
    CardReply,
    CardsReply,
)
from hippoctl.protocol.replies_continuity import HandoffItem
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import cards as rules
from hippod.lifecycle.card_rows import (
    RUNTIME_MAX,
    TEXT_MAX,
    TITLE_MAX,
    audit,
    card_of,
    item,
    run_item,
    text_field,
)
from hippod.store.sqlite import cards, continuity
from hippod.store.stores import sqlite_only


async def _checked_deps(
    conn: aiosqlite.Connection, ctx: RequestContext, card_id: int, wanted: list[int]
) -> list[int]:
    """The dependencies to add, unknown ones and cycles refused (exit 2, as a usage error)."""
    deps = list(dict.fromkeys(wanted))
    found = await cards.many(conn, ctx.tenant, deps)
    missing = [d for d in deps if d not in found]
    if missing:
        raise HippoError("usage", f"unknown dependency: no card #{missing[0]}")
    cycle = rules.cycle_through(await cards.edges(conn, ctx.tenant), card_id, deps)
    if cycle is not None:
        path = " -> ".join(f"#{n}" for n in cycle)
        raise HippoError("usage", f"dependency cycle refused: {path}")
    return deps


async def create(ctx: RequestContext, body: mc.CardCreate) -> tuple[CardReply, str]:
    title = text_field(body.title, "the title", TITLE_MAX)
    assert title is not None
    repo = text_field(body.repo, "--repo", TEXT_MAX, required=False)
    contract = text_field(body.contract, "--contract", TEXT_MAX, required=False)
    if body.budget is not None and body.budget < 0:
        raise HippoError("usage", f"--budget must be 0 or more, not {body.budget}")
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        card_id = await cards.insert(conn, ctx.tenant, title, repo, contract, body.budget, "ready", now)
        deps = await _checked_deps(conn, ctx, card_id, body.depends_on)
        await cards.add_deps(conn, card_id, deps)
        state = rules.initial_state(await cards.unfinished_deps(conn, card_id))
        if state != "ready":
            await cards.move(conn, card_id, state, now, only_from=("ready",))
        await audit(conn, ctx, "card_create", card_id, depends_on=deps)
        card = await card_of(conn, ctx, card_id)
    waits = f" (waiting on {', '.join(f'#{d}' for d in deps)})" if state == "waiting" else ""
    return CardReply(card=item(card)), f"Card #{card.id} created: {card.status}{waits}"


async def depend(ctx: RequestContext, body: mc.CardDepend) -> tuple[CardReply, str]:
    if not body.on:
        raise HippoError("usage", "name at least one card to depend on (--on <id>)")
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        card = await card_of(conn, ctx, body.id)
        deps = await _checked_deps(conn, ctx, card.id, body.on)
        await cards.add_deps(conn, card.id, deps)
        await cards.touch(conn, card.id, now)
        # A ready card with a dependency not done waits again; a card already taken keeps its state.
        if await cards.unfinished_deps(conn, card.id):
            await cards.move(conn, card.id, "waiting", now, only_from=("ready",))
        await audit(conn, ctx, "card_depend", card.id, depends_on=deps)
        card = await card_of(conn, ctx, card.id)
    listed = ", ".join(f"#{d}" for d in deps)
    return CardReply(card=item(card)), f"Card #{card.id} depends on {listed}: {card.status}"


async def comment(ctx: RequestContext, body: mc.CardComment) -> tuple[CardReply, str]:
    text = text_field(body.body, "--body", TEXT_MAX)
    author = text_field(body.author, "--author", RUNTIME_MAX, required=False) or ctx.actor
    assert text is not None
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        card = await card_of(conn, ctx, body.id)
        await cards.add_comment(conn, card.id, now, author, text)
        await cards.touch(conn, card.id, now)
        card = await card_of(conn, ctx, card.id)
    return CardReply(card=item(card)), f"Comment added to card #{card.id}"


async def show(ctx: RequestContext, body: mc.CardShow) -> tuple[CardDetailReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    conn = store.db.reader
    card = await card_of(conn, ctx, body.id)
    handoff = await continuity.latest_task_handoff(conn, ctx.tenant, f"card:{card.id}")
    reply = CardDetailReply(
        card=item(card),
        depends_on=await cards.deps(conn, card.id),
        dependents=await cards.dependents(conn, card.id),
        runs=[run_item(r) for r in await cards.runs(conn, card.id)],
        comments=[CardCommentItem(c.ts, c.author, c.body) for c in await cards.comments(conn, card.id)],
        handoff=HandoffItem(
            handoff.id,
            handoff.session_id,
            handoff.repo_root,
            handoff.task_id,
            handoff.summary,
            handoff.next_action,
            handoff.artifacts,
            handoff.created_at,
        )
        if handoff is not None
        else None,
    )
    return reply, _show_text(reply)


def _show_text(reply: CardDetailReply) -> str:
    card = reply.card
    lines = [f"#{card.id} [{card.status}] {card.title}"]
    for label, value in (("repo", card.repo), ("contract", card.contract), ("budget", card.budget)):
        if value is not None:
            lines.append(f"{label}: {value}")
    lines.append(f"created: {card.created_at}; updated: {card.updated_at}")
    if reply.depends_on:
        lines.append("depends on: " + ", ".join(f"#{d}" for d in reply.depends_on))
    if reply.dependents:
        lines.append("needed by: " + ", ".join(f"#{d}" for d in reply.dependents))
    for run in reply.runs:
        end = (
            f"ended {run.ended_at} ({run.end_reason})"
            if run.ended_at
            else f"lease until {run.lease_expires_at}"
        )
        lines.append(f"run {run.run} by {run.runtime}: started {run.started_at}, {end}")
    for c in reply.comments:
        lines.append(f"{c.ts} {c.author}: {c.body}")
    if reply.handoff is not None:
        h = reply.handoff
        lines.append(f"latest handoff #{h.id} ({h.created_at}): {h.summary}")
        if h.next_action:
            lines.append(f"  next: {h.next_action}")
    return "\n".join(lines)


async def list_cards(ctx: RequestContext, body: mc.CardList) -> tuple[CardsReply, str]:
    if body.status is not None and body.status not in mc.STATES:
        raise HippoError("usage", f"unknown status {body.status!r}; use one of {', '.join(mc.STATES)}")
    if body.limit is not None and body.limit < 1:
        raise HippoError("usage", f"--limit must be 1 or more, not {body.limit}")
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    found = await cards.listed(store.db.reader, ctx.tenant, body.status, body.limit)
    text = "\n".join(f"#{c.id} [{c.status}] {c.title}" for c in found) or "No cards."
    return CardsReply(cards=[item(c) for c in found]), text
