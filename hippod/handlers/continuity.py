"""`snapshot save|show|clear`, `session log|show|latest|resume`, `handoff create|latest|show` and
`current show` (continuity.md §1-§4). All of them act on the request's target store."""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_continuity import (
    CurrentEvent,
    CurrentReply,
    EventItem,
    EventsReply,
    HandoffItem,
    HandoffReply,
    SessionLatestReply,
    SnapshotItem,
    SnapshotReply,
)
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.continuity import mirrors, render
from hippod.store.sqlite import continuity, rejections
from hippod.store.sqlite.continuity import Event, Handoff, Snapshot
from hippod.store.stores import SqliteStore, sqlite_only

LATEST_EVENTS = 8
CURRENT_EVENTS = 5
MAX_LIMIT = 1000


def _snapshot_item(s: Snapshot | None) -> SnapshotItem | None:
    if s is None:
        return None
    return SnapshotItem(
        s.id, s.task, s.summary, s.next_step, s.status, s.source, s.session_id, s.created_at, s.updated_at
    )


def _event_item(e: Event) -> EventItem:
    return EventItem(e.id, e.session_id, e.task, e.event_type, e.content, e.source, e.created_at)


def _handoff_item(h: Handoff | None) -> HandoffItem | None:
    if h is None:
        return None
    return HandoffItem(
        h.id, h.session_id, h.repo_root, h.task_id, h.summary, h.next_action, h.artifacts, h.created_at
    )


def _required(value: str, what: str) -> str:
    text = value.strip()
    if not text:
        raise HippoError("usage", f"{what} is empty")
    return text


