"""`session-end` and `last-sleep` (integrations.md, hooks 1 and 2).

`session-end` returns at once and leaves a job on the daemon (hook_jobs.py): sleep of the cwd's
store (whose report is kept for `last-sleep`), agent notes of a project without a store into the
global store, capture of the session's transcript, and re-read accounting (continuity.md §7). The
request counts as applied only once the whole job has committed; until then it waits in the spool.
"""

from __future__ import annotations

import asyncio
import glob
import hashlib
import logging
import os
import time
from dataclasses import dataclass, field

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import spool
from hippoctl.protocol.replies_hooks import LastSleepReply, SessionEndReply
from hippod.agentnotes.importer import import_project
from hippod.agentnotes.tools import tool_home
from hippod.base import clock
from hippod.calls.hook_jobs import HookJob
from hippod.calls.request import RequestContext
from hippod.continuity import reread
from hippod.ingest import transcript
from hippod.ingest.capture import capture_text
from hippod.ingest.files import read_bytes
from hippod.ingest.hook_input import HookInput, existing_target, read_payload, session_of, transcript_file
from hippod.ingest.spool_requests import session_end_document
from hippod.sleep import sleep_report
from hippod.sleep.run import SleepOptions, sleep_store
from hippod.store.sqlite import last_sleep as kept_report
from hippod.store.sqlite import ledger_reread, spool_marks
from hippod.store.stores import SqliteStore, sqlite_only

log = logging.getLogger("hippod.session_end")

LAST_SLEEP_HEADER = "=== Previous session hippo consolidation ==="
LAST_SLEEP_FOOTER = "=" * 40
_decode = msgspec.json.Decoder().decode


@dataclass
class SessionEndJob:
    """What one session end leaves the daemon to do."""

    ctx: RequestContext
    key: str
    store: SqliteStore
    has_project_store: bool
    session: str | None
    claude_transcript: str | None
    codex_transcripts: list[str] = field(default_factory=list)
    queued_at: float = field(default_factory=time.monotonic)


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
    """Queue the session-end job and return; the job is in the spool until it is done."""
    given = read_payload("session-end", body.payload)
    project = None if ctx.request.global_store else await ctx.project_store()
    store = sqlite_only(project if project is not None else await ctx.global_store(), ctx.verb)
    jobs = ctx.state.hook_jobs
    # A request without a key (not from hippoctl) gets one: it names the job's spool file.
    key = body.spool_key or spool.key_of(spool.new_name())
    if not jobs.reserve(key):
        # The same request sent live and replayed from its spool file: one job does it.
        return SessionEndReply(queued=True, store=store.root), ""
    try:
        return await _queue(ctx, body, given, store, project is not None, key)
    finally:
        jobs.release(key)


async def _queue(
    ctx: RequestContext, body: m.SessionEnd, given: HookInput, store: SqliteStore, has_project: bool, key: str
) -> tuple[SessionEndReply, str]:
    if await spool_marks.applied(store.db.reader, key):
        raise spool_marks.AlreadyApplied(key)
    codex: list[str] = []
    if body.codex_offset is not None:
        home = tool_home("codex", (sqlite_only(await ctx.global_store(), ctx.verb)).config, os.environ)
        codex = await asyncio.to_thread(codex_rollouts, home, body.codex_offset)
    job = SessionEndJob(
        ctx=ctx,
        key=key,
        store=store,
        has_project_store=has_project,
        session=session_of(ctx, given),
        claude_transcript=transcript_file(ctx, given),
        codex_transcripts=codex,
    )
    # --once: a host that may report one session's end more than once (OpenCode) runs it once.
    ended = _ended_key(job.session) if body.once and job.session is not None else None
    if ended is not None and (
        ctx.state.hook_jobs.marked(ended) or await spool_marks.applied(store.db.reader, ended)
    ):
        if body.spool_key is not None:
            async with store.db.transaction() as conn:
                await spool_marks.claim(conn, key, clock.iso(clock.now()))
        return SessionEndReply(queued=False, store=store.root), ""
    marks = (key,) if ended is None else (key, ended)
    await ctx.state.hook_jobs.submit(
        HookJob(
            key=key,
            store=store.root,
            home=ctx.state.registry.global_root,
            document=session_end_document(ctx.request, body),
            work=lambda: run_job(job, marks),
            marks=marks,
        )
    )
    paths = [p for p in [job.claude_transcript, *codex] if p is not None]
    return SessionEndReply(queued=True, store=store.root, transcripts=paths), ""


def _ended_key(session: str) -> str:
    """The mark of a session that ended, kept with the applied hook requests (spool_marks)."""
    return f"session-end:{session}"


async def run_job(job: SessionEndJob, marks: tuple[str, ...]) -> None:
    """Each step of the job in turn, then the marks that say it is done, in one transaction.

    A failing step is logged and the next one still runs. A job cut short (the daemon killed or
    stopped) runs again from its spool file, and what it had done is not done again: its sleep's
    report and each transcript's capture are recorded with their marks, agent notes already
    imported are skipped, and the re-read rows are replaced.
    """
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
    now = clock.iso(clock.now())
    async with job.store.db.transaction() as conn:
        for mark in marks:
            await spool_marks.first(conn, mark, now)


async def _sleep(job: SessionEndJob) -> None:
    """Sleep the store and keep the report, once per job (a job run again after a crash keeps the
    report it had kept). Skipped when a session end's sleep of the store began after this job was
    queued: queued session ends coalesce into one sleep, as the sleep requests of sleep.md §1 do."""
    slept = job.ctx.state.session_sleeps
    if slept.get(job.store.root, float("-inf")) > job.queued_at:
        return
    mark = f"slept:{job.key}"
    if await spool_marks.applied(job.store.db.reader, mark):
        return
    began = time.monotonic()
    options = SleepOptions(
        agent_tools=job.ctx.request.env.get("HIPPO_AGENT_MEMORY_TOOLS"), extraction_tenant=job.ctx.tenant
    )
    reply = await sleep_store(job.ctx.state, job.store, options)
    async with job.store.db.transaction() as conn:
        await kept_report.keep(conn, reply)
        await spool_marks.first(conn, mark, clock.iso(clock.now()))
    slept[job.store.root] = max(began, slept.get(job.store.root, began))


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


def _capture_key(tenant: str, text: str) -> str:
    """The mark of one transcript text captured for a tenant: the same text is captured once."""
    return f"capture:{tenant}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"


async def _capture(job: SessionEndJob) -> None:
    paths = [p for p in [job.claude_transcript, *job.codex_transcripts] if p is not None]
    for path in paths:
        conversation = await asyncio.to_thread(_conversation, path)
        if not conversation.user and not conversation.assistant:
            continue
        session = conversation.session_id or (job.session if path == job.claude_transcript else None)
        text = transcript.summary(conversation)
        once = _capture_key(job.ctx.tenant, text)
        await capture_text(job.ctx, job.store, text, session_id=session, once_key=once)


def _session_calls(path: str) -> reread.SessionCalls:
    return reread.session_calls(read_bytes(path))


async def _rereads(job: SessionEndJob) -> None:
    """Claude Code only: the session's re-read rows, replacing earlier ones."""
    if job.claude_transcript is None or job.session is None:
        return
    calls = await asyncio.to_thread(_session_calls, job.claude_transcript)
    ledger_store = sqlite_only(await job.ctx.global_store(), job.ctx.verb)
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
