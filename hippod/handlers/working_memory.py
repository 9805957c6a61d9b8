"""`wm push|read|clear|flush`: the bounded working-memory scratchpad (continuity.md §5)."""

from __future__ import annotations

from collections.abc import Sequence

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_continuity import WmItem, WmReply
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.continuity import render
from hippod.store.sqlite import rejections
from hippod.store.sqlite import working_memory as wm
from hippod.store.sqlite.working_memory import Entry
from hippod.store.stores import sqlite_only


def _scope(value: str) -> str:
    scope = value.strip()
    if not scope:
        raise HippoError("usage", "--scope is empty")
    return scope


def _session(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


def _item(e: Entry) -> WmItem:
    return WmItem(e.id, e.scope, e.session_id, e.importance, e.content, e.created_at)


def _lines(entries: Sequence[Entry], scope: str) -> str:
    if not entries:
        return f"No working memory in scope {scope}."
    return "\n".join(f"- [{e.importance:.2f}] {render.one_line(e.content)}" for e in entries)


async def wm_push(ctx: RequestContext, body: m.WmPush) -> tuple[WmReply, str]:
    scope = _scope(body.scope)
    content = body.content.strip()
    if not content:
        raise HippoError("usage", "--content is empty")
    if not 0.0 <= body.importance <= 1.0:
        raise HippoError("usage", "--importance must be between 0 and 1")
    session = _session(body.session) or ctx.request.env.get("HIPPO_SESSION_ID", "").strip() or None
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        if await rejections.refuses(conn, ctx.tenant, content):
            raise HippoError("rejected_value", "this text was rejected earlier and cannot be stored again")
        new_id, evicted = await wm.push(
            conn,
            ctx.tenant,
            scope=scope,
            content=content,
            importance=body.importance,
            session_id=session,
            now=now,
        )
    entry = Entry(new_id, scope, session, body.importance, content, now)
    text = f"Pushed #{new_id} to working memory scope {scope}"
    if evicted:
        text += f" (evicted {evicted})"
    return WmReply(scope, [_item(entry)], evicted=evicted), text


async def wm_read(ctx: RequestContext, body: m.WmRead) -> tuple[WmReply, str]:
    scope = _scope(body.scope)
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    entries = await wm.read(store.db.reader, ctx.tenant, scope)
    return WmReply(scope, [_item(e) for e in entries]), _lines(entries, scope)


async def _remove(ctx: RequestContext, scope_arg: str, session_arg: str | None) -> tuple[str, list[Entry]]:
    scope = _scope(scope_arg)
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    async with store.db.transaction() as conn:
        removed = await wm.remove(conn, ctx.tenant, scope, _session(session_arg))
    return scope, removed


async def wm_clear(ctx: RequestContext, body: m.WmClear) -> tuple[WmReply, str]:
    scope, removed = await _remove(ctx, body.scope, body.session)
    text = f"Cleared {plural(len(removed), 'entry')} from working memory scope {scope}"
    return WmReply(scope, removed=len(removed)), text


async def wm_flush(ctx: RequestContext, body: m.WmFlush) -> tuple[WmReply, str]:
    """Clear at the end of a session, printing what goes so the host can keep it."""
    scope, removed = await _remove(ctx, body.scope, body.session)
    return WmReply(scope, [_item(e) for e in removed], removed=len(removed)), _lines(removed, scope)
