"""Handlers for remember, inspect and forget; a new memory is made by lifecycle/new_memory.py."""

from __future__ import annotations

import hashlib
from dataclasses import asdict

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.replies import ForgetReply, InspectReply, RememberReply, StrengthMath
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle import global_copies
from hippod.lifecycle.lookup import find_memory
from hippod.lifecycle.new_memory import fresh_memory, given_tags, usage_check, validate_content
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.model.share import reaches_every_project
from hippod.store.records import Remembered
from hippod.store.stores import Store


def _tags(body: m.Remember, cwd_tags: list[str]) -> list[str]:
    tags = given_tags(body.tags)
    if body.error:
        tags.append("error")
    if body.scope:
        tags.append(f"scope:{body.scope}")
    tags.extend(cwd_tags)
    return list(dict.fromkeys(tags))


KINDS = ("distilled", "raw")
MAX_REQUEST_KEY = 256


async def remember(ctx: RequestContext, body: m.Remember) -> tuple[RememberReply, str]:
    content = validate_content(body.content)
    if body.kind not in KINDS:
        raise HippoError("usage", f"unknown kind {body.kind!r}; use distilled or raw")
    confidence = body.confidence or "verified"
    if confidence not in validate.CONFIDENCE_TIERS:
        tiers = ", ".join(validate.CONFIDENCE_TIERS)
        raise HippoError("usage", f"unknown confidence {confidence!r}; use one of {tiers}")
    usage_check(validate.owner_problem(body.owner))
    usage_check(validate.artifact_ref_problem(body.artifact_ref))
    if body.request_key is not None and not 1 <= len(body.request_key) <= MAX_REQUEST_KEY:
        raise HippoError("usage", f"a request key must be 1 to {MAX_REQUEST_KEY} characters")
    tags = _tags(body, ctx.cwd_path_tags)
    store = await ctx.target_store(write=True)
    memory = fresh_memory(
        ctx,
        store,
        content,
        tags,
        confidence=confidence,
        pinned=body.pin,
        scope=body.scope,
        owner=body.owner,
        artifact_ref=body.artifact_ref,
        kind=body.kind,
    )
    if body.request_key is not None:
        # A retried request finds the memory its first attempt stored, under the same id.
        memory.id = keyed_id(ctx.tenant, body.request_key)
        earlier = await store.rows.get(store.db.reader, ctx.tenant, memory.id)
        if earlier is not None:
            return _remembered(earlier, store)
    # Committed, with its audit row, in one transaction shared with concurrent remembers.
    stored = await store.remembers.submit(Remembered(memory, ctx.actor))
    if not stored:
        if body.request_key is not None and (
            earlier := await store.rows.get(store.db.reader, ctx.tenant, memory.id)
        ):
            return _remembered(earlier, store)  # the same key, sent twice at once
        raise HippoError(
            "rejected_value",
            "this text was rejected earlier and cannot be stored again",
            hint="hippoctl rejections lists tombstones; hippoctl unreject <digest> lifts one",
        )
    store.written([memory])
    return _remembered(memory, store)


def keyed_id(tenant: str, request_key: str) -> str:
    """The id a remember with this request key gets: the same for every retry, per tenant."""
    digest = hashlib.sha256(f"{tenant}\0{request_key}".encode()).hexdigest()
    return f"mem_{digest[:12]}"


def _remembered(memory: Memory, store: Store) -> tuple[RememberReply, str]:
    half_life = memory.half_life_days
    confidence = memory.confidence
    tags = memory.tags
    reply = RememberReply(
        id=memory.id,
        store=store.root,
        layer=memory.layer,
        strength=1.0,
        half_life_days=half_life,
        confidence=confidence,
        tags=tags,
        created=memory.created,
    )
    text = (
        f"Remembered [{memory.id}]\n"
        f"Layer: {memory.layer} | Strength: 1.00 | Half-life: {half_life:g}d | Confidence: {confidence}"
    )
    return reply, text


def strength_math(memory: Memory, ctx: RequestContext) -> StrengthMath:
    now = clock.now()
    parts = memory.strength_at(now, ctx.state.loss_aversion)
    return StrengthMath(
        strength=parts.strength,
        days_since_retrieved=parts.days,
        reward_factor=parts.reward_factor,
        effective_half_life=parts.effective_half_life,
        decay=parts.decay,
        boost=parts.boost,
        emotion=parts.emotion,
        penalty=parts.penalty,
        aged=st.is_aged(pinned=memory.pinned, confidence=memory.confidence, days_since_retrieved=parts.days),
    )


