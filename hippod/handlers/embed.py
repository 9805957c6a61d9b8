"""`embed [--status]`: vectors for every memory of the target stores (recall.md §10.6)."""

from __future__ import annotations

import asyncio

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import EmbedReply, EmbedStore
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.embed import queue
from hippod.embed.service import EXTRA_HINT
from hippod.store.stores import SqliteStore, sqlite_only


async def embed(ctx: RequestContext, body: m.Embed) -> tuple[EmbedReply, str]:
    project, global_ = await ctx.read_stores()
    stores = [sqlite_only(s, ctx.verb) for s in (project, global_) if s is not None]
    results = [await _one(ctx, s, body.status_only) for s in stores]
    lines = []
    for r in results:
        label = f"{r.kind} store {r.path}"
        if r.unavailable is not None:
            lines.append(f"{label}: embeddings unavailable: {r.unavailable}")
            continue
        line = f"{label}: {r.embedded} of {plural(r.total, 'memory')} embedded ({r.model}, {r.dim}d)"
        if r.seconds_left is not None and r.per_second is not None:
            line += f"; about {_rough(r.seconds_left)} left at {r.per_second:,.0f} memories/s"
        lines.append(line)
    if not body.status_only and results and all(r.unavailable is not None for r in results):
        remote = stores[0].embed_settings().remote
        hint = "set the key where hippod runs, then `hippoctl daemon restart`" if remote else EXTRA_HINT
        raise HippoError("embeddings_unavailable", lines[0].split(": ", 1)[1], hint=hint)
    return EmbedReply(stores=results), "\n".join(lines)


async def _one(ctx: RequestContext, store: SqliteStore, status_only: bool) -> EmbedStore:
    settings = store.embed_settings()
    entry = EmbedStore(path=store.root, kind=store.kind, model=settings.model, dim=None, embedded=0, total=0)
    if settings.mode == "off":
        entry.unavailable = settings.off_reason or "embeddings are off"
        return entry
    embedder = await store.embedder.get(settings)
    if embedder is None:
        entry.unavailable = store.embedder.reason(settings.model) or "the model could not be loaded"
        return entry
    entry.dim = embedder.dim
    if status_only:
        entry.embedded, entry.total = await queue.scan(store.db, embedder, write=False)
        speed = embedder.per_second()
        if speed and entry.embedded < entry.total:
            entry.per_second = round(speed, 1)
            entry.seconds_left = round((entry.total - entry.embedded) / speed, 3)
        return entry

    async def report(done: int, seen: int) -> None:
        await ctx.say(f"{store.kind} store: embedded {done} (of {plural(seen, 'memory')} read so far)")

    try:
        before, entry.total = await queue.scan(
            store.db, embedder, write=True, progress=report, written=store.vectors_written
        )
    except asyncio.CancelledError:
        # Cut short (a stopping daemon's grace ran out): the next start embeds the rest.
        store.embed_queue.left_some()
        raise
    entry.added = entry.total - before
    entry.embedded = entry.total
    # An API's vectors have the size its answers had.
    entry.dim = embedder.dim
    return entry


def _rough(seconds: float) -> str:
    """An estimate of time left, rounded as people say it: 40 s, 12 min, 2.5 h (the daemon's uptime,
    handlers/admin.py, is exact instead: 3h 12m)."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
