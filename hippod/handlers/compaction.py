"""The compaction hooks (ingest.md §8) and `compact-resume` (continuity.md §4).

`pre-compact` records the compaction and saves a task snapshot from the transcript's tail;
`post-compact` keeps the summary and saves the items of its `Memories for hippo` section;
`compact-resume` prints a fresh snapshot back into the compacted session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from datetime import datetime, timedelta

import aiosqlite
import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_hooks import (
    CompactionItem,
    CompactResumeReply,
    PostCompactReply,
    PreCompactReply,
)
from hippoctl.protocol.wording import plural
from hippod.agentnotes.importer import sync_tool
from hippod.agentnotes.tools import selected_tools, tool_home
from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.continuity import mirrors, render
from hippod.ingest import compaction_items as parse
from hippod.ingest.extract import store_key
from hippod.ingest.hook_input import existing_target, read_payload, session_of, transcript_file
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model import passages
from hippod.model.memory import Memory
from hippod.model.next_step import split_next_step
from hippod.model.secrets import looks_secret, scrub
from hippod.store.sqlite import continuity, ledger, memories, pinned_state, rejections, spool_marks
from hippod.store.stores import SqliteStore, sqlite_only

log = logging.getLogger("hippod.compaction")

MAX_SAVED = 10
MAX_ITEM_CHARS = 500
FRESH = timedelta(minutes=15)
TASK_CHARS, SUMMARY_CHARS, NEXT_CHARS = 200, 2000, 500
EVENT_CHARS = 400
RESUME_EVENTS = 5
INSTRUCTION = (
    "hippo: end your compaction summary with a section headed `Memories for hippo`: one `- ` line per "
    "lesson, decision or correction from this session worth keeping beyond it, at most 10 lines, "
    "and no secrets (no keys, tokens or passwords)."
)


def _new_compaction_id() -> str:
    return "cmp_" + secrets.token_hex(6)


# --- pre-compact -----------------------------------------------------------------------------------


def _snapshot_fields(path: str) -> tuple[str, str, str] | None:
    """(task, summary, next step) from the transcript's tail, scrubbed; None without a usable message.

    The next step is the last assistant text, or only what it labels `Next step:`; that part is then
    left out of the summary, which would otherwise say it twice.
    """
    conversation = parse.tail_conversation(path)
    if not conversation.user and not conversation.assistant:
        return None
    task = conversation.user[-1][:TASK_CHARS] if conversation.user else ""
    said = conversation.assistant[-3:]
    next_step = ""
    if said:
        before, step = split_next_step(said[-1])
        next_step = (said[-1] if step is None else step)[:NEXT_CHARS]
        said = [*said[:-1], before] if step is not None else said
    summary = "\n\n".join(part for part in said if part)[:SUMMARY_CHARS]
    return scrub(task), scrub(summary), scrub(next_step.strip())


async def pre_compact(ctx: RequestContext, body: m.PreCompact) -> tuple[PreCompactReply, str]:
    """Record the compaction, snapshot the task from the transcript, and ask for `Memories for hippo`."""
    given = read_payload("pre-compact", body.payload)
    store = await existing_target(ctx)
    if store is None:
        return PreCompactReply(), ""
    session = session_of(ctx, given)
    path = transcript_file(ctx, given)
    fields = None
    if path is not None:
        try:
            fields = await asyncio.to_thread(_snapshot_fields, path)
        except OSError as exc:
            ctx.warnings.append(f"pre-compact: could not read the transcript: {exc.strerror or exc}")
    compaction_id = _new_compaction_id()
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await spool_marks.claim(conn, body.spool_key, now)
        await conn.execute(
            "INSERT INTO compactions (id, session_id, started_at, trigger, status, tenant_id) "
            "VALUES (?, ?, ?, ?, 'pending', ?)",
            (compaction_id, session, now, given.trigger, ctx.tenant),
        )
        if fields is not None:
            task, summary, next_step = fields
            await continuity.save_snapshot(
                conn, ctx.tenant, task=task, summary=summary, next_step=next_step or None,
                source="pre-compact", session_id=session, scope=ctx.active_scope, now=now,
            )  # fmt: skip
    if fields is not None:
        await mirrors.active_task(store, ctx.tenant)
    reply = PreCompactReply(compaction_id=compaction_id, snapshot=fields is not None, store=store.root)
    return reply, INSTRUCTION


# --- post-compact ----------------------------------------------------------------------------------


def _summary_from_transcript(path: str) -> str | None:
    return parse.newest_compact_summary(parse.read_tail(path, parse.TAIL_SIZES[-1]))


async def _compaction_keys(conn: aiosqlite.Connection, tenant: str) -> set[str]:
    """Normalised texts of the memories earlier compactions saved in this store."""
    rows = await conn.execute_fetchall(
        "SELECT content FROM memories WHERE tenant_id = ? AND compaction_id IS NOT NULL", (tenant,)
    )
    return {store_key(str(r[0])) for r in rows}


async def _open_compaction(conn: aiosqlite.Connection, tenant: str, session: str | None, now: str) -> str:
    """The session's newest pending compaction row, or a new one when pre-compact never ran."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT id FROM compactions WHERE tenant_id = ? AND session_id IS ? AND status = 'pending' "
            "ORDER BY started_at DESC LIMIT 1",
            (tenant, session),
        )
    )
    if rows:
        return str(rows[0][0])
    compaction_id = _new_compaction_id()
    await conn.execute(
        "INSERT INTO compactions (id, session_id, started_at, status, tenant_id) "
        "VALUES (?, ?, ?, 'pending', ?)",
        (compaction_id, session, now, tenant),
    )
    return compaction_id


