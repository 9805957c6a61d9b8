"""`init` and `setup`: a store, seeded from git and agent notes, wired to the agents found, and
registered for the daily run with the per-user service installed (integrations.md §1-§2).

Re-running either changes nothing: each step reports only what it changed.
"""

from __future__ import annotations

import json
import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import InitReply, McpSettings
from hippoctl.protocol.replies_setup import SetupReply
from hippoctl.protocol.wording import DRY_RUN, plural
from hippod.calls.request import RequestContext
from hippod.integrations import commands, files, seeding, services, targets
from hippod.integrations.report import Report
from hippod.store import workspaces
from hippod.store.roots import DB_NAME

INIT_DAYS = 30  # git history a new project store learns from
SCAN_DAYS = 365  # ... and each repository `--scan` finds
# The user-level wiring (never an instruction block) `init --scan` installs for the agents seen
# among the repositories, and the wiring `setup` installs for the agents whose home exists.
SCAN_TARGETS = ("claude-code", "opencode")
SETUP_TARGETS = ("claude-code", "opencode", "codex")
INDENT = "   "


def _daily_time(ctx: RequestContext) -> str:
    schedule = ctx.state.schedule
    if schedule is None:
        return "06:15"
    at = schedule.at
    return f"{at.hour:02d}:{at.minute:02d}"


def _absorb(ctx: RequestContext, reply_lines: list[str], report: Report, project: str | None = None) -> None:
    """Add a step's lines to the reply; with `project`, worded as init's output (integrations.md §1):
    "Auto-installed ..." and file names relative to the project."""
    for line in report.lines:
        if project is not None:
            if line.startswith("Installed "):
                line = "Auto-installed " + line.removeprefix("Installed ")
            line = line.replace(f" {project}{os.sep}", " ")
        reply_lines.append(INDENT + line)
    ctx.warnings.extend(report.warnings)


async def _schedule(ctx: RequestContext, reply: InitReply, stores: list[seeding.Made]) -> None:
    """Register the stores for the daily run and install the service when it is absent (step 4)."""
    global_root = ctx.state.registry.global_root
    added = [workspaces.register_project(global_root, made.store.root, ctx.warnings) for made in stores]
    reply.registered = True
    name = services.service_name()
    outcome = await services.ensure(global_root=global_root, env=os.environ)
    if outcome is None:
        service_note = f"per-user service {name} already installed"
    else:
        ctx.warnings.extend(outcome.report.warnings)
        if outcome.failure is None:
            service_note = f"installed per-user service {name}"
        else:
            # init's other steps went through: the service is a warning, and init still exits 0.
            ctx.warnings.append(outcome.failure)
            state = "enabled for the next login, not started" if outcome.enabled else "not enabled"
            service_note = f"per-user service {name} {state} (see the warning)"
    reply.service = name if outcome is None or outcome.enabled else None
    verb = "Registered" if any(added) else "Already registered"
    reply.lines.append(f"{INDENT}{verb} for the daily {_daily_time(ctx)} run; {service_note}")


def _mcp(reply: InitReply, prefix: str) -> None:
    """Name the MCP server entry for this client, by the same absolute path as the hooks."""
    argv = commands.mcp_argv(prefix)
    reply.mcp = McpSettings(command=argv[0], args=argv[1:])
    entry = json.dumps({"command": reply.mcp.command, "args": reply.mcp.args})
    reply.lines.append(f"{INDENT}For an MCP client: {entry}")


def _store_lines(made: seeding.Made, cwd: str) -> list[str]:
    root = made.store.root
    if not made.created:
        return [f"Hippo already initialized at {root}"]
    lines = [
        f"Initialized Hippo at {root}",
        f"{INDENT}Directories: {' '.join(d + '/' for d in seeding.STORE_DIRS)}",
        f"{INDENT}Files: {' '.join(seeding.store_files(made.store))}",
    ]
    if made.shadows is not None:
        lines.append(f"{INDENT}This store shadows {made.shadows} for {cwd} and below")
    return lines


