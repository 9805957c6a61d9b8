"""One place that maps each request body type to its handler."""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.body import Body
from hippod.base.tenancy import REQUEST_TENANT
from hippod.calls.request import RequestContext
from hippod.daemon import door

Reply = tuple[Any, str]
# A handler takes the request's context and its body, of the one type it is listed under.
Handler = Callable[[RequestContext, Any], Awaitable[Reply]]

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
    """The reply of the handler for the request body's type."""
    body = ctx.request.body
    return await handler(type(body))(ctx, body)


def handler(kind: type[Body]) -> Handler:
    """The handler of a request body type, its module imported the first time a request needs it."""
    found = _LOADED.get(kind)
    if found is None:
        where = HANDLERS.get(kind)
        if where is None:
            raise AssertionError(f"no handler for {kind.__name__}")
        found = _LOADED[kind] = _function(*where)
    return found


def _function(module: str, name: str) -> Handler:
    """A handler by its module under hippod.handlers and its name."""
    found: Handler = getattr(importlib.import_module(f"hippod.handlers.{module}"), name)
    return found


async def _import(ctx: RequestContext, body: m.Import) -> Reply:
    """`import`: the agent-notes import for `--agents`, a file's import for every other format."""
    if body.format == "agents":
        return await _function("agents", "import_agents")(ctx, body)
    return await _function("imports", "import_")(ctx, body)


async def _context(ctx: RequestContext, body: m.Context) -> Reply:
    """`context`: the pinned memories alone for the per-prompt hook (`--pinned-only`), else the block."""
    if body.pinned_only:
        return await _function("pinned", "pinned_context")(ctx, body)
    return await _function("context", "context")(ctx, body)


# The verbs whose handler is chosen by a flag of the request.
CHOOSERS: dict[type[Body], Handler] = {m.Import: _import, m.Context: _context}
_LOADED: dict[type[Body], Handler] = dict(CHOOSERS)

