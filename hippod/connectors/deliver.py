"""Applying a webhook delivery's plan to the global store: the receipt, the archiving of what it
replaces and the delivery's log entry in one transaction, so a delivery is applied exactly once."""

from __future__ import annotations

import os
from dataclasses import dataclass

import aiosqlite
import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippod.base import clock
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import RequestContext
from hippod.connectors.plans import Ingest, Plan, Remove, Skip
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.memory import Memory
from hippod.store.sqlite import connectors, memories
from hippod.store.stores import SqliteStore, sqlite_only

UNROUTABLE = "__unroutable__"


@dataclass
class ConnectorContext(RequestContext):
    """A delivery as the store sees it: written by `connector:<source>` in the routed tenant."""

    source: str = "connector"

    @property
    def actor(self) -> str:
        return f"connector:{self.source}"


@dataclass(frozen=True, slots=True)
class Ack:
    """What the delivery did: ingested, duplicate, skipped, archived, not_found, deleted (the item
    was deleted at the source, or archived here, before this delivery), stale (an edit no newer than
    the one applied; memory_id is the receipt kept) or rejected (its text is)."""

    status: str
    memory_id: str | None = None
    archived: int | None = None


def env_tenant() -> str:
    return os.environ.get("HIPPO_TENANT", "").strip() or "default"


async def global_store(state: DaemonView) -> SqliteStore:
    """The global store, which keeps the connectors' routes, marks and dead letters; HippoError
    `not_on_team_store` on a team server, which takes no webhooks of its own."""
    return sqlite_only(await state.registry.open(state.registry.global_root), "the connectors' webhooks")


async def tenant_for(state: DaemonView, source: str, key: str | None) -> str | None:
    """The tenant a Slack team or GitHub installation writes to: its mapping; with no mapping at all,
    HIPPO_TENANT (else default); None when mappings exist but none is this one's (refused)."""
    store = await global_store(state)
    tenant, any_mapping = await connectors.routed_tenant(store.db.reader, source, key)
    if tenant is not None:
        return tenant
    return None if any_mapping else env_tenant()


async def _archive(
    ctx: ConnectorContext, conn: aiosqlite.Connection, rows: list[Memory], reason: str, now: str
) -> None:
    for row in rows:
        await memories.archive_raw(conn, row, reason, now)
        await memories.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="connector_delete",
            target=row.id,
            metadata={"reason": reason[:200]},
        )
        row.kind, row.content, row.updated_at = "archived", "", now


async def _archived_here(
    conn: aiosqlite.Connection, tenant: str, ref: str, item: connectors.Kept | None, edit: bool
) -> bool:
    """Whether an item with no live receipt was stored and archived since, so that a late delivery
    does not bring it back: for an edit, the receipt the connectors left live was archived here (an
    item the source emptied, or whose text was rejected, takes a later edit); for the item itself, or
    an item stored before receipts were kept, every receipt of it is archived."""
    if item is None or not edit:
        return await connectors.archived_only(conn, tenant, ref)
    return item.memory_id is not None


async def _remove(
    ctx: ConnectorContext, conn: aiosqlite.Connection, plan: Remove, key: str, now: str
) -> tuple[Ack, list[Memory]]:
    """A deletion archives the item's receipts for good; an emptying edit archives them unless a
    newer edit was applied (`stale`)."""
    tenant, ref = ctx.tenant, plan.artifact_ref
    item = await connectors.kept(conn, tenant, ref)
    if not plan.deleted and item is not None and item.stale(plan.edited):
        return Ack("stale", item.memory_id), []
    archived = await connectors.raw_rows(conn, tenant, ref)
    await _archive(ctx, conn, archived, plan.reason, now)
    if plan.deleted:
        await connectors.record_removal(conn, tenant, ref, now, key)
    else:
        # Nothing live to empty: a receipt archived here stays the one a later edit is checked against.
        left = item.memory_id if item is not None and not archived else None
        await connectors.keep(conn, tenant, ref, left, plan.edited, key, now)
    return Ack("archived" if archived else "not_found", archived=len(archived)), archived