async def _seed(ctx: RequestContext, made: seeding.Made, folder: str, days: int) -> tuple[int, int, str]:
    """Git lessons (on creation only) and agent notes (every run); returns (learned, imported, line)."""
    learned: int | None = None
    if made.created:
        learned, warning = await seeding.learn_git(ctx, made.store, folder, days)
        if warning is not None:
            ctx.warnings.append(warning)
    imported, warnings = await seeding.import_notes(ctx, folder)
    ctx.warnings.extend(warnings)
    notes = f"imported {plural(imported, 'agent note')}"
    if learned is None:
        return 0, imported, f"{INDENT}{notes[0].upper()}{notes[1:]}"
    lessons = plural(learned, "lesson")
    return learned, imported, f"{INDENT}Learned {lessons} from {plural(days, 'day')} of git history; {notes}"


async def init(ctx: RequestContext, body: m.Init) -> tuple[InitReply, str]:
    try:
        if body.scan is not None:
            reply = await _init_scan(ctx, body, body.scan)
        elif ctx.request.global_store:
            reply = await _init_global(ctx, body)
        else:
            reply = await _init_project(ctx, body)
    except OSError as exc:
        raise files.write_failed(exc) from exc
    return reply, "\n".join(reply.lines)


async def _init_project(ctx: RequestContext, body: m.Init) -> InitReply:
    cwd = ctx.request.cwd
    made = await seeding.make_store(ctx, seeding.project_store_root(cwd))
    if made.store.kind == "global":
        # A `.hippo/` here that is the global root itself (HIPPO_HOME=~/.hippo) stays the global store.
        return await _init_global(ctx, body)
    reply = InitReply(path=made.store.root, created=made.created, kind=made.store.kind)
    reply.lines += _store_lines(made, cwd)
    if not body.no_learn:
        reply.learned, reply.imported, line = await _seed(ctx, made, cwd, body.days or INIT_DAYS)
        reply.lines.append(line)
    if not body.no_hooks and not seeding.skip_integrations(ctx.request.env):
        global_root = ctx.state.registry.global_root
        for target in targets.detect(cwd, os.environ):
            reply.targets.append(target)
            if target == "codex" and not targets.user_home_exists(target, os.environ):
                # Codex's hooks go in only where Codex is installed (§1); its block still does.
                report = targets.install_project(target, cwd, body.command, global_root=global_root)
            else:
                report = targets.install(target, cwd, body.command, global_root=global_root, env=os.environ)
            _absorb(ctx, reply.lines, report, cwd)
        _mcp(reply, body.command)
    if not body.no_schedule:
        await _schedule(ctx, reply, [made])
    return reply


async def _init_global(ctx: RequestContext, body: m.Init) -> InitReply:
    """`init --global`: create or migrate the global store and import the user-level agent notes."""
    made = await seeding.make_store(ctx, ctx.state.registry.global_root)
    reply = InitReply(path=made.store.root, created=made.created, kind=made.store.kind)
    reply.lines += _store_lines(made, ctx.request.cwd)
    if not body.no_learn:
        reply.imported = await seeding.import_user_notes(ctx)
        reply.lines.append(f"{INDENT}Imported {reply.imported} user-level agent notes")
    return reply


async def _init_scan(ctx: RequestContext, body: m.Init, folder: str) -> InitReply:
    """`init --scan <dir>`: a seeded, registered store for every git repository found below `folder`;
    user-level wiring for the agents seen among them, and no instruction blocks."""
    repos = seeding.find_repos(folder)
    made_stores: list[seeding.Made] = []
    reply = InitReply(path="", created=False, kind="project")
    seen: set[str] = set()
    for repo in repos:
        made = await seeding.make_store(ctx, seeding.project_store_root(repo))
        made_stores.append(made)
        reply.stores.append(made.store.root)
        reply.created = reply.created or made.created
        state = "Initialized" if made.created else "Already initialized"
        reply.lines.append(f"{state} Hippo at {made.store.root}")
        if not body.no_learn:
            learned, imported, line = await _seed(ctx, made, repo, body.days or SCAN_DAYS)
            reply.learned += learned
            reply.imported += imported
            reply.lines.append(line)
        seen.update(targets.detect(repo, os.environ))
    if not repos:
        reply.lines.append(f"No git repositories found below {folder}")
        return reply
    reply.path = reply.stores[0]
    if not body.no_hooks and not seeding.skip_integrations(ctx.request.env):
        global_root = ctx.state.registry.global_root
        for target in SCAN_TARGETS:
            if target in seen:
                reply.targets.append(target)
                report = targets.install_user(target, body.command, global_root=global_root, env=os.environ)
                _absorb(ctx, reply.lines, report)
        _mcp(reply, body.command)
    if not body.no_schedule:
        await _schedule(ctx, reply, made_stores)
    return reply


