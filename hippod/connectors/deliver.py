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
    was deleted at the source, or archived here, before this delivery) or rejected (its text is)."""

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
            archived = await connectors.raw_rows(conn, tenant, plan.artifact_ref)
            await _archive(ctx, conn, archived, plan.reason, now)
            if plan.deleted:
                await connectors.record_removal(conn, tenant, plan.artifact_ref, now, key)
            ack = Ack("archived" if archived else "not_found", archived=len(archived))
        elif isinstance(plan, Ingest) and memory is not None:
            ref = plan.receipt.artifact_ref
            earlier = await connectors.raw_rows(conn, tenant, ref)
            if await connectors.removed(conn, tenant, ref) or (
                not earlier and not plan.edit and await connectors.archived_only(conn, tenant, ref)
            ):
                # Deleted at the source, or archived here since: a late delivery does not undo that.
                ack = Ack("deleted")
            elif earlier and not plan.edit:
                # The same item again (a backfill beside the webhook, a reopened issue): kept once.
                ack = Ack("duplicate", earlier[0].id)
            else:
                archived = earlier
                await _archive(ctx, conn, archived, f"edited at the source ({key})", now)
                if await memories.insert(conn, memory):
                    await memories.audit(
                        conn,
                        ts=now,
                        tenant=tenant,
                        actor=ctx.actor,
                        op="connector_ingest",
                        target=memory.id,
                        metadata={"source": source, "event": event},
                    )
                    ack = Ack("ingested", memory.id, archived=len(archived) or None)
                else:
                    ack = Ack("rejected")  # a rejected text stays rejected
        await connectors.log_delivery(conn, source, key, tenant, now, ack.memory_id, event)
        if letter is not None:
            await connectors.mark_replayed(conn, letter, ack.status, ack.memory_id, now)
    if archived:
        store.mirrors.changed(archived)
    if ack.status == "ingested" and memory is not None:
        store.written([memory])
    return ack


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