async def _ingest(
    ctx: ConnectorContext,
    conn: aiosqlite.Connection,
    plan: Ingest,
    memory: Memory,
    key: str,
    event: str,
    now: str,
) -> tuple[Ack, list[Memory]]:
    """Store an item once; an edit replaces its live receipt unless it is no newer than the edit
    applied (`stale`); an item deleted at the source or archived here is not brought back."""
    tenant, ref = ctx.tenant, plan.receipt.artifact_ref
    earlier = await connectors.raw_rows(conn, tenant, ref)
    item = await connectors.kept(conn, tenant, ref)
    if await connectors.removed(conn, tenant, ref) or (
        not earlier and await _archived_here(conn, tenant, ref, item, plan.edit)
    ):
        return Ack("deleted"), []
    if earlier and not plan.edit:
        # The same item again (a backfill beside the webhook, a reopened issue): kept once.
        return Ack("duplicate", earlier[0].id), []
    if plan.edit and item is not None and item.stale(plan.edited):
        # An edit older than the text stored (a late delivery, a replayed letter) changes nothing.
        return Ack("stale", item.memory_id), []
    edited = plan.edited if plan.edit else None
    await _archive(ctx, conn, earlier, f"edited at the source ({key})", now)
    if not await memories.insert(conn, memory):
        await connectors.keep(conn, tenant, ref, None, edited, key, now)
        return Ack("rejected"), earlier  # a rejected text stays rejected
    await memories.audit(
        conn,
        ts=now,
        tenant=tenant,
        actor=ctx.actor,
        op="connector_ingest",
        target=memory.id,
        metadata={"source": ctx.source, "event": event},
    )
    await connectors.keep(conn, tenant, ref, memory.id, edited, key, now)
    return Ack("ingested", memory.id, archived=len(earlier) or None), earlier


async def deliver(
    state: DaemonView, source: str, key: str, event: str, tenant: str, plan: Plan, letter: int | None = None
) -> Ack:
    """Apply one delivery's plan once: a key seen before changes nothing and answers `duplicate`.
    With `letter`, the delivery is that dead letter's replay, which is marked done in the same
    transaction (a replay racing another, or a live redelivery, finds the key seen)."""
    store = await global_store(state)
    request = m.Request(id=0, cwd="/", body=m.Ping(), tenant=tenant, global_store=True)
    ctx = ConnectorContext(request=request, state=state, source=source)
    now = clock.iso(clock.now())
    memory = None
    if isinstance(plan, Ingest):
        receipt = plan.receipt
        if validate.content_problem(receipt.content) is not None:
            plan = Skip("the text is too short or too long to store")
        else:
            memory = fresh_memory(
                ctx,
                store,
                receipt.content,
                list(receipt.tags),
                source=source,
                confidence="observed",
                scope=receipt.scope,
                owner=receipt.owner,
                artifact_ref=receipt.artifact_ref,
                kind="raw",
            )
    archived: list[Memory] = []
    async with store.db.transaction() as conn:
        seen = await connectors.logged(conn, source, key)
        if seen is not None:
            if letter is not None:
                await connectors.mark_replayed(conn, letter, "duplicate", seen.memory_id, now)
            return Ack("duplicate", seen.memory_id)
        ack = Ack("skipped")
        if isinstance(plan, Remove):
            ack, archived = await _remove(ctx, conn, plan, key, now)
        elif isinstance(plan, Ingest) and memory is not None:
            ack, archived = await _ingest(ctx, conn, plan, memory, key, event, now)
        await connectors.log_delivery(conn, source, key, tenant, now, ack.memory_id, event)
        if letter is not None:
            await connectors.mark_replayed(conn, letter, ack.status, ack.memory_id, now)
    if archived:
        store.mirrors.changed(archived)
    if ack.status == "ingested" and memory is not None:
        store.written([memory])
    return ack


async def stale(state: DaemonView, tenant: str, plan: Plan) -> bool:
    """Whether a plan is an edit no newer than the one applied: a dry run's look, without a write."""
    if isinstance(plan, Ingest) and plan.edit:
        ref, edited = plan.receipt.artifact_ref, plan.edited
    elif isinstance(plan, Remove) and not plan.deleted:
        ref, edited = plan.artifact_ref, plan.edited
    else:
        return False
    store = await global_store(state)
    item = await connectors.kept(store.db.reader, tenant, ref)
    return item is not None and item.stale(edited)


async def dead_letter(
    state: DaemonView,
    source: str,
    tenant: str,
    bucket: str,
    error: str,
    payload: bytes,
    headers: dict[str, str],
) -> None:
    """Keep a delivery that could not be read, with its signed headers, for a look and a replay."""
    store = await global_store(state)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await connectors.dead_letter(
            conn,
            source=source,
            tenant=tenant,
            now=now,
            bucket=bucket,
            error=error[:500],
            payload=payload,
            headers_json=msgspec.json.encode(headers).decode(),
        )