def _optional(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


def _env_session(ctx: RequestContext) -> str | None:
    return ctx.request.env.get("HIPPO_SESSION_ID", "").strip() or None


# --- snapshots (§1) --------------------------------------------------------------------------------


async def snapshot_save(ctx: RequestContext, body: m.SnapshotSave) -> tuple[SnapshotReply, str]:
    task, summary = _required(body.task, "--task"), _required(body.summary, "--summary")
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        new_id = await continuity.save_snapshot(
            conn,
            ctx.tenant,
            task=task,
            summary=summary,
            next_step=_optional(body.next_step),
            source=_required(body.source, "--source"),
            session_id=_optional(body.session) or _env_session(ctx),
            scope=ctx.active_scope,
            now=now,
        )
        saved = await continuity.snapshot_by_id(conn, ctx.tenant, new_id)
    await mirrors.active_task(store, ctx.tenant)
    return SnapshotReply(_snapshot_item(saved)), f"Task snapshot saved (#{new_id})"


async def snapshot_show(ctx: RequestContext, body: m.SnapshotShow) -> tuple[SnapshotReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    snapshot = await continuity.active_snapshot(store.db.reader, ctx.tenant)
    return SnapshotReply(_snapshot_item(snapshot)), render.snapshot_block(snapshot)


async def snapshot_clear(ctx: RequestContext, body: m.SnapshotClear) -> tuple[SnapshotReply, str]:
    status = _required(body.status, "--status")
    if status == "active" or not status.replace("-", "").replace("_", "").isalnum():
        raise HippoError("usage", f"--status must be one word other than active, not {status!r}")
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        active = await continuity.active_snapshot(conn, ctx.tenant)
        if active is not None:
            await continuity.clear_snapshot(conn, ctx.tenant, status, now)
            active = await continuity.snapshot_by_id(conn, ctx.tenant, active.id)
    if active is None:
        return SnapshotReply(None, status), render.NO_SNAPSHOT
    await mirrors.active_task(store, ctx.tenant)
    return SnapshotReply(_snapshot_item(active), status), f"Task snapshot #{active.id} marked {status}"


# --- session events (§2) ---------------------------------------------------------------------------


async def session_log(ctx: RequestContext, body: m.SessionLog) -> tuple[EventsReply, str]:
    session_id = _required(body.session_id, "--id")
    content = _required(body.content, "--content")
    event_type = _required(body.type, "--type")
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        if await rejections.refuses(conn, ctx.tenant, content):
            raise HippoError("rejected_value", "this text was rejected earlier and cannot be stored again")
        event_id = await continuity.log_event(
            conn,
            ctx.tenant,
            session_id=session_id,
            content=content,
            event_type=event_type,
            task=_optional(body.task),
            source=_required(body.source, "--source"),
            scope=ctx.active_scope,
            now=now,
        )
    await mirrors.recent_session(store, ctx.tenant, session_id)
    event = Event(event_id, session_id, _optional(body.task), event_type, content, body.source.strip(), now)
    return EventsReply(session_id, event.task, [_event_item(event)]), f"Logged [{event_type}] to {session_id}"


async def session_show(ctx: RequestContext, body: m.SessionShow) -> tuple[EventsReply, str]:
    if not 1 <= body.limit <= MAX_LIMIT:
        raise HippoError("usage", f"--limit must be between 1 and {MAX_LIMIT}")
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    reader = store.db.reader
    task = _optional(body.task)
    session_id = _optional(body.session_id)
    if session_id is None and task is None:
        session_id = _env_session(ctx) or await continuity.latest_event_session(reader, ctx.tenant)
        if session_id is None:
            return EventsReply(None), "No session events."
    events = await continuity.recent_events(
        reader, ctx.tenant, session_id=session_id, task=task, limit=body.limit
    )
    return EventsReply(session_id, task, [_event_item(e) for e in events]), render.events_block(
        events
    ) or "No session events."


async def session_latest(ctx: RequestContext, body: m.SessionLatest) -> tuple[SessionLatestReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    snapshot = await continuity.active_snapshot(store.db.reader, ctx.tenant)
    events: list[Event] = []
    if snapshot is not None and snapshot.session_id:
        events = await continuity.recent_events(
            store.db.reader, ctx.tenant, session_id=snapshot.session_id, limit=LATEST_EVENTS
        )
    text = render.snapshot_block(snapshot)
    if events:
        text += "\n\nRecent events:\n" + render.events_block(events)
    return SessionLatestReply(_snapshot_item(snapshot), [_event_item(e) for e in events]), text


async def session_resume(ctx: RequestContext, body: m.SessionResume) -> tuple[HandoffReply, str]:
    """The latest handoff as a context block; nothing at all when there is none, for re-injection."""
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    latest = await continuity.latest_handoff(store.db.reader, ctx.tenant)
    return HandoffReply(_handoff_item(latest)), "" if latest is None else render.handoff_block(latest)


# --- handoffs (§3) ---------------------------------------------------------------------------------


def _repo_root(cwd: str, store: SqliteStore) -> str | None:
    """The top of the git work tree holding cwd (a `.git` folder or file), else the store's project."""
    current = os.path.realpath(cwd)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return None if store.kind == "global" else os.path.dirname(store.root)


async def handoff_create(ctx: RequestContext, body: m.HandoffCreate) -> tuple[HandoffReply, str]:
    summary = _required(body.summary, "--summary")
    session_id = _required(body.session_id, "--session")
    artifacts = [a.strip() for a in body.artifacts if a.strip()]
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        new_id = await continuity.create_handoff(
            conn,
            ctx.tenant,
            session_id=session_id,
            repo_root=_repo_root(ctx.request.cwd, store),
            task_id=_optional(body.task),
            summary=summary,
            next_action=_optional(body.next),
            artifacts=artifacts,
            scope=ctx.active_scope,
            now=now,
        )
        created = await continuity.handoff(conn, ctx.tenant, new_id)
    assert created is not None
    return HandoffReply(_handoff_item(created)), f"Handoff #{new_id} created (session {session_id})"


async def handoff_latest(ctx: RequestContext, body: m.HandoffLatest) -> tuple[HandoffReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    latest = await continuity.latest_handoff(store.db.reader, ctx.tenant)
    return HandoffReply(_handoff_item(latest)), "No handoffs." if latest is None else render.handoff_block(
        latest
    )


async def handoff_show(ctx: RequestContext, body: m.HandoffShow) -> tuple[HandoffReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    # An id SQLite could not bind never gets here: the door refuses it (hippod/daemon/door.py).
    found = await continuity.handoff(store.db.reader, ctx.tenant, body.id)
    if found is None:
        raise HippoError("not_found", f"no handoff #{body.id}")
    return HandoffReply(_handoff_item(found)), render.handoff_block(found)


# --- current show (§4) -----------------------------------------------------------------------------


async def current_show(ctx: RequestContext, body: m.CurrentShow) -> tuple[CurrentReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    snapshot = await continuity.active_snapshot(store.db.reader, ctx.tenant)
    if snapshot is None:
        return CurrentReply(None), render.NO_SNAPSHOT
    events: list[Event] = []
    if snapshot.session_id:
        events = await continuity.recent_events(
            store.db.reader, ctx.tenant, session_id=snapshot.session_id, limit=CURRENT_EVENTS
        )
    limit = render.CURRENT_EVENT_CHARS
    items = [CurrentEvent(e.event_type, render.cut(e.content, limit), e.created_at) for e in events]
    lines = [f"Task: {render.one_line(snapshot.task)}"]
    if snapshot.next_step:
        lines.append(f"Next step: {render.one_line(snapshot.next_step)}")
    if events:
        lines.append("Recent events:")
        lines += [f"- [{e.event_type}] {render.cut(render.one_line(e.content), limit)}" for e in events]
    reply = CurrentReply(snapshot.task, snapshot.next_step, snapshot.session_id, items)
    return reply, "\n".join(lines)
