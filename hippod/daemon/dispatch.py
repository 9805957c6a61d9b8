"""One place that maps each request body type to its handler."""

from __future__ import annotations

import sqlite3
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
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
    decisions,
    doctor,
    dormant,
    embed,
    failures,
    hooks_install,
    imports,
    learn,
    lifecycle,
    mcp_tools,
    memory,
    outcome,
    pinned,
    recall,
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

# Reads that merge the project and global stores: one that met a store gone corrupt since it was
# opened runs again once that store is set aside, and answers from the other (request.read_stores).
_MERGED_READS = (m.Recall, m.Context, m.Status)


async def dispatch(ctx: RequestContext) -> tuple[Any, str]:
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
            return await _route(ctx)
        except sqlite3.DatabaseError as exc:
            named = await ctx.state.registry.corrupt_error(exc)
            if named is None:
                raise
            # Without a store set aside ("store" in details), a second run would meet the same damage.
            if not isinstance(ctx.request.body, _MERGED_READS) or "store" not in named.details:
                raise named from None
        ctx.warnings.clear()
        ctx.exit_code = 0
    return await _route(ctx)


async def _route(ctx: RequestContext) -> tuple[Any, str]:
    match ctx.request.body:
        case m.Ping() as body:
            return await admin.ping(ctx, body)
        case m.DaemonStatus() as body:
            return await admin.daemon_status(ctx, body)
        case m.Shutdown() as body:
            return await admin.shutdown(ctx, body)
        case m.Init() as body:
            return await setup.init(ctx, body)
        case m.Status() as body:
            return await admin.status(ctx, body)
        case m.Remember() as body:
            return await memory.remember(ctx, body)
        case m.Recall() as body:
            return await recall.recall(ctx, body)
        case m.Inspect() as body:
            return await memory.inspect(ctx, body)
        case m.Forget() as body:
            return await memory.forget(ctx, body)
        case m.Outcome() as body:
            return await outcome.outcome(ctx, body)
        case m.Embed() as body:
            return await embed.embed(ctx, body)
        case m.Supersede() as body:
            return await lifecycle.supersede(ctx, body)
        case m.Reject() as body:
            return await lifecycle.reject(ctx, body)
        case m.Rejections() as body:
            return await lifecycle.rejections_list(ctx, body)
        case m.Unreject() as body:
            return await lifecycle.unreject(ctx, body)
        case m.Invalidate() as body:
            return await lifecycle.invalidate(ctx, body)
        case m.Decide() as body:
            return await decisions.decide(ctx, body)
        case m.DecideList() as body:
            return await decisions.decide_list(ctx, body)
        case m.DecideGet() as body:
            return await decisions.decide_get(ctx, body)
        case m.DecideClose() as body:
            return await decisions.decide_close(ctx, body)
        case m.Dormant() as body:
            return await dormant.dormant(ctx, body)
        case m.DormantRestore() as body:
            return await dormant.restore(ctx, body)
        case m.DormantForget() as body:
            return await dormant.forget(ctx, body)
        case m.AuditList() as body:
            return await audit.audit_list(ctx, body)
        case m.AuditPrune() as body:
            return await audit.audit_prune(ctx, body)
        case m.Sleep() as body:
            return await sleep.sleep(ctx, body)
        case m.Conflicts() as body:
            return await conflicts.conflicts(ctx, body)
        case m.Resolve() as body:
            return await conflicts.resolve(ctx, body)
        case m.Promote() as body:
            return await sharing.promote(ctx, body)
        case m.Share() as body:
            return await sharing.share(ctx, body)
        case m.Peers() as body:
            return await sharing.peers(ctx, body)
        case m.Sync() as body:
            return await sharing.sync(ctx, body)
        case m.TeamJoin() as body:
            return await team.team_join(ctx, body)
        case m.TeamLeave() as body:
            return await team.team_leave(ctx, body)
        case m.TeamStatus() as body:
            return await team.team_status(ctx, body)
        case m.TeamShare() as body:
            return await team.team_share(ctx, body)
        case m.TeamMarks() as body:
            return await team_feed.team_marks(ctx, body)
        case m.TeamChanges() as body:
            return await team_feed.team_changes(ctx, body)
        case m.Workspaces() as body:
            return await daily.workspaces(ctx, body)
        case m.DailyRunner() as body:
            return await daily.daily_runner(ctx, body)
        case m.Import(format="agents") as body:
            return await agents.import_agents(ctx, body)
        case m.Import() as body:
            return await imports.import_(ctx, body)
        case m.Export() as body:
            return await imports.export(ctx, body)
        case m.Backup() as body:
            return await backup.backup(ctx, body)
        case m.Restore() as body:
            return await backup.restore(ctx, body)
        case m.Capture() as body:
            return await capture_handler.capture(ctx, body)
        case m.LearnGit() as body:
            return await learn.learn_git(ctx, body)
        case m.WatchFailure() as body:
            return await watch.watch_failure(ctx, body)
        case m.CaptureError() as body:
            return await failures.capture_error(ctx, body)
        case m.Failures() as body:
            return await failures.failures(ctx, body)
        case m.SnapshotSave() as body:
            return await continuity.snapshot_save(ctx, body)
        case m.SnapshotShow() as body:
            return await continuity.snapshot_show(ctx, body)
        case m.SnapshotClear() as body:
            return await continuity.snapshot_clear(ctx, body)
        case m.SessionLog() as body:
            return await continuity.session_log(ctx, body)
        case m.SessionShow() as body:
            return await continuity.session_show(ctx, body)
        case m.SessionLatest() as body:
            return await continuity.session_latest(ctx, body)
        case m.SessionResume() as body:
            return await continuity.session_resume(ctx, body)
        case m.HandoffCreate() as body:
            return await continuity.handoff_create(ctx, body)
        case m.HandoffLatest() as body:
            return await continuity.handoff_latest(ctx, body)
        case m.HandoffShow() as body:
            return await continuity.handoff_show(ctx, body)
        case m.CurrentShow() as body:
            return await continuity.current_show(ctx, body)
        case m.WmPush() as body:
            return await working_memory.wm_push(ctx, body)
        case m.WmRead() as body:
            return await working_memory.wm_read(ctx, body)
        case m.WmClear() as body:
            return await working_memory.wm_clear(ctx, body)
        case m.WmFlush() as body:
            return await working_memory.wm_flush(ctx, body)
        case m.PreCompact() as body:
            return await compaction.pre_compact(ctx, body)
        case m.PostCompact() as body:
            return await compaction.post_compact(ctx, body)
        case m.CompactResume() as body:
            return await compaction.compact_resume(ctx, body)
        case m.SessionEnd() as body:
            return await session_hooks.session_end(ctx, body)
        case m.LastSleep() as body:
            return await session_hooks.last_sleep(ctx, body)
        case m.Context(pinned_only=True) as body:
            return await pinned.pinned_context(ctx, body)
        case m.Context() as body:
            return await context_handler.context(ctx, body)
        case m.Tokens() as body:
            return await tokens_handler.tokens(ctx, body)
        case m.Setup() as body:
            return await setup.setup(ctx, body)
        case m.HookList() as body:
            return await hooks_install.hook_list(ctx, body)
        case m.HookInstall() as body:
            return await hooks_install.hook_install(ctx, body)
        case m.HookUninstall() as body:
            return await hooks_install.hook_uninstall(ctx, body)
        case m.ServiceInstall() as body:
            return await service.install_service(ctx, body)
        case m.ServiceUninstall() as body:
            return await service.uninstall_service(ctx, body)
        case m.Doctor() as body:
            return await doctor.doctor(ctx, body)
        case m.SupportBundle() as body:
            return await doctor.support_bundle(ctx, body)
        case m.McpToolCall() as body:
            return await mcp_tools.mcp_tool_call(ctx, body)
        case m.Serve() as body:
            return await serve.serve(ctx, body)
        case m.DashboardStart() as body:
            return await dashboard.dashboard_start(ctx, body)
        case m.DashboardStop() as body:
            return await dashboard.dashboard_stop(ctx, body)
        case m.AuthCreate() as body:
            return await auth_keys.auth_create(ctx, body)
        case m.AuthList() as body:
            return await auth_keys.auth_list(ctx, body)
        case m.AuthRevoke() as body:
            return await auth_keys.auth_revoke(ctx, body)
        case m.AuthToken() as body:
            return await auth_keys.auth_token(ctx, body)
        case m.SlackBackfill() as body:
            return await slack.slack_backfill(ctx, body)
        case m.DeadLetters() as body:
            return await slack.dead_letters(ctx, body)
        case mc.CardCreate() as body:
            return await cards.create(ctx, body)
        case mc.CardShow() as body:
            return await cards.show(ctx, body)
        case mc.CardList() as body:
            return await cards.list_cards(ctx, body)
        case mc.CardComment() as body:
            return await cards.comment(ctx, body)
        case mc.CardDepend() as body:
            return await cards.depend(ctx, body)
        case mc.CardClaim() as body:
            return await card_runs.claim(ctx, body)
        case mc.CardHeartbeat() as body:
            return await card_runs.heartbeat(ctx, body)
        case mc.CardBlock() as body:
            return await card_runs.block(ctx, body)
        case mc.CardReview() as body:
            return await card_runs.review(ctx, body)
        case mc.CardComplete() as body:
            return await card_runs.complete(ctx, body)
        case mc.CardReclaim() as body:
            return await card_runs.reclaim(ctx, body)
    raise AssertionError(f"no handler for {type(ctx.request.body).__name__}")
