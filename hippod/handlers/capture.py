"""`capture --stdin|--file|--last-session`: heuristic extraction from conversation text (ingest.md §3)."""

from __future__ import annotations

import asyncio

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_capture import CaptureReply
from hippoctl.protocol.wording import DRY_RUN, agree, plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.ingest import transcript
from hippod.ingest.capture import capture_text
from hippod.ingest.files import read_bytes, read_text_lenient
from hippod.store.stores import sqlite_only


def _load_transcript(path: str) -> transcript.Conversation:
    return transcript.parse(read_bytes(path))


async def capture(ctx: RequestContext, body: m.Capture) -> tuple[CaptureReply, str]:
    path: str | None = None
    session_id: str | None = None
    if body.source == "stdin":
        text = body.text or ""
    elif body.source == "file":
        if not body.path:
            raise HippoError("usage", "capture --file needs a path")
        path = body.path
        text = await asyncio.to_thread(read_text_lenient, path)
    elif body.source == "last-session":
        path = body.transcript or await _default_transcript()
        conversation = await asyncio.to_thread(_load_transcript, path)
        if not conversation.user and not conversation.assistant:
            ctx.warnings.append(f"no user or assistant messages found in {path}")
        text = transcript.summary(conversation)
        session_id = conversation.session_id
    else:
        raise HippoError("usage", f"unknown capture source {body.source!r}; use stdin, file or last-session")
    store = sqlite_only(await ctx.target_store(write=not body.dry_run), ctx.verb)
    done = await capture_text(ctx, store, text, dry_run=body.dry_run, session_id=session_id)
    if done.rejected:
        were = agree(done.rejected, "was")
        ctx.warnings.append(f"{plural(done.rejected, 'item')} {were} rejected earlier and not stored")
    if done.secrets:
        secrets, were = agree(done.secrets, "a secret", "secrets"), agree(done.secrets, "was")
        ctx.warnings.append(f"{plural(done.secrets, 'item')} looked like {secrets} and {were} not stored")
    reply = CaptureReply(
        dry_run=body.dry_run,
        source=body.source,
        path=path,
        captured=len(done.items),
        skipped=done.skipped,
        rejected=done.rejected,
        secrets=done.secrets,
        items=done.items,
    )
    as_what = agree(done.skipped, "a duplicate", "duplicates")
    counts = f"{plural(len(done.items), 'item')} ({done.skipped} skipped as {as_what})"
    if not body.dry_run:
        return reply, f"Captured {counts}"
    lines = [f"[{item.category}] {item.text}" for item in done.items]
    return reply, "\n".join([DRY_RUN, *lines, f"Would capture {counts}"])


async def _default_transcript() -> str:
    """The newest Claude Code transcript; looked for in a worker thread, as it stats every one."""
    home = transcript.claude_home()
    found = await asyncio.to_thread(transcript.newest_transcript, home)
    if found is None:
        raise HippoError(
            "not_found",
            f"no Claude Code transcript (*.jsonl) under {home}/projects",
            hint="hippoctl capture --last-session --transcript <file>",
        )
    return found