async def _judge(
    conn: aiosqlite.Connection, ctx: RequestContext, store: SqliteStore, texts: list[str], compaction_id: str,
    session: str | None,
) -> tuple[list[CompactionItem], list[Memory], list[str]]:  # fmt: skip
    """Each listed item's outcome, in order, the memories to store (inserted here), and the items
    whose text is rejected (kept nowhere: the row's item and summary lose them)."""
    known = await _compaction_keys(conn, ctx.tenant)
    items: list[CompactionItem] = []
    saved: list[Memory] = []
    refused: list[str] = []
    for raw in texts:
        text = " ".join(raw.split())
        key = store_key(text)
        if looks_secret(text):
            items.append(CompactionItem(text=scrub(text), outcome="secret"))
        elif len(saved) >= MAX_SAVED:
            items.append(CompactionItem(text=text, outcome="over_limit"))
        elif key in known:
            items.append(CompactionItem(text=text, outcome="repeat"))
        elif await rejections.refuses(conn, ctx.tenant, text):
            items.append(CompactionItem(text="", outcome="rejected"))
            refused.append(text)
        elif len(text) > MAX_ITEM_CHARS:
            items.append(CompactionItem(text=text, outcome="too_long"))
        else:
            memory = fresh_memory(
                ctx, store, text, ["compaction"], source="compaction", confidence="observed"
            )
            memory.compaction_id = compaction_id
            memory.source_session_id = session
            if await memories.insert(conn, memory):
                known.add(key)
                saved.append(memory)
                items.append(CompactionItem(text=text, outcome="saved", memory_id=memory.id))
            else:
                items.append(CompactionItem(text="", outcome="rejected"))
                refused.append(text)
    return items, saved, refused


async def _fresh_snapshot(
    conn: aiosqlite.Connection, tenant: str, session: str | None
) -> continuity.Snapshot | None:
    """The active snapshot when it was updated under 15 minutes ago (and is this session's, when known)."""
    snapshot = await continuity.active_snapshot(conn, tenant)
    if snapshot is None:
        return None
    if session is not None and snapshot.session_id not in (None, session):
        return None
    if clock.now() - clock.parse_iso(snapshot.updated_at) >= FRESH:
        return None
    return snapshot


async def _import_claude_notes(ctx: RequestContext, store: SqliteStore) -> None:
    """Read the project's Claude Code notes folder (ingest.md §4 "When"); a failure is only logged."""
    tools, _ = selected_tools(store.config, ctx.request.env)
    if "claude-code" not in tools:
        return
    try:
        global_store = sqlite_only(await ctx.global_store(), ctx.verb)
        home = tool_home("claude-code", global_store.config, os.environ)
        if store.kind == "global":
            root, origin = (
                os.path.realpath(ctx.request.cwd),
                os.path.basename(os.path.realpath(ctx.request.cwd)),
            )
        else:
            root, origin = os.path.dirname(store.root), None
        await sync_tool(
            ctx.state, store, "claude-code", home, project_root=root, tenant=ctx.tenant,
            actor="hook:post-compact", origin_project=origin,
        )  # fmt: skip
    except Exception:
        log.exception("post-compact: importing Claude Code notes into %s failed", store.root)


