"""Running an agent-notes import (ingest.md §4 "When"): for a project, for one (store, tool), or for
everything the daemon knows. No request is needed, so the watchers, the daily run and sleep can call
these as well as `import --agents`.

Settings: the enabled tools come from HIPPO_AGENT_MEMORY_TOOLS, else `agentMemories.tools` of the
store the import starts from (a project store, else the global store); the tool homes come from
the global store's `agentMemories.paths` (they describe the machine, not a project).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from hippoctl.protocol.replies_agents import AgentToolReport
from hippod.agentnotes import sources
from hippod.agentnotes.sources import Scan
from hippod.agentnotes.sync import Outcome, apply_scan
from hippod.agentnotes.tools import selected_tools, tool_home
from hippod.calls.daemon_view import DaemonView
from hippod.store.stores import SqliteStore, sqlite_only

# What an import is, for the error on a team server, which keeps no agents' notes.
IMPORT = "import --agents"


@dataclass
class ImportReport:
    """Per tool, what an import saw and did, across the stores it wrote to."""

    dry_run: bool
    tools: list[AgentToolReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _merge(report: AgentToolReport, scan: Scan, outcome: Outcome) -> None:
    report.folders += [f for f in scan.found if f not in report.folders]
    report.added += outcome.added
    report.replaced += outcome.replaced
    report.dormant += outcome.dormant
    report.unchanged += outcome.unchanged
    skipped = dict(report.skipped)
    for reason, count in outcome.skipped.items():
        if count:
            skipped[reason] = skipped.get(reason, 0) + count
    report.skipped = skipped
    report.ids = [*report.ids, *outcome.new_ids]


def _scan(tool: str, home: str, project_root: str | None) -> Scan:
    """Read one tool's notes from disk: the project's when project_root is given, else the user's."""
    if project_root is None:
        locations = sources.user_locations(tool, home)
    else:
        locations = sources.project_locations(tool, home, project_root)
    return sources.read_locations(tool, home, locations)


async def sync_tool(
    state: DaemonView,
    store: SqliteStore,
    tool: str,
    home: str,
    *,
    project_root: str | None,
    tenant: str = "default",
    actor: str = "daemon",
    origin_project: str | None = None,
    dry_run: bool = False,
) -> tuple[Scan, Outcome]:
    """One tool into one store: the project's notes when project_root is given, else the user's."""
    # Finding and reading the notes is file work (a Copilot lookup opens every VS Code workspace's
    # workspace.json): it runs in a thread so the daemon keeps serving requests meanwhile.
    scan = await asyncio.to_thread(_scan, tool, home, project_root)
    outcome = await apply_scan(
        state, store, scan, tenant=tenant, actor=actor, origin_project=origin_project, dry_run=dry_run
    )
    return scan, outcome


async def import_project(
    state: DaemonView,
    cwd: str,
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    tenant: str = "default",
    actor: str = "daemon",
) -> ImportReport:
    """Import every enabled tool's notes seen from cwd: the user's notes into the global store, the
    project's into its store, or (a folder without a store, as at session end) into the global
    store with origin_project = the folder's name."""
    registry = state.registry
    global_store = sqlite_only(await registry.open(registry.global_root), IMPORT)
    store_root = registry.project_root_for(cwd)
    project_store = sqlite_only(await registry.open(store_root), IMPORT) if store_root is not None else None
    project_root = os.path.dirname(store_root) if store_root is not None else os.path.realpath(cwd)
    settings_store = project_store or global_store
    tools, warnings = selected_tools(settings_store.config, env)
    report = ImportReport(dry_run=dry_run, warnings=warnings)
    target = project_store or global_store
    origin = None if project_store is not None else os.path.basename(project_root)
    for tool in tools:
        home = tool_home(tool, global_store.config, os.environ)
        tool_report = AgentToolReport(tool=tool, home=home, home_exists=os.path.isdir(home), folders=[])
        for store, root, project in ((global_store, None, None), (target, project_root, origin)):
            scan, outcome = await sync_tool(
                state,
                store,
                tool,
                home,
                project_root=root,
                tenant=tenant,
                actor=actor,
                origin_project=project,
                dry_run=dry_run,
            )
            _merge(tool_report, scan, outcome)
        report.tools.append(tool_report)
    return report


async def import_store(state: DaemonView, store: SqliteStore, env: Mapping[str, str]) -> int:
    """Sleep phase 1's agent part: each enabled tool's notes that belong in this store (a project
    store takes its project's notes, the global store the user's); returns the memories added.

    `env` decides the tools (HIPPO_AGENT_MEMORY_TOOLS); the tool homes follow the daemon's own.
    """
    registry = state.registry
    global_store = store if store.kind == "global" else await registry.open(registry.global_root)
    tools, _ = selected_tools(store.config, env)
    project_root = None if store.kind == "global" else os.path.dirname(store.root)
    added = 0
    for tool in tools:
        home = tool_home(tool, global_store.config, os.environ)
        _, outcome = await sync_tool(state, store, tool, home, project_root=project_root)
        added += outcome.added + outcome.replaced
    return added
