"""`learn --git`: lessons from commit subjects, and invalidation on migrations (ingest.md §5)."""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_capture import LearnGitReply
from hippoctl.protocol.wording import agree, plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.ingest.gitrun import LearnResult, learn_from_git, repo_root
from hippod.store.roots import DB_NAME, PROJECT_DIR
from hippod.store.stores import SqliteStore, sqlite_only


async def _destination(ctx: RequestContext, root: str) -> SqliteStore:
    """A repository with its own store receives its lessons (unless --global); others go to the
    request's target store."""
    own = os.path.join(root, PROJECT_DIR)
    if not ctx.request.global_store and os.path.isfile(os.path.join(own, DB_NAME)):
        store = await ctx.state.registry.open(own)
    else:
        store = await ctx.target_store(write=True)
    return sqlite_only(store, ctx.verb)


async def learn_git(ctx: RequestContext, body: m.LearnGit) -> tuple[LearnGitReply, str]:
    if body.days < 1:
        raise HippoError("usage", "--days must be 1 or more")
    # Every repository is checked before anything is read or written.
    roots = list(dict.fromkeys([await repo_root(path) for path in body.repos or [ctx.request.cwd]]))
    groups: dict[str, tuple[SqliteStore, list[str]]] = {}
    for root in roots:
        store = await _destination(ctx, root)
        groups.setdefault(store.root, (store, []))[1].append(root)

    async def say(line: str) -> None:
        await ctx.say(line, "err")

    total = LearnResult()
    for store, repos in groups.values():
        total.add(
            await learn_from_git(ctx.state, store, repos, body.days, say, tenant=ctx.tenant, actor=ctx.actor)
        )
    reply = LearnGitReply(
        days=body.days,
        repos=total.repos,
        commits=total.commits,
        learned=len(total.lessons),
        skipped=total.skipped,
        rejected=total.rejected,
        lessons=total.lessons,
        ids=total.ids,
        invalidated=total.invalidated,
    )
    if total.rejected:
        were = agree(total.rejected, "was")
        ctx.warnings.append(f"{plural(total.rejected, 'lesson')} {were} rejected earlier and not stored")
    return reply, "\n".join(total.lines())
