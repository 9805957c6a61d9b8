"""`dormant [query]`, `dormant restore` and `dormant forget` (memory-model.md §13)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import DormantItem, DormantMoveReply, DormantReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.mirrors.mirrors import dormant_file
from hippod.model import strength as st
from hippod.model.tokenize import tokenize
from hippod.store.records import DormantMemory


def _matches(words: list[str], d: DormantMemory) -> bool:
    """Every query word appears in the lowercased content or tags."""
    haystack = (d.memory.content + " " + " ".join(d.memory.tags)).lower()
    return all(word in haystack for word in words)


async def dormant(ctx: RequestContext, body: m.Dormant) -> tuple[DormantReply, str]:
    if body.limit < 1:
        raise HippoError("usage", "--limit must be 1 or more")
    store = await ctx.target_store(write=False)
    rows = await store.dormant.newest(store.db.reader, ctx.tenant)
    if body.query is not None and body.query.strip():
        words = tokenize(body.query)
        if not words:
            raise HippoError("usage", "the query has no words to search for")
        rows = [d for d in rows if _matches(words, d)]
    shown = rows[: body.limit]
    items = [
        DormantItem(d.memory.id, d.memory.content, d.memory.tags, d.memory.layer, d.dormant_at, d.reason)
        for d in shown
    ]
    lines = [f"[{i.id}] dormant since {i.dormant_at[:10]} ({i.reason})\n  {i.content[:120]}" for i in items]
    if len(rows) > len(shown):
        lines.append(f"... {len(rows) - len(shown)} more (--limit)")
    return DormantReply(total=len(rows), results=items), "\n".join(lines) or "No dormant memories."


async def restore(ctx: RequestContext, body: m.DormantRestore) -> tuple[DormantMoveReply, str]:
    store = await ctx.target_store(write=True)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        found = await store.dormant.get(conn, ctx.tenant, body.id)
        if found is None:
            raise HippoError("not_found", f"no dormant memory with id {body.id}")
        memory = found.memory
        # A fresh recall clock always; a retrieval's strengthening unless bad marks lead.
        memory.last_retrieved = now
        if memory.outcome_negative <= memory.outcome_positive:
            memory.retrieval_count += 1
            memory.half_life_days += st.RETRIEVAL_HALF_LIFE_BONUS
        memory.strength = 1.0
        memory.updated_at = now
        await store.dormant.move_out(conn, memory.id)
        # Restored by hand: the memory no longer follows an agent's note.
        await store.note_links.detach(conn, memory.id)
        await store.rows.update(conn, memory)
        await store.rows.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="dormant_restore",
            target=memory.id,
            metadata={"reason": found.reason},
        )
    store.written([memory])
    store.mirrors.files({dormant_file(memory.id): None})
    return DormantMoveReply(id=memory.id, restored=True), f"Restored [{memory.id}] from dormant"


async def forget(ctx: RequestContext, body: m.DormantForget) -> tuple[DormantMoveReply, str]:
    store = await ctx.target_store(write=True)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        if not await store.dormant.delete(conn, ctx.tenant, body.id):
            raise HippoError("not_found", f"no dormant memory with id {body.id}")
        await store.rows.audit(
            conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="dormant_forget", target=body.id
        )
    await store.mirrors.write_now(files={dormant_file(body.id): None})  # off the disk before the reply
    return DormantMoveReply(id=body.id, forgotten=True), f"Forgot dormant [{body.id}] for good"
