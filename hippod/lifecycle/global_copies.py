"""A project memory's copies in the global store (what `share`, `promote` and auto-share made of it),
for `forget` and `reject` in the project to say what became of them and to remove them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.model.share import AUTO_SHARED, reaches_every_project
from hippod.store.roots import DB_NAME
from hippod.store.stores import Store


async def _global(ctx: RequestContext) -> Store | None:
    """The global store, if it exists: looking for copies never creates it."""
    registry = ctx.state.registry
    if not os.path.isfile(os.path.join(registry.global_root, DB_NAME)):
        return None
    return await ctx.global_store()


async def of(ctx: RequestContext, store: Store, text: str) -> list[Memory]:
    """The live copies of `text` this project store put in the global store (same text, this
    project as origin, made by share, promote or auto-share); none for any other store."""
    if store.kind != "project" or store.team:
        return []
    global_store = await _global(ctx)
    if global_store is None:
        return []
    found = await global_store.rows.with_digest(global_store.db.reader, ctx.tenant, content_digest(text))
    return [
        c
        for c in found
        if c.origin_project == store.project and reaches_every_project(c.source) and c.kind != "archived"
    ]


def auto_made(copy: Memory) -> bool:
    """A copy auto-share made, which nobody asked for."""
    return copy.source.startswith(AUTO_SHARED)


async def remove(ctx: RequestContext, copies: list[Memory], original: str | None, op: str) -> list[str]:
    """Delete these global copies in one transaction, each audited `forget` with the project's memory
    and the verb that took it (`op`); returns the ids deleted."""
    if not copies:
        return []
    global_store = await ctx.global_store()
    now = clock.iso(clock.now())
    gone: list[str] = []
    async with global_store.db.transaction() as conn:
        for copy in copies:
            if await global_store.rows.delete(conn, ctx.tenant, copy.id):
                gone.append(copy.id)
                await global_store.rows.audit(
                    conn, ts=now, tenant=ctx.tenant, actor=ctx.actor, op="forget", target=copy.id,
                    metadata={"copy_of": original, "with": op},
                )  # fmt: skip
    await global_store.mirrors.write_now(gone)
    return gone


@dataclass
class Settled:
    """What became of a project memory's global copies once the project's own change is made."""

    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    problem: str | None = None  # why the global store could not be looked at


async def settle(
    ctx: RequestContext,
    store: Store,
    text: str,
    original: str | None,
    op: str,
    take: Callable[[Memory], bool],
) -> Settled:
    """Remove the copies of `text` this project put in the global store that `take` picks, keeping the
    others. The project's change is committed by now: a global store that fails (damaged, a full
    disk) is said in the reply, not raised as if the change had not been made."""
    try:
        copies = await of(ctx, store, text)
        removed = await remove(ctx, [c for c in copies if take(c)], original, op)
    except (HippoError, sqlite3.Error, OSError) as exc:
        reason = exc.message if isinstance(exc, HippoError) else f"{type(exc).__name__}: {exc}"
        return Settled(problem=f"the global store could not be checked for copies of it ({reason})")
    return Settled(removed, [c.id for c in copies if c.id not in removed])
