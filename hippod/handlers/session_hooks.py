"""`session-end` and `last-sleep` (integrations.md, hooks 1 and 2).

`session-end` returns at once and leaves a job on the daemon: sleep of the cwd's store (whose
report is kept for `last-sleep`), agent notes of a project without a store into the global store,
capture of the session's transcript, and re-read accounting (continuity.md §7). The daemon waits
for the job at shutdown, within its grace period.
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
from dataclasses import dataclass, field

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_hooks import LastSleepReply, SessionEndReply
from hippod import clock, reread
from hippod.agentnotes.importer import import_project
from hippod.agentnotes.tools import tool_home
from hippod.handlers import sleep_report
from hippod.handlers.capture import capture_text
from hippod.handlers.hook_input import existing_target, read_payload, session_of, transcript_file
from hippod.handlers.sleep import SleepOptions, sleep_store
from hippod.ingest import transcript
from hippod.ingest.files import read_bytes
from hippod.request import RequestContext
from hippod.store import last_sleep as kept_report
from hippod.store import ledger_reread, spool_marks
from hippod.store.stores import Store

log = logging.getLogger("hippod.session_end")

LAST_SLEEP_HEADER = "=== Previous session hippo consolidation ==="
LAST_SLEEP_FOOTER = "=" * 40
_decode = msgspec.json.Decoder().decode


@dataclass
class SessionEndJob:
    """What one session end leaves the daemon to do."""

    ctx: RequestContext
    store: Store
    has_project_store: bool
    session: str | None
    claude_transcript: str | None
    codex_transcripts: list[str] = field(default_factory=list)


def codex_rollouts(home: str, offset: int) -> list[str]:
    """Rollout files of the Codex sessions that `history.jsonl` names after byte `offset`."""
    try:
        with open(os.path.join(home, "history.jsonl"), "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return []
    ids: list[str] = []
    for line in data.splitlines():
        try:
            record = _decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue
        value = record.get("session_id") if isinstance(record, dict) else None
        if isinstance(value, str) and value and value not in ids:
            ids.append(value)
    found: list[str] = []
    sessions = glob.escape(os.path.join(home, "sessions"))
    for session_id in ids:
        found += sorted(
            glob.glob(
                os.path.join(sessions, "**", f"rollout-*{glob.escape(session_id)}.jsonl"), recursive=True
            )
        )
    return found


async def session_end(ctx: RequestContext, body: m.SessionEnd) -> tuple[SessionEndReply, str]:
    """Queue the session-end job and return."""
    given = read_payload("session-end", body.payload)
    project = await ctx.project_store() if not ctx.request.global_store else None
    store = project if project is not None else await ctx.global_store()
    codex: list[str] = []
    if body.codex_offset is not None:
        home = tool_home("codex", (await ctx.global_store()).config, os.environ)
        codex = await asyncio.to_thread(codex_rollouts, home, body.codex_offset)
    job = SessionEndJob(
        ctx=ctx,
        store=store,
        has_project_store=project is not None,
        session=session_of(ctx, given),
        claude_transcript=transcript_file(ctx, given),
        codex_transcripts=codex,
    )
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        await spool_marks.claim(conn, body.spool_key, now)
        # --once: a host that may report one session's end more than once (OpenCode) runs it once.
        session = job.session if body.once else None
        due = session is None or await spool_marks.first(conn, _ended_key(session), now)
    if not due:
        return SessionEndReply(queued=False, store=store.root), ""
    start(ctx, job)
    paths = [p for p in [job.claude_transcript, *codex] if p is not None]
    return SessionEndReply(queued=True, store=store.root, transcripts=paths), ""


def _ended_key(session: str) -> str:
    """The mark of a session that ended, kept with the applied hook requests (spool_marks)."""
    return f"session-end:{session}"


def start(ctx: RequestContext, job: SessionEndJob) -> None:
    """Run the job in a task the daemon's shutdown waits for."""
    task = asyncio.get_running_loop().create_task(run_job(job))
    ctx.state.background.add(task)
    task.add_done_callback(ctx.state.background.discard)


async def run_job(job: SessionEndJob) -> None:
    """Each step of the job in turn; a failing step is logged and the next one still runs."""
    steps = [
        ("sleep", _sleep),
        ("agent notes", _notes),
        ("transcript capture", _capture),
        ("re-reads", _rereads),
    ]
    for name, step in steps:
        try:
            await step(job)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("session end in %s: %s failed", job.store.root, name)


async def _sleep(job: SessionEndJob) -> None:
    options = SleepOptions(agent_tools=job.ctx.request.env.get("HIPPO_AGENT_MEMORY_TOOLS"))
    reply = await sleep_store(job.ctx.state, job.store, options)
    async with job.store.db.transaction() as conn:
        await kept_report.keep(conn, reply)


async def _notes(job: SessionEndJob) -> None:
    """In a folder without a project store, that project's notes go to the global store."""
    if job.has_project_store:
        return
    ctx = job.ctx
    await import_project(
        ctx.state, ctx.request.cwd, ctx.request.env, tenant=ctx.tenant, actor="hook:session-end"
    )


def _conversation(path: str) -> transcript.Conversation:
    return transcript.parse(read_bytes(path))


async def _capture(job: SessionEndJob) -> None:
    paths = [p for p in [job.claude_transcript, *job.codex_transcripts] if p is not None]
    for path in paths:
        conversation = await asyncio.to_thread(_conversation, path)
        if not conversation.user and not conversation.assistant:
            continue
        session = conversation.session_id or (job.session if path == job.claude_transcript else None)
        await capture_text(job.ctx, job.store, transcript.summary(conversation), session_id=session)


def _session_calls(path: str) -> reread.SessionCalls:
    return reread.session_calls(read_bytes(path))


async def _rereads(job: SessionEndJob) -> None:
    """Claude Code only: the session's re-read rows, replacing earlier ones."""
    if job.claude_transcript is None or job.session is None:
        return
    calls = await asyncio.to_thread(_session_calls, job.claude_transcript)
    ledger_store = await job.ctx.global_store()
    tenant = job.ctx.tenant
    async with ledger_store.db.transaction() as conn:
        sent = await ledger_reread.sent_blocks(conn, tenant, job.session)
        found = reread.rereads(calls, sent)
        await ledger_reread.replace(
            conn, tenant, job.session, found, project=job.store.project, store=job.store.root
        )


async def last_sleep(ctx: RequestContext, body: m.LastSleep) -> tuple[LastSleepReply, str]:
    """Print the summary of the consolidation kept by the previous session end (its full report with
    --verbose); forget it unless --keep. A sleep with nothing to tell prints nothing."""
    store = await existing_target(ctx)
    if store is None:
        return LastSleepReply(), ""
    found = await kept_report.kept(store.db.reader)
    if found is None:
        return LastSleepReply(store=store.root), ""
    raw, report = found
    if not body.keep:
        async with store.db.transaction() as conn:
            await kept_report.drop(conn, raw)
    if report is None:
        return LastSleepReply(store=store.root), ""
    report = sleep_report.for_tenant(report, ctx.tenant)
    lines = [sleep_report.render(report)] if body.verbose else sleep_report.summary_lines(report)
    reply = LastSleepReply(shown=bool(lines), kept=body.keep, store=store.root, report=report)
    if not lines:
        return reply, ""
    return reply, "\n".join([LAST_SLEEP_HEADER, *lines, LAST_SLEEP_FOOTER])
