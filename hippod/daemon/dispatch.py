"""One place that maps each request body type to its handler."""

from __future__ import annotations

import asyncio
import importlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.body import Body
from hippoctl.protocol.errors import DAEMON_OUTDATED
from hippod.base.errors import HippoError
from hippod.base.tenancy import REQUEST_TENANT
from hippod.calls.request import RequestContext
from hippod.daemon import door
from hippod.handlers import admin

log = logging.getLogger("hippod.server")
# The thread that imports handlers' modules (`handler`); it exits with the daemon when idle.
_IMPORTS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hippod-imports")

Reply = tuple[Any, str]
# A handler takes the request's context and its body, of the one type it is listed under.
Handler = Callable[[RequestContext, Any], Awaitable[Reply]]
# Where a handler is: (its module under hippod.handlers, its name).
Where = tuple[str, str]

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
    return await (await handler(_where(body)))(ctx, body)


def _where(body: Body) -> Where:
    """Where the handler of this request is."""
    if isinstance(body, m.Import):
        return CHOICES[m.Import][0 if body.format == "agents" else 1]
    if isinstance(body, m.Context):
        return CHOICES[m.Context][0 if body.pinned_only else 1]
    where = HANDLERS.get(type(body))
    if where is None:
        raise AssertionError(f"no handler for {type(body).__name__}")
    return where


async def handler(where: Where) -> Handler:
    """The handler at `where`, its module imported the first time a request needs it: in a thread
    of its own, as the loop serves on (the MCP tools' module takes about 40 ms)."""
    found = _LOADED.get(where)
    if found is None:
        # Not the default executor's threads: a mirror heal or a sleep can hold them all for minutes,
        # and the first request of a verb would wait behind that work. One thread imports in turn.
        loading = asyncio.get_running_loop().run_in_executor(_IMPORTS, _function, *where)
        found = _LOADED[where] = await loading
    return found


def _function(module: str, name: str) -> Handler:
    """A handler by its module under hippod.handlers and its name."""
    try:
        found: Handler = getattr(importlib.import_module(f"hippod.handlers.{module}"), name)
    except (ImportError, AttributeError, SyntaxError) as exc:
        # Its code on disk is not what the daemon started with: an upgrade in place, a `git pull`,
        # or one still being written. The message names modules and names only, no memory text.
        log.warning("the handler %s.%s does not load: %s: %s", module, name, type(exc).__name__, exc)
        raise HippoError(
            DAEMON_OUTDATED,
            f"hippod cannot load its handler for this request ({type(exc).__name__}: {exc}):"
            " the installed hippod changed since this daemon started",
            hint="hippoctl daemon restart",
        ) from None
    return found


# The verbs whose handler a flag of the request chooses: (the handler when it is set, else).
CHOICES: dict[type[Body], tuple[Where, Where]] = {
    # `import --agents`: the agent-notes import; a file's import for every other format.
    m.Import: (("agents", "import_agents"), ("imports", "import_")),
    # `context --pinned-only`, the per-prompt hook: the pinned memories alone; else the block.
    m.Context: (("pinned", "pinned_context"), ("context", "context")),
}

# Every other request body type and its handler. A daemon imports a handler's module when a request
# first needs it, so it starts without the modules behind verbs it may never serve (doctor, MCP,
# imports: about 190 modules). A body missing from both tables is a bug:
# tests/unit/test_unit_dispatch_table.py holds them to messages.RequestBody, and each handler to
# the body type it is listed under.
HANDLERS: dict[type[Body], Where] = {
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

# Ping, DaemonStatus and Shutdown answer however the code on disk has changed since the daemon
# started (daemon.md §7: `daemon status|stop|restart` work between any versions): their module is
# loaded with the daemon.
_LOADED: dict[Where, Handler] = {
    where: getattr(admin, where[1]) for where in HANDLERS.values() if where[0] == "admin"
}