async def post_compact(ctx: RequestContext, body: m.PostCompact) -> tuple[PostCompactReply, str]:
    """Keep the scrubbed summary and save up to 10 of its listed memories (ingest.md §8, six steps)."""
    given = read_payload("post-compact", body.payload)
    store = await existing_target(ctx)
    if store is None:
        return PostCompactReply(), ""
    session = session_of(ctx, given)
    summary = given.summary
    path = transcript_file(ctx, given)
    if summary is None and path is not None:
        try:
            summary = await asyncio.to_thread(_summary_from_transcript, path)
        except OSError as exc:
            ctx.warnings.append(f"post-compact: could not read the transcript: {exc.strerror or exc}")
    texts = parse.memory_items(summary or "")
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await spool_marks.claim(conn, body.spool_key, now)
        compaction_id = await _open_compaction(conn, ctx.tenant, session, now)
        items, saved, refused = await _judge(conn, ctx, store, texts, compaction_id, session)
        kept = scrub(summary) if summary else None
        for text in refused:
            kept = passages.cut(kept, text) if kept is not None else None
        await conn.execute(
            "UPDATE compactions SET summary = ?, items_json = ?, saved = ?, status = 'done' WHERE id = ?",
            (
                kept,
                msgspec.json.encode(items).decode(),
                len(saved),
                compaction_id,
            ),
        )
        if session is not None:
            await pinned_state.clear(conn, ctx.tenant, session)
        await memories.audit_many(
            conn, ts=now, tenant=ctx.tenant, actor="hook:post-compact", op="compaction_save",
            targets=[mem.id for mem in saved] or [None], metadata={"compaction_id": compaction_id},
        )  # fmt: skip
        restored = await _fresh_snapshot(conn, ctx.tenant, session) is not None
    store.written(saved)
    await _import_claude_notes(ctx, store)
    reply = PostCompactReply(
        compaction_id=compaction_id,
        saved=len(saved),
        items=items,
        snapshot_restored=restored,
        store=store.root,
    )
    line = f"Hippo saved {plural(len(saved), 'memory')} from this compaction"
    return reply, line + (" and restored your task snapshot." if restored else ".")


# --- compact-resume --------------------------------------------------------------------------------


def resume_block(snapshot: continuity.Snapshot, events: list[continuity.Event]) -> str:
    """The `## Restored after compaction` block of continuity.md §4."""
    lines = [
        "## Restored after compaction",
        f"Task: {render.one_line(snapshot.task)}",
        f"Summary: {render.one_line(snapshot.summary)}",
        f"Next step: {render.one_line(snapshot.next_step or '')}",
    ]
    if events:
        lines.append("Recent events:")
        lines += [f"- [{e.event_type}] {' '.join(e.content.split())[:EVENT_CHARS]}" for e in events]
    return "\n".join(lines)


async def compact_resume(ctx: RequestContext, body: m.CompactResume) -> tuple[CompactResumeReply, str]:
    """After a compaction: print the fresh task snapshot back, clear the pinned-block state, count it."""
    if isinstance(body.payload, dict) and body.payload.get("source") != "compact":
        return CompactResumeReply(), ""
    given = read_payload("compact-resume", body.payload if isinstance(body.payload, dict) else None)
    store = await existing_target(ctx)
    if store is None:
        return CompactResumeReply(), ""
    session = session_of(ctx, given)
    moment = clock.now()
    async with store.db.transaction() as conn:
        snapshot = await _fresh_snapshot(conn, ctx.tenant, session)
        if session is not None:
            await pinned_state.clear(conn, ctx.tenant, session)
        events: list[continuity.Event] = []
        if snapshot is not None and snapshot.session_id is not None:
            events = await continuity.recent_events(
                conn, ctx.tenant, session_id=snapshot.session_id, limit=RESUME_EVENTS
            )
    if snapshot is None:
        return CompactResumeReply(), ""
    block = resume_block(snapshot, events)
    tokens = ledger.estimate(block)
    await _count(ctx, store, session, tokens, moment)
    return CompactResumeReply(restored=True, tokens=tokens), block


async def _count(
    ctx: RequestContext, store: SqliteStore, session: str | None, tokens: int, when: datetime
) -> None:
    """The ledger row of a printed block, in the global store (continuity.md §6)."""
    global_store = sqlite_only(await ctx.global_store(), ctx.verb)
    row = ledger.LedgerRow(
        surface="compact_resume",
        tokens=tokens,
        items=1,
        session_id=session,
        project=store.project,
        store=store.root,
    )
    async with global_store.db.transaction() as conn:
        await ledger.record(conn, ctx.tenant, row, when)
