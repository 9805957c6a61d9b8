"""One place that maps each request body type to its handler."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.body import Body
from hippod.base.tenancy import REQUEST_TENANT
from hippod.calls.request import RequestContext
from hippod.daemon import door
from hippod.handlers import (
    admin,
    agents,
    audit,
    auth_keys,
    backup,
    card_runs,
    cards,
    compaction,
    conflicts,
    continuity,
    daily,
    dashboard,
    dead_letters,
    decisions,
    doctor,
    dormant,
    embed,
    failures,
    goals,
    graph,
    hooks_install,
    imports,
    learn,
    lifecycle,
    mcp_tools,
    memory,
    outcome,
    pinned,
    recall,
    refine,
    serve,
    service,
    session_hooks,
    setup,
    sharing,
    slack,
    sleep,
    team,
    team_feed,
    watch,
    working_memory,
)
from hippod.handlers import capture as capture_handler
from hippod.handlers import context as context_handler
from hippod.handlers import tokens as tokens_handler

Reply = tuple[Any, str]
# A handler takes the request's context and its body, of the one type it is listed under.
Handler = Callable[[RequestContext, Any], Awaitable[Reply]]
_B = TypeVar("_B", bound=Body)

# Reads that merge the project and global stores: one that met a store gone corrupt since it was
# opened runs again once that store is set aside, and answers from the other (request.read_stores).
_MERGED_READS = (m.Recall, m.Context, m.Status)


async def dispatch(ctx: RequestContext) -> Reply:
    """Run the handler for this request's body; returns (reply data, text).

    A store found corrupt on the way is set aside and named (StoreRegistry.corrupt_error). A team
    server answers a verb it does not serve (its body's `on_team`) with `not_on_team_store`.
    """
    door.check(ctx.request)
    # A verb whose body says it needs a laptop's SQLite store is named, not run, on a team server.
    ctx.refuse_off_team(ctx.request.body.team_refusal())
    REQUEST_TENANT.set(ctx.tenant)
    # At most once per store a merged read has: project, then global.
    for _ in range(2):
        try:
            return await _run(ctx)
        except sqlite3.DatabaseError as exc:
            named = await ctx.state.registry.corrupt_error(exc)
            if named is None:
                raise
            # Without a store set aside ("store" in details), a second run would meet the same damage.
            if not isinstance(ctx.request.body, _MERGED_READS) or "store" not in named.details:
                raise named from None
        ctx.warnings.clear()
        ctx.exit_code = 0
    return await _run(ctx)


async def _run(ctx: RequestContext) -> Reply:
    """The reply of the handler HANDLERS lists for the request body's type."""
    body = ctx.request.body
    handler = HANDLERS.get(type(body))
    if handler is None:
        raise AssertionError(f"no handler for {type(body).__name__}")
    return await handler(ctx, body)


async def _import(ctx: RequestContext, body: m.Import) -> Reply:
    """`import`: the agent-notes import for `--agents`, a file's import for every other format."""
    if body.format == "agents":
        return await agents.import_agents(ctx, body)
    return await imports.import_(ctx, body)


async def _context(ctx: RequestContext, body: m.Context) -> Reply:
    """`context`: the pinned memories alone for the per-prompt hook (`--pinned-only`), else the block."""
    if body.pinned_only:
        return await pinned.pinned_context(ctx, body)
    return await context_handler.context(ctx, body)


def _entry(
    kind: type[_B], handler: Callable[[RequestContext, _B], Awaitable[Reply]]
) -> tuple[type[Body], Handler]:
    """One row of HANDLERS; the type checker holds the handler to the body type it is listed under."""
    return kind, handler


# Every request body type and the handler that answers it; a body missing here is a bug
# (tests/unit/test_unit_dispatch_table.py holds it to messages.RequestBody).
HANDLERS: dict[type[Body], Handler] = dict(
    [
        _entry(m.Ping, admin.ping),
        _entry(m.DaemonStatus, admin.daemon_status),
        _entry(m.Shutdown, admin.shutdown),
        _entry(m.Init, setup.init),
        _entry(m.Status, admin.status),
        _entry(m.Remember, memory.remember),
        _entry(m.Recall, recall.recall),
        _entry(m.Inspect, memory.inspect),
        _entry(m.Forget, memory.forget),
        _entry(m.Outcome, outcome.outcome),
        _entry(m.Embed, embed.embed),
        _entry(m.Graph, graph.graph),
        _entry(m.Supersede, lifecycle.supersede),
        _entry(m.Refine, refine.refine),
        _entry(m.Reject, lifecycle.reject),
        _entry(m.Rejections, lifecycle.rejections_list),
        _entry(m.Unreject, lifecycle.unreject),
        _entry(m.Invalidate, lifecycle.invalidate),
        _entry(m.Decide, decisions.decide),
        _entry(m.DecideList, decisions.decide_list),
        _entry(m.DecideGet, decisions.decide_get),
        _entry(m.DecideClose, decisions.decide_close),
        _entry(m.Dormant, dormant.dormant),
        _entry(m.DormantRestore, dormant.restore),
        _entry(m.DormantForget, dormant.forget),
        _entry(m.AuditList, audit.audit_list),
        _entry(m.AuditPrune, audit.audit_prune),
        _entry(m.Sleep, sleep.sleep),
        _entry(m.Conflicts, conflicts.conflicts),
        _entry(m.Resolve, conflicts.resolve),
        _entry(m.Promote, sharing.promote),
        _entry(m.Share, sharing.share),
        _entry(m.Peers, sharing.peers),
        _entry(m.Sync, sharing.sync),
        _entry(m.TeamJoin, team.team_join),
        _entry(m.TeamLeave, team.team_leave),
        _entry(m.TeamStatus, team.team_status),
        _entry(m.TeamShare, team.team_share),
        _entry(m.TeamMarks, team_feed.team_marks),
        _entry(m.TeamChanges, team_feed.team_changes),
        _entry(m.Workspaces, daily.workspaces),
        _entry(m.DailyRunner, daily.daily_runner),
        _entry(m.Import, _import),
        _entry(m.Export, imports.export),
        _entry(m.Backup, backup.backup),
        _entry(m.Restore, backup.restore),
        _entry(m.Capture, capture_handler.capture),
        _entry(m.LearnGit, learn.learn_git),
        _entry(m.WatchFailure, watch.watch_failure),
        _entry(m.CaptureError, failures.capture_error),
        _entry(m.Failures, failures.failures),
        _entry(m.SnapshotSave, continuity.snapshot_save),
        _entry(m.SnapshotShow, continuity.snapshot_show),
        _entry(m.SnapshotClear, continuity.snapshot_clear),
        _entry(m.SessionLog, continuity.session_log),
        _entry(m.SessionShow, continuity.session_show),
        _entry(m.SessionLatest, continuity.session_latest),
        _entry(m.SessionResume, continuity.session_resume),
        _entry(m.HandoffCreate, continuity.handoff_create),
        _entry(m.HandoffLatest, continuity.handoff_latest),
        _entry(m.HandoffShow, continuity.handoff_show),
        _entry(m.CurrentShow, continuity.current_show),
        _entry(m.WmPush, working_memory.wm_push),
        _entry(m.WmRead, working_memory.wm_read),
        _entry(m.WmClear, working_memory.wm_clear),
        _entry(m.WmFlush, working_memory.wm_flush),
        _entry(m.GoalPush, goals.goal_push),
        _entry(m.GoalPop, goals.goal_pop),
        _entry(m.GoalList, goals.goal_list),
        _entry(m.PreCompact, compaction.pre_compact),
        _entry(m.PostCompact, compaction.post_compact),
        _entry(m.CompactResume, compaction.compact_resume),
        _entry(m.SessionEnd, session_hooks.session_end),
        _entry(m.LastSleep, session_hooks.last_sleep),
        _entry(m.Context, _context),
        _entry(m.Tokens, tokens_handler.tokens),
        _entry(m.Setup, setup.setup),
        _entry(m.HookList, hooks_install.hook_list),
        _entry(m.HookInstall, hooks_install.hook_install),
        _entry(m.HookUninstall, hooks_install.hook_uninstall),
        _entry(m.ServiceInstall, service.install_service),
        _entry(m.ServiceUninstall, service.uninstall_service),
        _entry(m.Doctor, doctor.doctor),
        _entry(m.SupportBundle, doctor.support_bundle),
        _entry(m.McpToolCall, mcp_tools.mcp_tool_call),
        _entry(m.Serve, serve.serve),
        _entry(m.DashboardStart, dashboard.dashboard_start),
        _entry(m.DashboardStop, dashboard.dashboard_stop),
        _entry(m.AuthCreate, auth_keys.auth_create),
        _entry(m.AuthList, auth_keys.auth_list),
        _entry(m.AuthRevoke, auth_keys.auth_revoke),
        _entry(m.AuthToken, auth_keys.auth_token),
        _entry(m.SlackBackfill, slack.slack_backfill),
        _entry(m.DeadLetters, dead_letters.dead_letters),
        _entry(m.DeadLetterReplay, dead_letters.replay_letters),
        _entry(mc.CardCreate, cards.create),
        _entry(mc.CardShow, cards.show),
        _entry(mc.CardList, cards.list_cards),
        _entry(mc.CardComment, cards.comment),
        _entry(mc.CardDepend, cards.depend),
        _entry(mc.CardClaim, card_runs.claim),
        _entry(mc.CardHeartbeat, card_runs.heartbeat),
        _entry(mc.CardBlock, card_runs.block),
        _entry(mc.CardReview, card_runs.review),
        _entry(mc.CardComplete, card_runs.complete),
        _entry(mc.CardReclaim, card_runs.reclaim),
    ]
)
