"""Handlers for version/ping, daemon status and stop, init and status."""

from __future__ import annotations

import asyncio
import time

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import (
    DaemonStatusReply,
    MirrorStatus,
    PingReply,
    StatusReply,
    StoreInfo,
    StoreStatus,
    WatchStatus,
)
from hippoctl.protocol.spool import count as spool_count
from hippoctl.protocol.spool import spool_root
from hippoctl.protocol.version import MIN_PROTOCOL, PROTOCOL, spoken
from hippoctl.protocol.wording import agree, plural
from hippod import __version__
from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.doctor.schedule_text import schedule_lines
from hippod.model import strength as st
from hippod.store.sqlite import embeddings
from hippod.store.stores import SqliteStore, Store


async def ping(ctx: RequestContext, body: m.Ping) -> tuple[PingReply, str]:
    reply = PingReply(version=__version__, protocol=PROTOCOL, min_protocol=MIN_PROTOCOL, pid=ctx.state.pid)
    return reply, f"hippod {__version__} ({spoken(MIN_PROTOCOL, PROTOCOL)}), pid {ctx.state.pid}"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


async def daemon_status(ctx: RequestContext, body: m.DaemonStatus) -> tuple[DaemonStatusReply, str]:
    state = ctx.state
    now = time.monotonic()
    stores = [
        StoreInfo(path=s.root, kind=s.kind, idle_s=int(now - s.last_used), schema=s.schema)
        for s in state.registry.stores.values()
    ]
    uptime = now - state.started_monotonic
    reply_home = state.registry.global_root
    reply = DaemonStatusReply(
        version=__version__,
        protocol=PROTOCOL,
        pid=state.pid,
        started_at=state.started_at,
        uptime_s=int(uptime),
        home=state.registry.global_root,
        socket=state.socket,
        socket_activated=state.socket_activated,
        stores=stores,
        connections=state.connections,
        log=state.log_file,
        schedule=state.schedule.status() if state.schedule is not None else None,
        watch=WatchStatus(**await state.watcher.status()) if state.watcher is not None else None,
        spool=dict(zip(("pending", "failed"), spool_count(spool_root(reply_home)), strict=True)),
        http=state.http.reply.url if state.http is not None and state.http.running else None,
        dashboard=state.dashboard.reply().url if state.dashboard is not None else None,
    )
    lines = [
        f"hippod {__version__} (protocol {PROTOCOL}), pid {state.pid}, up {_duration(uptime)}",
        f"home:    {reply.home}",
        f"socket:  {state.socket} (socket activation: {'yes' if state.socket_activated else 'no'})",
        f"log:     {state.log_file}",
        f"http:    {reply.http or 'not serving (hippoctl serve opens it)'}",
        f"dashboard: {reply.dashboard or 'off (hippoctl dashboard opens it)'}",
        f"stores open: {len(stores)}",
    ]
    lines += [f"  {s.path}   {s.kind:<8} idle {_duration(s.idle_s)}   schema {s.schema}" for s in stores]
    if reply.watch is not None:
        missing = f" ({', '.join(reply.watch.missing)})" if reply.watch.missing else ""
        lines.append(
            f"watch roots: {len(reply.watch.roots)} watching, {len(reply.watch.missing)} missing{missing}"
        )
    if reply.schedule is not None:
        lines += schedule_lines(reply.schedule)
    if reply.spool is not None:
        lines.append(f"spool: {reply.spool['pending']} pending, {reply.spool['failed']} failed")
    lines.append(f"connections: {state.connections}")
    return reply, "\n".join(lines)


async def shutdown(ctx: RequestContext, body: m.Shutdown) -> tuple[None, str]:
    ctx.state.shutdown.set()
    return None, "hippod stopping"


