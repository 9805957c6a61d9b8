"""`slack dlq list|replay` and `github dlq list|replay`: the webhooks' dead letters (integrations.md §10)."""

from __future__ import annotations

from collections import Counter

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import DeadLetter, DeadLettersReply, ReplayedLetter, ReplayReply
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.connectors import deliver, replay
from hippod.store.sqlite import connectors

SOURCES = ("slack", "github")


def _source(source: str) -> None:
    if source not in SOURCES:
        raise HippoError("usage", "the source is slack or github")


async def dead_letters(ctx: RequestContext, body: m.DeadLetters) -> tuple[DeadLettersReply, str]:
    _source(body.source)
    if not 1 <= body.limit <= 10_000:
        raise HippoError("usage", "the limit is 1 to 10000")
    store = await deliver.global_store(ctx.state)
    seen = replay.tenants(ctx.tenant, ctx.owner)
    found = await connectors.dead_letters(store.db.reader, body.source, seen, body.limit)
    letters = [
        DeadLetter(
            id=d.id,
            source=d.source,
            tenant=d.tenant,
            received_at=d.received_at,
            bucket=d.bucket,
            error=d.error,
            retry_count=d.retry_count,
        )
        for d in found
    ]
    text = "\n".join(f"{d.id}\t{d.received_at}\t{d.bucket}\t{d.error}" for d in letters)
    return DeadLettersReply(source=body.source, letters=letters), text or f"No {body.source} dead letters."


async def replay_letters(ctx: RequestContext, body: m.DeadLetterReplay) -> tuple[ReplayReply, str]:
    """Each waiting letter (or the one --id names) applied as a live delivery, once."""
    _source(body.source)
    done = await replay.replay(
        ctx.state, body.source, ctx.tenant, owner=ctx.owner, letter_id=body.id, dry_run=body.dry_run
    )
    letters = [
        ReplayedLetter(
            id=r.id,
            status=r.status,
            tenant=r.tenant,
            retry_count=r.retry_count,
            memory_id=r.memory_id,
            error=r.error,
        )
        for r in done
    ]
    counts = dict(Counter(r.status for r in done))
    reply = ReplayReply(source=body.source, dry_run=body.dry_run, letters=letters, counts=counts)
    if not done:
        return reply, f"No {body.source} dead letters to replay."
    lines = [f"{r.id}\t{r.status}\t{r.memory_id or r.error or ''}".rstrip() for r in letters]
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    verb = "would replay" if body.dry_run else "replayed"
    lines.append(f"{body.source}: {verb} {plural(len(done), 'dead letter')} ({summary})")
    if not body.dry_run and counts.get("failed"):
        ctx.exit_code = 1
    return reply, "\n".join(lines)