# Every other request body type and its handler: (module under hippod.handlers, function). A daemon
# imports a handler's module when a request first needs it, so it starts without the modules behind
# verbs it may never serve (doctor, MCP, imports: about 190 modules). A body missing from both
# tables is a bug: tests/unit/test_unit_dispatch_table.py holds them to messages.RequestBody, and
# each handler to the body type it is listed under.
HANDLERS: dict[type[Body], tuple[str, str]] = {
    m.Ping: ("admin", "ping"),
    m.DaemonStatus: ("admin", "daemon_status"),
    m.Shutdown: ("admin", "shutdown"),
    m.Init: ("setup", "init"),
    m.Status: ("admin", "status"),
    m.Remember: ("memory", "remember"),
    m.Recall: ("recall", "recall"),
    m.Inspect: ("memory", "inspect"),
    m.Forget: ("memory", "forget"),
    m.Outcome: ("outcome", "outcome"),
    m.Embed: ("embed", "embed"),
    m.Graph: ("graph", "graph"),
    m.Supersede: ("lifecycle", "supersede"),
    m.Refine: ("refine", "refine"),
    m.Reject: ("lifecycle", "reject"),
    m.Rejections: ("lifecycle", "rejections_list"),
    m.Unreject: ("lifecycle", "unreject"),
    m.Invalidate: ("lifecycle", "invalidate"),
    m.Decide: ("decisions", "decide"),
    m.DecideList: ("decisions", "decide_list"),
    m.DecideGet: ("decisions", "decide_get"),
    m.DecideClose: ("decisions", "decide_close"),
    m.Dormant: ("dormant", "dormant"),
    m.DormantRestore: ("dormant", "restore"),
    m.DormantForget: ("dormant", "forget"),
    m.AuditList: ("audit", "audit_list"),
    m.AuditPrune: ("audit", "audit_prune"),
    m.Sleep: ("sleep", "sleep"),
    m.Conflicts: ("conflicts", "conflicts"),
    m.Resolve: ("conflicts", "resolve"),
    m.Promote: ("sharing", "promote"),
    m.Share: ("sharing", "share"),
    m.Peers: ("sharing", "peers"),
    m.Sync: ("sharing", "sync"),
    m.TeamJoin: ("team", "team_join"),
    m.TeamLeave: ("team", "team_leave"),
    m.TeamStatus: ("team", "team_status"),
    m.TeamShare: ("team", "team_share"),
    m.TeamMarks: ("team_feed", "team_marks"),
    m.TeamChanges: ("team_feed", "team_changes"),
    m.Workspaces: ("daily", "workspaces"),
    m.DailyRunner: ("daily", "daily_runner"),
    m.Export: ("imports", "export"),
    m.Backup: ("backup", "backup"),
    m.Restore: ("backup", "restore"),
    m.Capture: ("capture", "capture"),
    m.LearnGit: ("learn", "learn_git"),
    m.WatchFailure: ("watch", "watch_failure"),
    m.CaptureError: ("failures", "capture_error"),
    m.Failures: ("failures", "failures"),
    m.SnapshotSave: ("continuity", "snapshot_save"),
    m.SnapshotShow: ("continuity", "snapshot_show"),
    m.SnapshotClear: ("continuity", "snapshot_clear"),
    m.SessionLog: ("continuity", "session_log"),
    m.SessionShow: ("continuity", "session_show"),
    m.SessionLatest: ("continuity", "session_latest"),
    m.SessionResume: ("continuity", "session_resume"),
    m.HandoffCreate: ("continuity", "handoff_create"),
    m.HandoffLatest: ("continuity", "handoff_latest"),
    m.HandoffShow: ("continuity", "handoff_show"),
    m.CurrentShow: ("continuity", "current_show"),
    m.WmPush: ("working_memory", "wm_push"),
    m.WmRead: ("working_memory", "wm_read"),
    m.WmClear: ("working_memory", "wm_clear"),
    m.WmFlush: ("working_memory", "wm_flush"),
    m.GoalPush: ("goals", "goal_push"),
    m.GoalPop: ("goals", "goal_pop"),
    m.GoalList: ("goals", "goal_list"),
    m.PreCompact: ("compaction", "pre_compact"),
    m.PostCompact: ("compaction", "post_compact"),
    m.CompactResume: ("compaction", "compact_resume"),
    m.SessionEnd: ("session_hooks", "session_end"),
    m.LastSleep: ("session_hooks", "last_sleep"),
    m.Tokens: ("tokens", "tokens"),
    m.Setup: ("setup", "setup"),
    m.HookList: ("hooks_install", "hook_list"),
    m.HookInstall: ("hooks_install", "hook_install"),
    m.HookUninstall: ("hooks_install", "hook_uninstall"),
    m.ServiceInstall: ("service", "install_service"),
    m.ServiceUninstall: ("service", "uninstall_service"),
    m.Doctor: ("doctor", "doctor"),
    m.SupportBundle: ("doctor", "support_bundle"),
    m.McpToolCall: ("mcp_tools", "mcp_tool_call"),
    m.Serve: ("serve", "serve"),
    m.DashboardStart: ("dashboard", "dashboard_start"),
    m.DashboardStop: ("dashboard", "dashboard_stop"),
    m.AuthCreate: ("auth_keys", "auth_create"),
    m.AuthList: ("auth_keys", "auth_list"),
    m.AuthRevoke: ("auth_keys", "auth_revoke"),
    m.AuthToken: ("auth_keys", "auth_token"),
    m.SlackBackfill: ("slack", "slack_backfill"),
    m.DeadLetters: ("dead_letters", "dead_letters"),
    m.DeadLetterReplay: ("dead_letters", "replay_letters"),
    mc.CardCreate: ("cards", "create"),
    mc.CardShow: ("cards", "show"),
    mc.CardList: ("cards", "list_cards"),
    mc.CardComment: ("cards", "comment"),
    mc.CardDepend: ("cards", "depend"),
    mc.CardClaim: ("card_runs", "claim"),
    mc.CardHeartbeat: ("card_runs", "heartbeat"),
    mc.CardBlock: ("card_runs", "block"),
    mc.CardReview: ("card_runs", "review"),
    mc.CardComplete: ("card_runs", "complete"),
    mc.CardReclaim: ("card_runs", "reclaim"),
}
