"""The goal stack: goals pushed on a store's stack or a session's, listed, and popped with an outcome
that marks the memories recalled under the goal (recall lifts what is tagged for the goals on it:
recall/goal_lift.py).

A tenant's stacks live in the store a write goes to (the project store above cwd, else the global
store; `--global` for the global one), which is the store a recall there reads first. The store's
stack holds for every session of the tenant; a session's stack (`--session`, the session key of
HIPPO_SESSION_ID) for that session alone. A session sees both.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from hippoctl.protocol.replies_goals import GoalItem, GoalPopReply, GoalsReply
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle.outcome import mark_rows
from hippod.recall.goal_lift import lifting
from hippod.store.sqlite import goals
from hippod.store.sqlite.goals import STORE_STACK, Goal
from hippod.store.stores import SqliteStore, sqlite_only

# Error codes (exit 1): a pop with nothing on the stack, a push of a goal already on it.
EMPTY = "empty_goal_stack"
ON_STACK = "goal_on_stack"


async def _store(ctx: RequestContext, *, write: bool) -> SqliteStore:
    return sqlite_only(await ctx.target_store(write=write), ctx.verb)


def _session(ctx: RequestContext, own: bool) -> str | None:
    """The session key of the session's stack; with `own`, one there must be (a usage error if not)."""
    session = goals.stack_session(ctx.session_key)
    if own and session is None:
        raise HippoError("usage", f"{ctx.verb} --session needs a session: set HIPPO_SESSION_ID")
    return session


async def _items(conn: aiosqlite.Connection, shown: Sequence[Goal], active: Sequence[Goal]) -> list[GoalItem]:
    lifts = {g.id for g in lifting(active)}
    counts = await goals.recalled_count(conn, [g.id for g in shown if g.status == "active"])
    return [
        GoalItem(
            id=g.id,
            tag=g.tag,
            stack="store" if g.session == STORE_STACK else "session",
            session=g.session or None,
            status=g.status,
            lifting=g.id in lifts,
            recalled=counts.get(g.id, 0),
            outcome=g.outcome,
            pushed_at=g.pushed_at,
            popped_at=g.popped_at,
        )
        for g in shown
    ]


def _lines(items: Sequence[GoalItem]) -> str:
    """Top of the stack first, as a stack is read."""
    if not items:
        return "No goals on the stack."
    rows = []
    for item in reversed(items):
        where = "store" if item.stack == "store" else f"session {item.session}"
        state = item.status
        if item.status == "active":
            state = "lifting" if item.lifting else "waiting"
        elif item.outcome:
            state += f", {item.outcome}"
        rows.append(f"#{item.id}  {item.tag}  [{where}] [{state}]  recalled under it: {item.recalled}")
    return "\n".join(rows)


async def listing(ctx: RequestContext, *, every: bool) -> tuple[GoalsReply, str]:
    """The goals this session sees (the store's stack and its own), bottom first; `every`: popped too."""
    store = await _store(ctx, write=False)
    session = _session(ctx, False)
    conn = store.db.reader
    active = await goals.on_stack(conn, ctx.tenant, session)
    shown = await goals.every(conn, ctx.tenant, session) if every else active
    items = await _items(conn, shown, active)
    return GoalsReply(goals=items, session=session), _lines(items)


async def push(ctx: RequestContext, tag: str, *, own_session: bool) -> tuple[GoalsReply, str]:
    """Put `tag` on top of the store's stack, or of the session's with `own_session`."""
    store = await _store(ctx, write=True)
    session = _session(ctx, own_session)
    stack = session if own_session and session is not None else STORE_STACK
    async with store.db.transaction() as conn:
        active = await goals.on_stack(conn, ctx.tenant, session)
        if any(g.tag == tag and g.session == stack for g in active):
            where = "the session's" if stack != STORE_STACK else "the store's"
            raise HippoError(ON_STACK, f"goal {tag} is already on {where} stack", hint="hippoctl goal list")
        goal = await goals.push(conn, ctx.tenant, stack, tag, clock.iso(clock.now()))
        active = [*active, goal]
        items = await _items(conn, active, active)
    # Set once the push is committed; a pop leaves it set (a recall then finds the stacks empty).
    store.goals_pushed = True
    lifts = next(i.lifting for i in items if i.id == goal.id)
    owner = "the session" if stack != STORE_STACK else "the store"
    text = f"Pushed goal {tag} (#{goal.id}) on {owner}'s stack"
    if not lifts:
        text += " (it waits: only the top goals of a stack lift recall)"
    return GoalsReply(goals=items, session=session), text


async def pop(ctx: RequestContext, outcome: str | None, *, own_session: bool) -> tuple[GoalPopReply, str]:
    """Take the newest goal off the stacks this session sees (the session's alone with `own_session`);
    an outcome marks each memory recalled under it as `outcome --good|--bad` would, in the same
    transaction as the pop."""
    store = await _store(ctx, write=True)
    session = _session(ctx, own_session)
    marked = []
    async with store.db.transaction() as conn:
        active = await goals.on_stack(conn, ctx.tenant, session)
        if own_session:
            active = [g for g in active if g.session == session]
        if not active:
            which = "the session's goal stack" if own_session else "the goal stack"
            raise HippoError(EMPTY, f"{which} is empty: nothing to pop", hint="hippoctl goal push <tag>")
        goal = active[-1]
        item = (await _items(conn, [goal], active))[0]
        now = clock.iso(clock.now())
        recalled = await goals.pop(conn, goal, outcome, now)
        if outcome is not None:
            marked = await mark_rows(ctx, store, conn, recalled, outcome == "good")
    store.mirrors.changed(marked)
    item.status, item.outcome, item.popped_at, item.lifting = "popped", outcome, now, False
    applied = [memory.id for memory in marked]
    pinned = [memory.id for memory in marked if memory.pinned]
    text = f"Popped goal {goal.tag} (#{goal.id}); {plural(item.recalled, 'memory')} recalled under it"
    if outcome is not None:
        word = "positive" if outcome == "good" else "negative"
        text += f"; applied {word} outcome to {plural(len(applied), 'memory')}"
        if pinned:
            text += " (pinned: strength stays 1.0 while pinned)"
    reply = GoalPopReply(goal=item, outcome=outcome, applied=len(applied), ids=applied, pinned=pinned)
    return reply, text
