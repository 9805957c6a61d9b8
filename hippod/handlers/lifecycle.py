"""`supersede`, `reject`, `rejections`, `unreject` and `invalidate` (memory-model.md §12)."""

from __future__ import annotations

import re

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import (
    InvalidateReply,
    RejectionItem,
    RejectionsReply,
    RejectReply,
    SupersedeReply,
    UnrejectReply,
)
from hippoctl.protocol.wording import DRY_RUN, agree, plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import global_copies
from hippod.lifecycle import invalidate as inv
from hippod.lifecycle.lookup import find_memory
from hippod.lifecycle.new_memory import fresh_memory, given_tags, validate_content
from hippod.mirrors.mirrors import dormant_file
from hippod.model.digest import content_digest, normalize
from hippod.store.records import Rejection
from hippod.store.stores import Store

LAYERS = ("episodic", "semantic", "trace")
_HEX = re.compile(r"[0-9a-f]{4,64}")


async def supersede(ctx: RequestContext, body: m.Supersede) -> tuple[SupersedeReply, str]:
    if body.new_id is not None:
        return await _supersede_by(ctx, body.id, body.new_id)
    content = validate_content(body.content)
    if body.layer is not None and body.layer not in LAYERS:
        raise HippoError("usage", f"unknown layer {body.layer!r}; use one of {', '.join(LAYERS)}")
    given = given_tags(body.tags) if body.tags is not None else None
    store, old = await find_memory(ctx, body.id)
    if old.superseded_by is not None:
        raise HippoError("already_superseded", f"{old.id} was already superseded by {old.superseded_by}")
    now = clock.iso(clock.now())
    tags = given if given is not None else old.tags
    new = fresh_memory(
        ctx,
        store,
        content,
        tags,
        layer=body.layer or old.layer,
        source=old.source,
        pinned=old.pinned if body.pin is None else body.pin,
        scope=old.scope,
        owner=old.owner,
        artifact_ref=old.artifact_ref,
        origin_project=old.origin_project,
    )
    half_life = new.half_life_days
    async with store.db.transaction() as conn:
        # The new version is written first; the old one points at it only if nobody got there first.
        if not await store.rows.insert(conn, new):
            raise HippoError("rejected_value", "the new text was rejected earlier and cannot be stored again")
        await _point(ctx, store, conn, old.id, new.id, now)
    store.written([new])
    store.mirrors.changed_ids([old.id])
    reply = SupersedeReply(
        old=old.id, new=new.id, store=store.root, layer=new.layer, half_life_days=half_life
    )
    text = (
        f"Superseded [{old.id}] with [{new.id}]\n"
        f"Layer: {new.layer} | Strength: 1.00 | Half-life: {half_life:g}d | Confidence: verified"
    )
    return reply, text


async def _point(ctx: RequestContext, store: Store, conn: object, old_id: str, new_id: str, now: str) -> None:
    """Old points at new, unless something superseded it meanwhile (then nothing changes): of two
    members superseding one memory at once, one wins and the other gets `already_superseded`."""
    if not await store.rows.mark_superseded(conn, old_id, new_id, now):
        raise HippoError("already_superseded", f"{old_id} was superseded meanwhile")
    await store.rows.audit(
        conn,
        ts=now,
        tenant=ctx.tenant,
        actor=ctx.actor,
        op="supersede",
        target=old_id,
        metadata={"new": new_id},
    )


async def _supersede_by(ctx: RequestContext, old_id: str, new_id: str) -> tuple[SupersedeReply, str]:
    """Point `old_id` at `new_id`, a memory already stored in the same store and tenant."""
    if old_id == new_id:
        raise HippoError("usage", "a memory cannot supersede itself")
    store, old = await find_memory(ctx, old_id)
    new = await store.rows.get(store.db.reader, ctx.tenant, new_id)
    if new is None:
        raise HippoError("not_found", f"no memory with id {new_id} in the store holding {old_id}")
    if old.superseded_by is not None:
        raise HippoError("already_superseded", f"{old.id} was already superseded by {old.superseded_by}")
    if new.superseded_by is not None:
        raise HippoError("bad_state", f"{new.id} is itself superseded by {new.superseded_by}")
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await _point(ctx, store, conn, old.id, new.id, now)
    store.mirrors.changed_ids([old.id])
    reply = SupersedeReply(
        old=old.id, new=new.id, store=store.root, layer=new.layer, half_life_days=new.half_life_days
    )
    return reply, f"Superseded [{old.id}] with [{new.id}]"


async def reject(ctx: RequestContext, body: m.Reject) -> tuple[RejectReply, str]:
    reason = body.reason.strip()
    if not reason:
        raise HippoError("usage", "--reason must not be empty")
    if body.id is not None:
        store, memory = await find_memory(ctx, body.id)
        text, source = memory.content, memory.id
    elif body.value is not None:
        store, text, source = await ctx.target_store(write=True), validate_content(body.value), None
    else:
        raise HippoError("usage", "reject takes a memory id or --value")
    removed, archived, digest = await reject_value(ctx, store, text, reason, source)
    # This project's own copies in the global store are as wrong as the memory: they go too.
    settled = await global_copies.settle(ctx, store, text, source, "reject", lambda _copy: True)
    taken = settled.removed
    elsewhere = 0 if settled.problem is not None else await _global_copies(ctx, store, digest)
    reply = RejectReply(
        digest=digest,
        removed=removed,
        archived=archived,
        global_copies=elsewhere,
        global_removed=taken,
        global_problem=settled.problem,
    )
    copies = len(removed) + len(archived)
    lines = [f"Rejected value {digest[:12]} ({copies} {'copy' if copies == 1 else 'copies'} removed)"]
    if taken:
        n = len(taken)
        lines.append(
            f"{agree(n, 'its global copy', 'its global copies')} [{', '.join(taken)}] "
            f"{agree(n, 'was')} removed too"
        )
    if settled.problem is not None:
        lines.append(settled.problem)
    if elsewhere:
        lines.append(
            f"the global store still holds {plural(elsewhere, 'copy')}; it stays out of this project's "
            "reads (add --global to reject it everywhere)"
        )
    return reply, "\n".join(lines)


