"""Good and bad marks on memories (memory-model.md §9.4): the counts, the strength they change, the
audit row."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol.replies import OutcomeReply
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model.memory import Memory
from hippod.store.stores import Store


def nothing_to_mark(recalled: bool, where: str, recall_first: str, ids: str) -> HippoError:
    """`outcome` without ids in a session whose last batch is empty: never recalled, or it found nothing."""
    if recalled:
        message = f"the last recall in {where} returned nothing, so there is nothing to mark"
        return HippoError("no_recent_recall", message, hint=f"pass {ids}", details={"recalled": True})
    return HippoError(
        "no_recent_recall", f"no recent recall to mark in {where}", hint=f"{recall_first}, or pass {ids}"
    )


async def mark_outcome(
    ctx: RequestContext, targets: list[tuple[Store, list[str]]], good: bool
) -> tuple[OutcomeReply, str]:
    """One good or bad mark on each of these memories (ids grouped by the store holding them)."""
    applied: list[str] = []
    pinned: list[str] = []
    for store, ids in targets:
        async with store.db.transaction() as conn:
            marked = await mark_rows(ctx, store, conn, ids, good)
        store.mirrors.changed(marked)
        applied += [memory.id for memory in marked]
        pinned += [memory.id for memory in marked if memory.pinned]
    word = "positive" if good else "negative"
    text = f"Applied {word} outcome to {plural(len(applied), 'memory')}"
    if pinned:
        text += " (pinned: strength stays 1.0 while pinned)"
    return OutcomeReply(positive=good, applied=len(applied), ids=applied, pinned=pinned), text


async def mark_rows(ctx: RequestContext, store: Store, conn: Any, ids: list[str], good: bool) -> list[Memory]:
    """Inside the caller's transaction: one good or bad mark on each of these memories of the
    request's tenant (others and missing ids are passed over), audited; the memories marked."""
    moment = clock.now()
    now = clock.iso(moment)
    marked: list[Memory] = []
    for memory in await store.rows.get_many(conn, ids):
        if memory.tenant_id != ctx.tenant:
            continue
        if good:
            memory.outcome_positive += 1
        else:
            memory.outcome_negative += 1
        memory.outcome_score = 1 if good else -1
        memory.strength = memory.strength_at(moment, ctx.state.loss_aversion).strength
        memory.updated_at = now
        marked.append(memory)
    await store.rows.update_outcome(conn, marked)
    await store.rows.audit_many(
        conn,
        ts=now,
        tenant=ctx.tenant,
        actor=ctx.actor,
        op="outcome",
        targets=[memory.id for memory in marked],
        metadata={"positive": good},
    )
    return marked
