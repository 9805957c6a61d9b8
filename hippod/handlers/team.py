"""`team join|leave|status` and `share --team`: this user's link to a team server (docs/team.md).

Joining checks the server and the key, then keeps both in the global store's `team.json`. Shares go
into the global store's `team_outbox` in one transaction and the sender (teamlink/sender.py)
delivers them; a memory is queued for its team once, whatever the number of shares.
"""

from __future__ import annotations

import asyncio

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import TeamReply, TeamShareReply
from hippoctl.protocol.wording import plural
from hippod.base import clock, thread_stop
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle.lookup import find_memory
from hippod.store.sqlite import team_cache, team_marks, team_outbox
from hippod.store.stores import sqlite_only
from hippod.teamlink import cache as team_copy
from hippod.teamlink import calls, membership
from hippod.teamlink.shares import queue_shares, wake_sender

MAX_SHARE_IDS = 10_000
_JOIN_HINT = "hippoctl team join <url> --key <key>"


async def team_join(ctx: RequestContext, body: m.TeamJoin) -> tuple[TeamReply, str]:
    url = body.url.strip().rstrip("/")
    problem = calls.url_problem(url)
    if problem is not None:
        raise HippoError("usage", problem)
    if not body.key.startswith("hk_") or "." not in body.key:
        raise HippoError("usage", "--key takes a key as `hippoctl auth create` prints it: hk_<id>.<secret>")
    health = await thread_stop.detached(calls.health, url)
    if health.status != 200:
        reason = health.message() if health.reached else health.body
        raise HippoError("team_unreachable", f"{url} does not answer as a team server: {reason}")
    checked = await thread_stop.detached(calls.check_key, url, body.key)
    if checked.status in (401, 403):
        raise HippoError("team_key_refused", f"{url} refused the key: {checked.message()}")
    if checked.status != 200:
        raise HippoError("team_unreachable", f"{url} answered {checked.status}: {checked.message()}")
    root = ctx.state.registry.global_root
    joined = membership.Membership(url, body.key, clock.iso(clock.now()))
    await asyncio.to_thread(membership.write, root, joined)
    wake_sender(ctx.state)
    reply = await _status(ctx, joined, reachable=True)
    return (
        reply,
        f"Joined the team at {url}; shares go there from now on ({plural(reply.queued, 'write')} queued)",
    )


async def team_leave(ctx: RequestContext, body: m.TeamLeave) -> tuple[TeamReply, str]:
    root = ctx.state.registry.global_root
    if not await asyncio.to_thread(membership.remove, root):
        return TeamReply(joined=False), "Not in a team."
    store = sqlite_only(await ctx.global_store(), ctx.verb)
    async with store.db.transaction() as conn:
        dropped = await team_outbox.clear(conn)
        await team_marks.clear(conn)
    await team_copy.drop(ctx.state.registry)
    text = "Left the team"
    if dropped:
        text += f"; {plural(dropped, 'queued write')} dropped"
    return TeamReply(joined=False, dropped=dropped), text


async def _status(
    ctx: RequestContext, joined: membership.Membership | None, *, reachable: bool | None
) -> TeamReply:
    store = sqlite_only(await ctx.global_store(), ctx.verb)
    counts = await team_outbox.counts(store.db.reader)
    marks = await team_marks.count(store.db.reader)
    sender = ctx.state.team_sender
    copy = await team_copy.open_cache(ctx.state.registry, create=False)
    cached = await team_cache.count(copy.db.reader) if copy is not None else 0
    return TeamReply(
        cached=cached,
        synced_at=sender.synced_at if sender else None,
        joined=joined is not None,
        url=joined.url if joined else None,
        reachable=reachable,
        queued=counts[team_outbox.QUEUED],
        failed=counts[team_outbox.FAILED],
        sent=sender.sent if sender else 0,
        last_error=sender.last_error if sender else None,
        marks_queued=marks,
        marks_sent=sender.marks_sent if sender else 0,
    )


async def team_status(ctx: RequestContext, body: m.TeamStatus) -> tuple[TeamReply, str]:
    joined = membership.read(ctx.state.registry.global_root)
    if joined is None:
        return await _status(ctx, None, reachable=None), f"Not in a team (join one: {_JOIN_HINT})."
    answer = await thread_stop.detached(calls.health, joined.url)
    if answer.status == 200:
        wake_sender(ctx.state)  # the server answers: what is queued goes now
    reply = await _status(ctx, joined, reachable=answer.status == 200)
    lines = [
        f"team: {joined.url} ({'reachable' if reply.reachable else 'unreachable'})",
        f"queued: {reply.queued}  failed: {reply.failed}  sent since start: {reply.sent}",
        f"marks of team memories queued: {reply.marks_queued}  sent since start: {reply.marks_sent}",
        f"team memories here: {reply.cached} (synced {reply.synced_at or 'not yet since start'})",
    ]
    if reply.last_error:
        lines.append(f"last error: {reply.last_error}")
    if not reply.reachable:
        ctx.exit_code = 1
    return reply, "\n".join(lines)


async def team_share(ctx: RequestContext, body: m.TeamShare) -> tuple[TeamShareReply, str]:
    if membership.read(ctx.state.registry.global_root) is None:
        raise HippoError("not_in_team", "this hippod is not in a team", hint=_JOIN_HINT)
    if not body.ids:
        raise HippoError("usage", "share --team takes one or more memory ids")
    if len(body.ids) > MAX_SHARE_IDS:
        raise HippoError("usage", f"at most {MAX_SHARE_IDS} ids at once")
    # Every id is looked up before any is queued, so an unknown one queues nothing.
    found = [(await find_memory(ctx, memory_id))[1] for memory_id in dict.fromkeys(body.ids)]
    added = await queue_shares(ctx.state, found)
    queued = [memory.id for memory, new in zip(found, added, strict=True) if new]
    already = [memory.id for memory, new in zip(found, added, strict=True) if not new]
    text = f"Queued {plural(len(queued), 'memory')} for the team"
    if already:
        text += f" ({len(already)} already shared)"
    return TeamShareReply(queued=queued, already=already), text
