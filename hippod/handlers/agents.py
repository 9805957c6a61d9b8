"""`import --agents [--dry-run]`: read agents' own memory notes now (ingest.md §4)."""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_agents import AgentImportReply, AgentToolReport
from hippoctl.protocol.wording import DRY_RUN
from hippod.agentnotes.importer import import_project
from hippod.calls.request import RequestContext


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def _skips(skipped: dict[str, int]) -> str:
    total = sum(skipped.values())
    detail = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items()))
    return f"{total}" + (f" ({detail})" if detail else "")


def _tool_lines(report: AgentToolReport, dry_run: bool) -> list[str]:
    state = "exists" if report.home_exists else "missing"
    lines = [f"{report.tool}: {_home(report.home)} ({state})"]
    lines += [f"  found {_home(folder)}" for folder in report.folders]
    verb = "would add" if dry_run else "added"
    lines.append(
        f"  {verb} {report.added}, replace {report.replaced}, dormant {report.dormant}, "
        f"skip {_skips(report.skipped)}, unchanged {report.unchanged}"
    )
    return lines


async def import_agents(ctx: RequestContext, body: m.Import) -> tuple[AgentImportReply, str]:
    """Run the agent-notes import for the request's folder; a dry run writes nothing."""
    report = await import_project(
        ctx.state, ctx.request.cwd, ctx.request.env, dry_run=body.dry_run, tenant=ctx.tenant, actor=ctx.actor
    )
    ctx.warnings.extend(report.warnings)
    reply = AgentImportReply(
        dry_run=body.dry_run,
        tools=report.tools,
        added=sum(t.added for t in report.tools),
        replaced=sum(t.replaced for t in report.tools),
        dormant=sum(t.dormant for t in report.tools),
        skipped=sum(sum(t.skipped.values()) for t in report.tools),
        warnings=report.warnings,
    )
    if not report.tools:
        none = "No agent tools enabled (HIPPO_AGENT_MEMORY_TOOLS or agentMemories.tools)."
        return reply, f"{DRY_RUN}\n{none}" if body.dry_run else none
    lines: list[str] = []
    for tool in report.tools:
        lines += _tool_lines(tool, body.dry_run)
    head = DRY_RUN if body.dry_run else "Imported agent notes:"
    lines.insert(0, head)
    lines.append(
        f"{'Would add' if body.dry_run else 'Added'} {reply.added}, replaced {reply.replaced}, "
        f"dormant {reply.dormant}, skipped {reply.skipped}"
    )
    return reply, "\n".join(lines)
