"""Failures as memories: `capture-error` (ingest.md §7) and the `failures` log
(continuity.md §8)."""

from __future__ import annotations

import os
from collections import Counter
from datetime import timedelta

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_failures import CaptureErrorReply, CrossSession, FailuresReply
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.ingest import failure_rules as rules
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.memory import Memory
from hippod.store.sqlite import failures as failures_sql
from hippod.store.sqlite import memories, rejections, spool_marks
from hippod.store.stores import sqlite_only

MAX_WINDOW_DAYS = 36_500
HASH_FOOTER = (
    "Only the tool, the session and two hashes of each error are kept, never its text. A hash is not "
    "anonymous: anyone who can guess an error's text can test it against its hash."
)


async def capture_error(ctx: RequestContext, body: m.CaptureError) -> tuple[CaptureErrorReply, str]:
    """Store one failed tool call as an error memory unless it is noise or known; log it either way."""
    try:
        failure = rules.parse_payload(body.payload)
    except rules.MalformedPayload as exc:
        # The hook still exits 0 (the client drops the error unless --strict); nothing is written.
        raise HippoError("usage", f"capture-error: {exc}") from None
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    tenant = ctx.tenant
    moment = clock.now()
    now = clock.iso(moment)
    cutoff = clock.iso(moment - timedelta(days=failures_sql.KEEP_DAYS))
    session = failure.session_id or ctx.request.session
    shape = rules.shape_hash(failure.error)
    outcome = rules.classify(failure)
    memory: Memory | None = None
    if outcome is None:
        folder = failure.cwd or ctx.request.cwd
        text = rules.memory_text(failure, cwd=folder, home=os.path.expanduser("~"))
        memory = fresh_memory(
            ctx, store, text, rules.tags(failure), source="capture-error", confidence="observed"
        )
        memory.source_session_id = session
    memory_id: str | None = None
    actor = "hook:capture-error"
    async with store.db.transaction() as conn:
        await spool_marks.claim(conn, body.spool_key, now)
        if memory is not None:
            if await rejections.refuses(conn, tenant, memory.content):
                outcome = "rejected"
            elif (earlier := await failures_sql.stored_shape(conn, tenant, shape)) is not None:
                outcome, memory_id = "duplicate", earlier
            elif await memories.insert(conn, memory):
                outcome, memory_id = "stored", memory.id
                await failures_sql.set_shape(conn, tenant, shape, memory.id)
                await memories.audit(
                    conn, ts=now, tenant=tenant, actor=actor, op="capture", target=memory.id,
                    metadata={"source": "capture-error"},
                )  # fmt: skip
            else:
                outcome = "rejected"
            if outcome == "rejected":
                await memories.audit(conn, ts=now, tenant=tenant, actor=actor, op="reject_refusal")
        assert outcome is not None
        row = failures_sql.FailureRow(
            ts=now, tenant_id=tenant, session_id=session, project=store.project, tool=failure.tool,
            outcome=outcome, exact_hash=rules.exact_hash(failure.error), shape_hash=shape,
        )  # fmt: skip
        await failures_sql.log(conn, row)
        await failures_sql.prune(conn, tenant, cutoff)
        await spool_marks.prune(conn, cutoff)
    if outcome == "stored" and memory is not None:
        store.written([memory])
    return CaptureErrorReply(outcome=outcome, memory_id=memory_id, store=store.root), ""


async def failures(ctx: RequestContext, body: m.Failures) -> tuple[FailuresReply, str]:
    """Failed tool calls of the last `days` days by outcome and tool, and repeats across sessions."""
    if body.days < 1:
        raise HippoError("usage", "--days must be 1 or more")
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    # Any window this long already covers every row; the cap keeps the date arithmetic in range.
    since = clock.iso(clock.now() - timedelta(days=min(body.days, MAX_WINDOW_DAYS)))
    rows = await failures_sql.window(store.db.reader, ctx.tenant, since)
    by_outcome = dict.fromkeys(rules.OUTCOMES, 0)
    for row in rows:
        by_outcome[row.outcome] = by_outcome.get(row.outcome, 0) + 1
    tools = Counter(row.tool for row in rows)
    by_tool = dict(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))[:10])
    shapes = sorted({r.shape_hash for r in rows})
    first = await failures_sql.first_sessions(store.db.reader, ctx.tenant, shapes)
    repeats = [r for r in rows if first.get(r.shape_hash, r.session_id) != r.session_id]
    cross = CrossSession(failures=len(repeats), distinct=len({r.shape_hash for r in repeats}))
    reply = FailuresReply(days=body.days, by_outcome=by_outcome, by_tool=by_tool, cross_session=cross)
    return reply, render(reply, len(rows), store.root)


def render(reply: FailuresReply, total: int, root: str) -> str:
    """The text of `failures`."""
    lines = [f"Failed tool calls in the last {plural(reply.days, 'day')}: {total} ({root})"]
    if total:
        lines.append("By outcome:")
        width = max(len(k) for k in reply.by_outcome)
        lines += [f"  {k:<{width}}  {v}" for k, v in reply.by_outcome.items()]
        lines.append("By tool:")
        width = max(len(k) for k in reply.by_tool)
        lines += [f"  {k:<{width}}  {v}" for k, v in reply.by_tool.items()]
    cross = reply.cross_session
    lines.append(
        f"{plural(cross.failures, 'failure')} had first happened in another session "
        f"({plural(cross.distinct, 'distinct error')})"
    )
    lines.append(HASH_FOOTER)
    return "\n".join(lines)
