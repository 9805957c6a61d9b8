"""`hook list|install|uninstall <target>` (integrations.md §3-§8).

The project is the request's cwd; the agents' homes come from the daemon's own environment.
"""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_hooks_install import HookChangeReply, HookListReply, HookTarget
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.integrations import files, hookjson, targets
from hippod.integrations.report import Report


async def hook_list(ctx: RequestContext, body: m.HookList) -> tuple[HookListReply, str]:
    project = ctx.request.cwd
    rows = [targets.status(t, project, body.command, env=os.environ) for t in targets.TARGETS]
    return HookListReply(project=project, targets=rows), list_text(project, rows)


LIST_HEADER = ("TARGET", "DETECTED", "STATE", "FILE", "PATH")


def list_text(project: str, rows: list[HookTarget]) -> str:
    """`hook list`'s table: a row per target, then a row per file it uses, under one header row."""
    table: list[tuple[str, ...]] = [LIST_HEADER]
    for row in rows:
        table.append((row.target, "yes" if row.detected else "no", row.state))
        for item in row.files:
            detail = f" ({item.detail})" if item.detail else ""
            table.append(("", "", item.state, item.kind, f"{item.path}{detail}"))
    widths = [max(len(cells[i]) for cells in table if len(cells) > i) for i in range(len(LIST_HEADER))]
    lines = [f"Agent targets for {project}:"]
    for cells in table:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])]
        lines.append("  ".join([*padded, cells[-1]]).rstrip())
    return "\n".join(lines)


def _reply(ctx: RequestContext, target: str, action: str, report: Report) -> tuple[HookChangeReply, str]:
    ctx.warnings.extend(report.warnings)
    reply = HookChangeReply(target=target, action=action, lines=report.lines, warnings=report.warnings)
    if report.lines:
        return reply, "\n".join(report.lines)
    return reply, f"{target}: nothing changed"


def _check(target: str) -> None:
    """Fail the request, before anything is written, when the target's hooks file is not JSON."""
    try:
        targets.check(target, os.environ)
    except hookjson.SettingsError as exc:
        raise HippoError("unparseable", f"{exc}; nothing changed") from None


async def hook_install(ctx: RequestContext, body: m.HookInstall) -> tuple[HookChangeReply, str]:
    root = ctx.state.registry.global_root
    _check(body.target)
    try:
        report = targets.install(body.target, ctx.request.cwd, body.command, global_root=root, env=os.environ)
    except OSError as exc:
        raise files.write_failed(exc) from exc
    return _reply(ctx, body.target, "install", report)


async def hook_uninstall(ctx: RequestContext, body: m.HookUninstall) -> tuple[HookChangeReply, str]:
    root = ctx.state.registry.global_root
    _check(body.target)
    try:
        report = targets.uninstall(body.target, ctx.request.cwd, global_root=root, env=os.environ)
    except OSError as exc:
        raise files.write_failed(exc) from exc
    return _reply(ctx, body.target, "uninstall", report)