async def inspect(ctx: RequestContext, body: m.Inspect) -> tuple[InspectReply, str]:
    store, memory = await find_memory(ctx, body.id)
    math = strength_math(memory, ctx)
    supersedes = await store.rows.superseded_by_chain(store.db.reader, memory.id)
    fields = asdict(memory)
    reply = InspectReply(
        store=store.root,
        memory=fields,
        math=math,
        supersedes=supersedes,
        conflicts=list(memory.conflicts_with),
    )
    lines = [
        f"{key}: {_show_field(key, value, memory, store)}"
        for key, value in fields.items()
        if key != "content"
    ]
    lines += [
        "",
        "live strength math:",
        f"  strength {math.strength:.4f} = clamp(decay {math.decay:.4f} x boost {math.boost:.4f} "
        f"x emotion {math.emotion:g} ({memory.emotional_valence} valence)) x {_penalty(memory, math)}"
        + (" (pinned: 1.0)" if memory.pinned else ""),
        f"  {math.days_since_retrieved:.2f} days since last retrieval; "
        f"reward factor {math.reward_factor:.4f}; "
        f"effective half-life {math.effective_half_life:.1f} d" + ("; [aged]" if math.aged else ""),
        f"  supersedes: {', '.join(supersedes) or '-'}; superseded by: {memory.superseded_by or '-'}",
        f"  conflicts: {', '.join(memory.conflicts_with) or '-'}",
        f"  store: {store.root}",
        "",
        memory.content,
    ]
    return reply, "\n".join(lines)


def _origin(memory: Memory, store: Store) -> str:
    """The origin_project line's value, with what it means for the reads of other projects."""
    origin = memory.origin_project
    if not origin:
        if store.kind == "global":
            return "none (a global memory: every project's reads show it)"
        return "none (this project's own)"
    if store.kind == "project" and origin == store.project:
        return f"{origin} (this project's own)"
    if reaches_every_project(memory.source):
        return f"{origin} (copied from that project: every project's reads show it)"
    return f"{origin} (only that project's reads show it)"


def _penalty(memory: Memory, math: StrengthMath) -> str:
    """The penalty term, with the bad marks it stands for when there are any beyond the good ones."""
    beyond = memory.outcome_negative - memory.outcome_positive
    if beyond <= 0:
        return f"penalty {math.penalty:g}"
    return f"penalty {math.penalty:g} ({plural(beyond, 'bad mark')} more than good)"


# A field whose stored value is a code, and what each value of it means.
_MEANINGS: dict[str, dict[object, str]] = {
    "outcome_score": {
        1: "+1 (the last mark was good)",
        -1: "-1 (the last mark was bad)",
        None: "null (never marked)",
    },
}


def _show_field(key: str, value: object, memory: Memory, store: Store) -> str:
    """A field's value as inspect prints it: its meaning beside a code, else as stored."""
    if key == "origin_project":
        return _origin(memory, store)
    meaning = _MEANINGS.get(key)
    if meaning is not None and isinstance(value, int | None) and value in meaning:
        return meaning[value]
    return _show(value)


def _show(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


async def forget(ctx: RequestContext, body: m.Forget) -> tuple[ForgetReply, str]:
    store, memory = await find_memory(ctx, body.id)
    now = clock.iso(clock.now())
    if memory.kind == "raw" and not body.archive:
        raise HippoError(
            "raw_append_only",
            f"{memory.id} is a raw receipt and cannot be deleted",
            hint=f'hippoctl forget {memory.id} --archive --reason "<why>"',
        )
    if body.archive and memory.kind != "raw":
        raise HippoError("bad_state", f"--archive applies to raw rows only; {memory.id} is {memory.kind}")
    facts: list[str] = []  # the facts extraction took from it, which go with it
    async with store.db.transaction() as conn:
        if body.archive:
            await store.rows.archive_raw(conn, memory, body.reason or "", now)
            await store.rows.audit(
                conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="archive_raw", target=memory.id
            )
        else:
            if not await store.rows.delete(conn, ctx.tenant, memory.id):
                # Another request forgot it between our lookup and this transaction.
                raise HippoError("not_found", f"no memory with id {memory.id}")
            # A memory made from an agent's note: the unchanged note is not imported again.
            await store.note_links.suppress(conn, memory.id)
            facts = await store.rows.delete_facts_of(conn, ctx.tenant, [memory.id])
            for target in (memory.id, *facts):
                await store.rows.audit(
                    conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="forget", target=target
                )
    if body.archive:
        memory.kind, memory.updated_at = "archived", now
        store.mirrors.changed([memory])
        return ForgetReply(id=memory.id, archived=True), f"Archived [{memory.id}]"
    await store.mirrors.write_now([memory.id, *facts])  # off the disk before the reply
    reply = ForgetReply(id=memory.id, archived=False)
    # Auto-share's copy goes with the memory (nobody asked for it); a copy shared or promoted by hand
    # was the user's choice that it holds everywhere, and stays unless --global-too.
    settled = await global_copies.settle(
        ctx,
        store,
        memory.content,
        memory.id,
        "forget",
        lambda c: body.global_too or global_copies.auto_made(c),
    )
    reply.global_removed, reply.global_kept = settled.removed, settled.kept
    reply.global_problem = settled.problem
    text = f"Forgot [{memory.id}]"
    if settled.problem is not None:
        text += f"; {settled.problem}"
    if reply.global_removed:
        text += f"; its global copy [{', '.join(reply.global_removed)}] was removed too"
    for kept in reply.global_kept:
        text += (
            f"\nIts global copy [{kept}], shared by hand, stays in every project's reads; "
            f"`hippoctl forget {kept}` removes it"
        )
    return reply, text
