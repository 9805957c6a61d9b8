"""A tenant's cards as the card verbs and the reclaim job reach them (integrations.md §14): looked up,
checked, audited, shaped for a reply, and their expired leases reclaimed."""

from __future__ import annotations

import aiosqlite

from hippoctl.protocol.replies_cards import CardItem, CardReply, CardRunItem
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import cards as rules
from hippod.store.sqlite import cards, memories
from hippod.store.sqlite.cards import Card, Run

TITLE_MAX = 300
TEXT_MAX = 10_000
RUNTIME_MAX = 100


def item(card: Card) -> CardItem:
    return CardItem(
        card.id,
        card.title,
        card.repo,
        card.contract,
        card.budget,
        card.status,
        card.created_at,
        card.updated_at,
        tenant=card.tenant,
    )


def run_item(run: Run) -> CardRunItem:
    return CardRunItem(
        run.run, run.runtime, run.started_at, run.lease_expires_at, run.ended_at, run.end_reason
    )


def text_field(value: str | None, name: str, limit: int, *, required: bool = True) -> str | None:
    """A card's text field trimmed, refused when empty (if required) or longer than `limit`."""
    text = (value or "").strip()
    if not text:
        if required:
            raise HippoError("usage", f"{name} must not be empty")
        return None
    if len(text) > limit:
        raise HippoError("usage", f"{name} is {len(text)} characters; the limit is {limit}")
    return text


async def card_of(conn: aiosqlite.Connection, ctx: RequestContext, card_id: int) -> Card:
    """The tenant's card `card_id`; another tenant's card is as unknown as a missing one."""
    card = await cards.get(conn, ctx.tenant, card_id)
    if card is None:
        raise HippoError("not_found", f"no card #{card_id}")
    return card


async def audit(
    conn: aiosqlite.Connection, ctx: RequestContext, op: str, card_id: int, **meta: object
) -> None:
    await memories.audit(
        conn,
        ts=clock.iso(clock.now()),
        tenant=ctx.tenant,
        actor=ctx.actor,
        op=op,
        target=f"card:{card_id}",
        metadata=dict(meta),
    )


def live_reply(card: Card, run: Run | None, readied: list[int] | None = None) -> CardReply:
    """A move's reply: the card and its live run."""
    return CardReply(card=item(card), run=run_item(run) if run else None, readied=readied or [])


async def reclaim_expired(
    conn: aiosqlite.Connection, tenant: str | None, now: str, actor: str
) -> list[tuple[int, int]]:
    """Every running card of `tenant` (every tenant when None) whose lease has passed goes back to
    ready, its run ended `expired`; returns the (card, run) pairs reclaimed. Call in a transaction."""
    reclaimed = []
    for card_id, run, owner in await cards.expired(conn, tenant, now):
        if await cards.move(conn, card_id, "ready", now, only_from=rules.MOVES["reclaim"][0]):
            await cards.end_run(conn, card_id, run, now, "expired")
            await memories.audit(
                conn,
                ts=now,
                tenant=owner,
                actor=actor,
                op="card_reclaim",
                target=f"card:{card_id}",
                metadata={"run": run},
            )
            reclaimed.append((card_id, run))
    return reclaimed