async def setup(ctx: RequestContext, body: m.Setup) -> tuple[SetupReply, str]:
    """The machine-level half of init: global store, user-level wiring, service, user agent notes."""
    try:
        return await _setup(ctx, body)
    except OSError as exc:
        raise files.write_failed(exc) from exc


async def _setup(ctx: RequestContext, body: m.Setup) -> tuple[SetupReply, str]:
    env = os.environ
    global_root = ctx.state.registry.global_root
    wired = [t for t in SETUP_TARGETS if targets.user_home_exists(t, env)]
    installed = None if body.no_schedule else await services.state(env)
    service_due = not body.no_schedule and (installed is None or installed.enabled is False)
    registered = workspaces.read_or_empty(global_root)[0] if body.all else []
    # The project setup runs in, if any, has its older blocks refreshed too: their commands may be
    # ones its agents' shells cannot start (a bare `hippoctl`).
    here = None if ctx.request.global_store else ctx.state.registry.project_root_for(ctx.request.cwd)
    projects = list(dict.fromkeys([*([os.path.dirname(here)] if here else []), *registered]))
    reply = SetupReply(dry_run=body.dry_run, global_store=global_root, targets=wired)
    if body.dry_run:
        done = [t for t in wired if targets.user_wiring_state(t, body.command, env) == "installed"]
        reply.lines = _plan(global_root, wired, done, service_due, registered)
        outdated = [p for project in projects for p in targets.outdated_blocks(project, body.command)]
        reply.lines += [f"Would update the hippo block in {path}" for path in outdated]
        return reply, "\n".join(reply.lines)
    made = await seeding.make_store(ctx, global_root)
    reply.lines += _store_lines(made, ctx.request.cwd)
    for target in wired:
        _absorb(
            ctx, reply.lines, targets.install_user(target, body.command, global_root=global_root, env=env)
        )
    if service_due:
        outcome = await services.ensure(global_root=global_root, env=env)
        if outcome is not None:
            _absorb(ctx, reply.lines, outcome.report)
            ctx.warnings.extend([outcome.failure] if outcome.failure else [])
            if outcome.enabled:
                reply.service = services.service_name()
    elif installed is not None:
        reply.service = services.service_name()
    reply.imported = await seeding.import_user_notes(ctx)
    reply.lines.append(f"{INDENT}Imported {reply.imported} user-level agent notes")
    for workspace in projects:
        if os.path.isdir(workspace):
            report = targets.refresh_blocks(workspace, body.command, global_root=global_root)
            if report.lines:
                reply.refreshed.append(workspace)
            _absorb(ctx, reply.lines, report)
    return reply, "\n".join(reply.lines)


def _plan(
    global_root: str, wired: list[str], done: list[str], service_due: bool, registered: list[str]
) -> list[str]:
    """What `setup` would do, for --dry-run; `done` are the `wired` targets already installed."""
    lines = [DRY_RUN]
    if not os.path.isfile(os.path.join(global_root, DB_NAME)):
        lines.append(f"Would create the global store at {global_root}")
    for target in wired:
        if target in done:
            lines.append(f"User-level {target} wiring already installed")
        else:
            lines.append(f"Would install the user-level {target} wiring")
    if not wired:
        lines.append("No agent home found: no user-level wiring to install")
    if service_due:
        lines.append(f"Would install the per-user service {services.service_name()}")
    lines.append("Would import the user-level agent notes into the global store")
    if registered:
        lines.append(f"Would refresh unedited instruction blocks in {len(registered)} registered workspaces")
    return lines
