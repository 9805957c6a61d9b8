"""`decide` and `decide list|get|close`: decisions, each mirrored by a memory (memory-model.md §12)."""

from __future__ import annotations

import aiosqlite

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import DecideReply, DecisionItem, DecisionsReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import invalidate as inv
from hippod.lifecycle.new_memory import fresh_memory, validate_content
from hippod.model.memory import Memory
from hippod.store.sqlite import decisions, memories, rejections
from hippod.store.sqlite.decisions import Decision
from hippod.store.stores import sqlite_only

STATUSES = ("active", "superseded", "closed")


def _item(d: Decision) -> DecisionItem:
    return DecisionItem(
        d.n,
        d.text,
        d.context,
        d.status,
        d.memory_id,
        d.superseded_by,
        d.created_at,
        d.closed_at,
        superseded_at=d.superseded_at,
        tenant=d.tenant,
    )


async def decide(ctx: RequestContext, body: m.Decide) -> tuple[DecideReply, str]:
    text = validate_content(body.text)
    context = body.context.strip() if body.context and body.context.strip() else None
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    tags = list(dict.fromkeys(["decision", *ctx.cwd_path_tags]))
    content = f"{text}\n\nContext: {context}" if context else text
    memory = fresh_memory(
        ctx,
        store,
        content,
        tags,
        layer="semantic",
        source="decision",
        half_life_days=float(store.config.get("defaultHalfLifeDays", 365)),
    )
    changed: list[Memory] = []
    closed: list[int] = []
    async with store.db.transaction() as conn:
        old = None
        replaced = await _active_decision(conn, ctx.tenant, body.supersedes_decision)
        # A decision supersedes the one it replaces, and its memory the old decision's memory.
        old_id = body.supersedes or (replaced.memory_id if replaced is not None else None)
        if old_id is not None:
            old = await memories.get(conn, ctx.tenant, old_id)
            if old is None and body.supersedes is not None:
                raise HippoError("not_found", f"no memory with id {body.supersedes}")
            if old is not None and old.superseded_by is not None and replaced is not None:
                old = None  # the memory was replaced already; the decision still is, below
            elif old is not None and old.superseded_by is not None:
                raise HippoError(
                    "already_superseded", f"{old.id} was already superseded by {old.superseded_by}"
                )
        # The decision's own text counts as its value too: a context added to a rejected text
        # does not make it a new one.
        if await rejections.refuses(conn, ctx.tenant, text) or not await memories.insert(conn, memory):
            raise HippoError(
                "rejected_value", "this decision's text was rejected earlier and cannot be stored"
            )
        n = await decisions.insert(conn, ctx.tenant, text, context, memory.id, now)
        if replaced is not None:
            await decisions.supersede(conn, replaced.n, n, now)
            closed.append(replaced.n)
        if old is not None:
            closed += await decisions.supersede_active_for(conn, ctx.tenant, old.id, n, now)
            old.superseded_by = memory.id
            old.confidence = "stale"
            old.tags = list(dict.fromkeys([*old.tags, "superseded"]))
            old.half_life_days = inv.halved(old.half_life_days)
            old.updated_at = now
            await memories.update(conn, old)
            changed.append(old)
        await memories.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="decide",
            target=memory.id,
            metadata={"n": n, "supersedes": old_id, "decisions_superseded": closed},
        )
        decision = await decisions.get(conn, ctx.tenant, n)
    assert decision is not None
    store.written([memory, *changed])
    lines = [f"Decision recorded: #{n}", f"memory: {memory.id}"]
    if old is not None:
        which = ", ".join(f"#{c}" for c in closed) or "none"
        lines.append(f"supersedes memory: {old.id} (decision {which} superseded)")
    elif replaced is not None:
        lines.append(f"supersedes decision #{replaced.n}")
    reply = DecideReply(
        decision=_item(decision),
        superseded_memory=old.id if old is not None else None,
        superseded_decision=closed[0] if closed else None,
    )
    return reply, "\n".join(lines)


async def _active_decision(conn: aiosqlite.Connection, tenant: str, n: int | None) -> Decision | None:
    """The active decision `n` that a new one replaces (None when none is named)."""
    if n is None:
        return None
    found = await decisions.get(conn, tenant, n)
    if found is None:
        raise HippoError("not_found", f"no decision #{n}")
    if found.status != "active":
        raise HippoError(
            "bad_state", f"decision #{n} is {found.status}; only an active decision can be superseded"
        )
    return found


def _line(d: Decision) -> str:
    first = d.text.splitlines()[0] if d.text else ""
    return f"#{d.n} [{d.status}] {first[:120]}"


async def decide_list(ctx: RequestContext, body: m.DecideList) -> tuple[DecisionsReply, str]:
    if body.status is not None and body.status not in STATUSES:
        raise HippoError("usage", f"unknown status {body.status!r}; use one of {', '.join(STATUSES)}")
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    found = await decisions.listed(store.db.reader, ctx.tenant, body.status)
    return DecisionsReply(decisions=[_item(d) for d in found]), "\n".join(
        map(_line, found)
    ) or "No decisions."


async def decide_get(ctx: RequestContext, body: m.DecideGet) -> tuple[DecisionsReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    d = await decisions.get(store.db.reader, ctx.tenant, body.n)
    if d is None:
        raise HippoError("not_found", f"no decision #{body.n}")
    lines = [
        _line(d),
        f"created: {d.created_at}" + (f"; closed: {d.closed_at}" if d.closed_at else ""),
        f"memory: {d.memory_id or '-'}"
        + (f"; superseded by decision #{d.superseded_by}" if d.superseded_by else ""),
        "",
        d.text,
    ]
    if d.context:
        lines += ["", f"Context: {d.context}"]
    return DecisionsReply(decisions=[_item(d)]), "\n".join(lines)


async def decide_close(ctx: RequestContext, body: m.DecideClose) -> tuple[DecisionsReply, str]:
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        d = await decisions.get(conn, ctx.tenant, body.n)
        if d is None:
            raise HippoError("not_found", f"no decision #{body.n}")
        if d.status == "closed":
            raise HippoError("bad_state", f"decision #{body.n} is already closed")
        await decisions.close(conn, ctx.tenant, body.n, now)
        await memories.audit(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="decision_close",
            target=d.memory_id,
            metadata={"n": body.n},
        )
        d = await decisions.get(conn, ctx.tenant, body.n)
    assert d is not None
    return DecisionsReply(decisions=[_item(d)]), f"Decision #{body.n} closed (its memory stays)"
