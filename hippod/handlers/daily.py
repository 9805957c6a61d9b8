"""`workspaces` and `daily-runner`: the daily run and its registry (sleep.md §10)."""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import DailyRunnerReply, WorkspaceEntry, WorkspacesReply
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.store import workspaces as registry


def _entries(global_root: str) -> list[WorkspaceEntry]:
    try:
        paths = registry.read(global_root)
    except registry.RegistryUnreadable as exc:
        raise HippoError("bad_state", f"{exc}; fix or delete it") from None
    found = (registry.describe(p) for p in paths)
    return [WorkspaceEntry(path=w.path, exists=w.exists, has_store=w.has_store) for w in found]


def _list_text(entries: list[WorkspaceEntry]) -> str:
    if not entries:
        return "No workspaces registered. Add one with: hippoctl workspaces add <dir>"
    lines = [f"{plural(len(entries), 'registered workspace')}:"]
    for entry in entries:
        note = "" if entry.has_store else "  (missing)" if not entry.exists else "  (no hippo store)"
        lines.append(f"  {entry.path}{note}")
    return "\n".join(lines)


async def workspaces(ctx: RequestContext, body: m.Workspaces) -> tuple[WorkspacesReply, str]:
    """List the registry, or add or remove one directory (relative to the client's cwd)."""
    root = ctx.state.registry.global_root
    if body.action == "list":
        entries = _entries(root)
        reply = WorkspacesReply(action="list", path=None, changed=False, workspaces=entries)
        return reply, _list_text(entries)
    if body.action not in ("add", "remove") or not body.path:
        raise HippoError("usage", "workspaces takes: list | add <dir> | remove <dir>")
    path = registry.normalise(body.path, ctx.request.cwd)
    registered = [e.path for e in _entries(root)]  # refuses to touch a registry it cannot read
    literal = os.path.abspath(os.path.join(ctx.request.cwd, body.path)).replace("\\", "/")
    if body.action == "remove" and path not in registered and literal in registered:
        path = literal  # a registered path under a symlink that no longer resolves the same way
    if body.action == "add":
        if not os.path.isdir(path):
            raise HippoError("not_found", f"no such directory: {path}")
        changed = registry.add(root, path)
        text = f"Added {path} to the workspace registry" if changed else f"{path} is already registered"
        if not registry.describe(path).has_store:
            ctx.warnings.append(
                f"(no hippo store in {path} yet; the daily run skips it until `hippoctl init`)"
            )
    else:
        changed = registry.remove(root, path)
        if not changed:
            raise HippoError("not_found", f"not a registered workspace: {path}")
        text = f"Removed {path} from the workspace registry"
    reply = WorkspacesReply(action=body.action, path=path, changed=changed, workspaces=_entries(root))
    return reply, text


async def daily_runner(ctx: RequestContext, body: m.DailyRunner) -> tuple[DailyRunnerReply, str]:
    """Run the daily job now, or join the one going, streaming its lines; the text is the summary."""
    runner = ctx.state.daily
    if runner is None:
        raise HippoError("bad_state", "the daily runner is not set up in this daemon")
    if runner.running:
        await ctx.say("(a daily run is already going; joining it)")
    result, joined = await runner.run_or_join("manual", ctx.say)
    return DailyRunnerReply(joined=joined, run=result), result.summary