async def _store_status(store: Store, ctx: RequestContext) -> StoreStatus:
    moment = clock.now()
    rows = await store.reports.status_rows(store.db.reader, ctx.tenant)
    meta = await store.reports.all_meta(store.db.reader)
    layers: dict[str, int] = {}
    pinned = superseded = at_risk = 0
    total_strength = 0.0
    # Every row's live strength: 0.3 s at 100k memories, off the daemon's loop.
    strengths = await asyncio.to_thread(st.live_strengths, rows, moment, ctx.state.loss_aversion)
    for (_id, layer, is_pinned, superseded_by, *_), value in zip(rows, strengths, strict=True):
        layers[layer] = layers.get(layer, 0) + 1
        pinned += bool(is_pinned)
        superseded += superseded_by is not None
        total_strength += value
        at_risk += value < st.AT_RISK_BELOW
    return StoreStatus(
        path=store.root,
        kind=store.kind,
        tenant=ctx.tenant,
        total=len(rows),
        layers=layers,
        pinned=pinned,
        superseded=superseded,
        at_risk=at_risk,
        mean_strength=round(total_strength / len(rows), 4) if rows else 0.0,
        schema=store.schema,
        sleep_count=int(meta.get("sleep_count", 0)),
        last_sleep=meta.get("last_sleep"),
        total_remembered=int(meta.get("total_remembered", 0)),
        total_recalled=int(meta.get("total_recalled", 0)),
        total_forgotten=int(meta.get("total_forgotten", 0)),
        embeddings=await _embedding_coverage(store),
        dormant=await store.dormant.count(store.db.reader, ctx.tenant),
        open_conflicts=await store.reports.count_open(store.db.reader, ctx.tenant),
        # A team store has no mirror files.
        mirrors=None if store.team else await _mirror_status(store),
    )


async def _mirror_status(store: Store) -> MirrorStatus:
    check = await store.mirrors.check()
    return MirrorStatus(check.missing, check.healed, check.removed, check.healed_at)


def _mirror_line(mirrors: MirrorStatus) -> str:
    healed = f"healed {mirrors.healed}, removed {mirrors.removed} since the store was opened"
    when = f" (last check {mirrors.healed_at})" if mirrors.healed_at else ""
    return f"  mirrors: {mirrors.missing} missing; {healed}{when}"


async def _embedding_coverage(store: Store) -> str:
    """The embeddings line of `status`: how many memories have a vector of the model, or why there
    are none to count (embeddings turned off, the extra not installed, the model not loading)."""
    settings = store.embed_settings()
    # The team store keeps no vectors: its settings say off (Store.embed_settings).
    if settings.mode == "off" or not isinstance(store, SqliteStore):
        return f"off: {settings.off_reason or 'turned off'}"
    if store.embedder.missing(settings):
        return f"off: {store.embedder.reason(settings.model) or 'the model cannot be loaded'}"
    have, total = await embeddings.count(store.db.reader, settings.model)
    return f"{have} of {plural(total, 'memory')} {agree(have, 'has')} a vector ({settings.model})"


async def status(ctx: RequestContext, body: m.Status) -> tuple[StatusReply, str]:
    project, global_ = await ctx.read_stores()
    stores = [await _store_status(s, ctx) for s in (project, global_) if s is not None]
    lines: list[str] = []
    for s in stores:
        layer_text = ", ".join(f"{k} {v}" for k, v in sorted(s.layers.items())) or "none"
        lines += [
            f"{s.kind} store: {s.path} (tenant {s.tenant}, schema {s.schema})",
            f"  memories: {s.total} ({layer_text}); pinned {s.pinned}; superseded {s.superseded}",
            f"  dormant {s.dormant}; open conflicts {s.open_conflicts}",
            f"  strength: mean {s.mean_strength:.2f}; at risk (< {st.AT_RISK_BELOW}) {s.at_risk}",
            f"  sleep: {plural(s.sleep_count, 'run')}; last {s.last_sleep or 'never'}",
            f"  totals: remembered {s.total_remembered}, recalled {s.total_recalled}, "
            f"forgotten {s.total_forgotten}",
        ]
        lines.append(f"  embeddings: {s.embeddings}")
        if s.mirrors is not None:
            lines.append(_mirror_line(s.mirrors))
    return StatusReply(stores=stores), "\n".join(lines)
