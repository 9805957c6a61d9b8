"""`conflicts` and `resolve` (sleep.md §7, memory-model.md §12)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import ConflictItem, ConflictSide, ConflictsReply, ResolveReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.mirrors import conflict_mirror
from hippod.mirrors.mirrors import dormant_file
from hippod.model.digest import content_digest, normalize
from hippod.model.memory import Memory
from hippod.store.records import ConflictRecord, Rejection
from hippod.store.stores import SqliteStore, Store


def _item(conflict: ConflictRecord, texts: dict[str, str]) -> ConflictItem:
    def side(memory_id: str) -> ConflictSide:
        text = texts.get(memory_id)
        return ConflictSide(memory_id, None if text is None else conflict_mirror.preview(text))

    return ConflictItem(
        id=conflict.id,
        status=conflict.status,
        reason=conflict.reason,
        score=conflict.score,
        resolved_by=conflict.resolved_by,
        detected_at=conflict.detected_at,
        updated_at=conflict.updated_at,
        a=side(conflict.memory_a_id),
        b=side(conflict.memory_b_id),
    )


def _lines(item: ConflictItem) -> list[str]:
    """`#<id> [<status>] score=<2dp> <reason>`, then each side's id and first 120 chars."""
    lines = [f"#{item.id} [{item.status}] score={item.score:.2f} {item.reason}"]
    for s in (item.a, item.b):
        lines.append(f"  {s.id}  {s.content if s.content is not None else '(no longer stored)'}")
    return lines


async def conflicts(ctx: RequestContext, body: m.Conflicts) -> tuple[ConflictsReply, str]:
    if body.status not in ("open", "resolved", "all"):
        raise HippoError("usage", f"unknown status {body.status!r}; use open, resolved or all")
    store = await ctx.target_store(write=False)
    sql = store.conflicts
    rows = await sql.listing(store.db.reader, ctx.tenant, body.status)
    texts = await sql.contents(
        store.db.reader, sorted({i for c in rows for i in (c.memory_a_id, c.memory_b_id)})
    )
    items = [_item(c, texts) for c in rows]
    if not items:
        label = "" if body.status == "all" else f"{body.status} "
        return ConflictsReply(body.status, []), f"No {label}conflicts."
    lines: list[str] = []
    for item in items:
        lines += _lines(item)
    return ConflictsReply(body.status, items), "\n".join(lines)


async def resolve(ctx: RequestContext, body: m.Resolve) -> tuple[ResolveReply, str]:
    if (body.forget or body.reject_loser) and body.keep is None:
        raise HippoError("usage", "--forget and --reject-loser need --keep <mem-id>")
    store = await ctx.target_store(write=body.keep is not None)
    sql = store.conflicts
    conflict = await sql.get(store.db.reader, ctx.tenant, body.n)
    if conflict is None:
        raise HippoError("not_found", f"no conflict #{body.n}")
    sides = (conflict.memory_a_id, conflict.memory_b_id)
    texts = await sql.contents(store.db.reader, list(sides))
    if body.keep is None:
        item = _item(conflict, texts)
        hint = f"keep one side: hippoctl resolve {conflict.id} --keep <mem-id> [--forget | --reject-loser]"
        return ResolveReply(item), "\n".join([*_lines(item), hint])
    if body.keep not in sides:
        raise HippoError(
            "usage", f"--keep must be one side of conflict #{conflict.id}: {sides[0]} or {sides[1]}"
        )
    if conflict.status != "open":
        raise HippoError("already_resolved", f"conflict #{conflict.id} is already resolved")
    loser_id = sides[1] if body.keep == sides[0] else sides[0]
    action = "rejected" if body.reject_loser else "forgotten" if body.forget else "weakened"
    now = clock.iso(clock.now())
    changed: list[str] = []
    deleted: list[str] = []
    dormant: list[str] = []
    async with store.db.transaction() as conn:
        # Checked again under the write lock: two resolves of one conflict must not both act.
        current = await sql.get(conn, ctx.tenant, conflict.id)
        if current is None or current.status != "open":
            raise HippoError("already_resolved", f"conflict #{conflict.id} is already resolved")
        winner = await store.rows.get(conn, ctx.tenant, body.keep)
        loser = await store.rows.get(conn, ctx.tenant, loser_id)
        await sql.mark_user_resolved(conn, conflict.id, now)
        if winner is not None and loser_id in winner.conflicts_with:
            winner.conflicts_with = [i for i in winner.conflicts_with if i != loser_id]
            await sql.set_conflicts_with(conn, winner, now)
            changed.append(winner.id)
        if loser is not None:
            deleted, more, dormant = await _settle_loser(ctx, store, conn, loser, body, action)
            changed += more
        await store.rows.audit(
            conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="conflict_resolve", target=str(conflict.id),
            metadata={"kept": body.keep, "loser": loser_id, "action": action},
        )  # fmt: skip
    if isinstance(store, SqliteStore):  # a team store has no mirror files
        files = await conflict_mirror.files(store.db.reader)
        files.update({dormant_file(i): None for i in dormant})
        # A forgotten or rejected loser's text (and the conflict's file, which quotes it) leaves the
        # disk before the reply.
        await store.mirrors.write_now(deleted, [i for i in changed if i not in deleted], files)
    resolved = await sql.get(store.db.reader, ctx.tenant, conflict.id)
    item = _item(resolved or conflict, texts)
    verbs = {
        "weakened": "half-life halved",
        "forgotten": "forgotten",
        "rejected": "value rejected and removed",
    }
    text = f"Resolved conflict #{conflict.id}: kept {body.keep}; {loser_id} {verbs[action]}"
    return ResolveReply(item, kept=body.keep, loser=loser_id, action=action), text


async def _settle_loser(
    ctx: RequestContext, store: Store, conn: Any, loser: Memory, body: m.Resolve, action: str
) -> tuple[list[str], list[str], list[str]]:
    """Weaken, forget or reject the losing memory; returns (deleted, changed, dormant-deleted) ids."""
    now = clock.iso(clock.now())
    if action == "weakened":
        loser.half_life_days = max(1.0, loser.half_life_days / 2)
        loser.conflicts_with = [i for i in loser.conflicts_with if i != body.keep]
        loser.strength = loser.strength_at(clock.now(), ctx.state.loss_aversion).strength
        await store.conflicts.halve_half_life(conn, loser, now)
        return [], [loser.id], []
    if action == "forgotten":
        if loser.kind == "raw":
            raise HippoError("raw_append_only", f"{loser.id} is a raw receipt and cannot be deleted")
        await store.rows.delete(conn, ctx.tenant, loser.id)
        await store.rows.audit(conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="forget", target=loser.id)
        return [loser.id], [], []
    digest = content_digest(loser.content)
    tombstone = Rejection(
        digest,
        body.reason or f"lost conflict #{body.n}",
        ctx.actor,
        now,
        loser.id,
        len(normalize(loser.content)),
    )
    deleted, archived, dormant = await store.rejections.reject_copies(
        conn, ctx.tenant, tombstone, loser.content
    )
    await store.rows.audit(
        conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="reject_value", target=loser.id,
        metadata={"digest": digest, "deleted": len(deleted) + len(dormant), "archived": len(archived)},
    )  # fmt: skip
    return deleted, archived, dormant