async def _global_copies(ctx: RequestContext, store: Store, digest: str) -> int:
    """How many live copies of a value rejected in a project store the global store still holds."""
    if store.kind != "project":
        return 0
    global_store = await ctx.global_store()
    found = await global_store.rows.with_digest(global_store.db.reader, ctx.tenant, digest)
    return sum(1 for copy in found if copy.kind != "archived")


async def reject_value(
    ctx: RequestContext, store: Store, text: str, reason: str, source: str | None
) -> tuple[list[str], list[str], str]:
    """Tombstone a value in one transaction: delete its live and dormant copies, archive raw ones,
    and cut the text out of every other table that holds it.

    Returns (deleted ids, archived raw ids, digest).
    """
    digest = content_digest(text)
    now = clock.iso(clock.now())
    tombstone = Rejection(digest, reason, ctx.actor, now, source, len(normalize(text)))
    async with store.db.transaction() as conn:
        deleted, archived, dormant_ids = await store.rejections.reject_copies(
            conn, ctx.tenant, tombstone, text
        )
        removed = deleted + dormant_ids
        await store.rows.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="reject_value",
            target=source,
            metadata={"digest": digest, "removed": len(removed), "archived": len(archived)},
        )
    store.db.checkpoint_soon()
    # The text leaves the mirror folders before the reply: a daemon killed right after leaves none.
    await store.mirrors.write_now(deleted, archived, {dormant_file(i): None for i in dormant_ids})
    return removed, archived, digest


async def rejections_list(ctx: RequestContext, body: m.Rejections) -> tuple[RejectionsReply, str]:
    store = await ctx.target_store(write=False)
    items = [
        RejectionItem(
            r.digest, r.reason, r.rejected_by, r.rejected_at, r.source_memory_id, r.normalized_chars
        )
        for r in await store.rejections.all_of(store.db.reader, ctx.tenant)
    ]
    lines = [f"{r.digest[:16]}  {r.rejected_at}  {r.rejected_by}  {r.reason}" for r in items]
    return RejectionsReply(store=store.root, rejections=items), "\n".join(lines) or "No rejected values."


async def unreject(ctx: RequestContext, body: m.Unreject) -> tuple[UnrejectReply, str]:
    prefix = body.prefix.strip().lower()
    if not _HEX.fullmatch(prefix):
        raise HippoError("usage", "give at least 4 hex characters of the digest (see hippoctl rejections)")
    store = await ctx.target_store(write=True)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        found = await store.rejections.matching(conn, ctx.tenant, prefix)
        if not found:
            raise HippoError("not_found", f"no rejected value starts with {prefix}")
        if len(found) > 1:
            matches = plural(len(found), "rejected value")
            raise HippoError("ambiguous_prefix", f"{prefix} matches {matches}; give more of it")
        await store.rejections.remove(conn, ctx.tenant, found[0])
        await store.rows.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="unreject_value",
            metadata={"digest": found[0]},
        )
    return UnrejectReply(digest=found[0]), f"Unrejected {found[0][:12]}: the value can be stored again"


async def invalidate(ctx: RequestContext, body: m.Invalidate) -> tuple[InvalidateReply, str]:
    if body.id is not None:
        store, one = await find_memory(ctx, body.id)
        if one.superseded_by is not None:
            raise HippoError("already_superseded", f"{one.id} is superseded; it is already out of recall")
        targets = [one]
    elif body.pattern and body.pattern.strip():
        store = await ctx.target_store(write=False)
        pattern = body.pattern.strip()
        targets = [
            mem
            for mem in await store.rows.live(store.db.reader, ctx.tenant)
            if inv.matches(pattern, mem.content, mem.tags)
        ]
    else:
        raise HippoError("usage", 'invalidate takes a "<pattern>" or --id')
    hit = [mem for mem in targets if not mem.pinned]
    skipped = [mem.id for mem in targets if mem.pinned]
    if not body.dry_run and hit:
        now = clock.iso(clock.now())
        async with store.db.transaction() as conn:
            # Re-read inside the transaction, so a retrieval that landed meanwhile is not undone.
            hit = [mem for mem in await store.rows.get_many(conn, [mem.id for mem in hit]) if not mem.pinned]
            for mem in hit:
                inv.weaken(mem, now)
                await store.rows.update(conn, mem)
            await store.rows.audit_many(
                conn,
                ts=now,
                tenant=ctx.tenant,
                actor=ctx.actor,
                op="invalidate",
                targets=[mem.id for mem in hit],
                metadata={"pattern": (body.pattern or "")[:200], "reason": (body.reason or "")[:200]},
            )
        store.written(hit)
    label = body.pattern if body.pattern is not None else body.id
    verb = "Would invalidate" if body.dry_run else "Invalidated"
    lines = [DRY_RUN] if body.dry_run else []
    lines.append(f'{verb} {plural(len(hit), "memory")} referencing "{label}".')
    lines += [f"  [{mem.id}] {mem.content[:120]}" for mem in hit]
    lines += [f"  skipped (pinned): [{memory_id}]" for memory_id in skipped]
    reply = InvalidateReply(
        pattern=body.pattern,
        dry_run=body.dry_run,
        invalidated=[mem.id for mem in hit],
        skipped_pinned=skipped,
    )
    return reply, "\n".join(lines)
