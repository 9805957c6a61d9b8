"""The agent-notes watcher (daemon.md §11): agents' note folders watched, changes imported within seconds.

At start a reconcile queues one import per (store, tool) for the global store and every known
project store, so what changed while the daemon was down comes in. Then `watchfiles.awatch` runs
over the existing roots of the enabled tools (agentnotes/sources.watch_roots); roots that do not
exist yet are checked again every `watch.rescanSeconds` and the watch restarts with the new set.
Each change is mapped to (tool, target store): a tool's user-note locations → the global store;
a project's locations (Claude folders through the encoding rule) → that project's store, for the
projects of registered workspaces and of the project stores open now; anything else is ignored.
One import job per (store, tool) waits in the queue at a time, so repeats coalesce.

Imports run as tenant `default` (HIPPO_TENANT of the daemon's own environment when set). Tool
selection: HIPPO_AGENT_MEMORY_TOOLS of the daemon's environment, else `agentMemories.tools` of the
global store (and a project store's own setting can turn a tool off for that project).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from watchfiles import awatch

from hippod.agentnotes import sources
from hippod.agentnotes.importer import IMPORT, sync_tool
from hippod.agentnotes.tools import selected_tools, tool_home
from hippod.base.config import DAEMON_DEFAULTS
from hippod.base.errors import HippoError
from hippod.calls.daemon_view import DaemonView
from hippod.store import workspaces
from hippod.store.roots import DB_NAME
from hippod.store.sqlite import sqlite_errors
from hippod.store.stores import Store, sqlite_only

log = logging.getLogger("hippod.watchers")

ACTOR = "daemon:watch"
STOP_SECONDS = 5.0
# How long a status waits for the first working-out of the roots after start.
KNOWN_WAIT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Job:
    """Import one tool's notes into one store: the project's when project_root is set, else the user's."""

    store_root: str
    tool: str
    project_root: str | None


def _number(section: dict[str, Any], key: str, smallest: float) -> float:
    value = section.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < smallest:
        log.warning("daemon.json: watch.%s must be a number >= %g; using the default", key, smallest)
        return float(DAEMON_DEFAULTS["watch"][key])
    return float(value)


@dataclass
class AgentWatcher:
    """The watch loop, its rescans and the import queue; `stop()` ends them all without hanging."""

    state: DaemonView
    debounce_ms: int
    rescan_seconds: float
    roots: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pending: dict[tuple[str, str], Job] = field(default_factory=dict)
    imports_done: int = 0
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _restart: asyncio.Event = field(default_factory=asyncio.Event)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _known: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._watch()), loop.create_task(self._work())]

    async def stop(self) -> None:
        """Stop watching and importing; a running import is cancelled (its transaction rolls back)."""
        self._stop.set()
        self._restart.set()
        self._wake.set()
        if not self._tasks:
            return
        _, still = await asyncio.wait(self._tasks, timeout=STOP_SECONDS)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=STOP_SECONDS)

    async def status(self) -> dict[str, list[str]]:
        """The roots watched and missing. Right after start it waits, at most KNOWN_WAIT_SECONDS, for
        the first working-out of the roots, so a status or doctor then does not report none watched."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._known.wait(), KNOWN_WAIT_SECONDS)
        return {"roots": list(self.roots), "missing": list(self.missing)}

    # --- what to watch ---------------------------------------------------------------------------------

    async def _global(self) -> Store:
        registry = self.state.registry
        return await registry.open(registry.global_root)

    def _project_roots(self) -> dict[str, str]:
        """Known projects: registered workspaces with a store and the project stores open now.
        Returns project root → store root."""
        registry = self.state.registry
        found: dict[str, str] = {}
        paths, warning = workspaces.read_or_empty(registry.global_root)
        if warning:
            log.warning("%s", warning)
        for path in paths:
            store_root = os.path.realpath(workspaces.store_dir(path))
            if os.path.isfile(os.path.join(store_root, DB_NAME)) and store_root != registry.global_root:
                found[os.path.dirname(store_root)] = store_root
        for root, store in list(registry.stores.items()):
            if store.kind == "project":
                found.setdefault(os.path.dirname(root), root)
        return found

    async def _tools(self) -> dict[str, str]:
        """Enabled tool → its home; none while the global config.json does not parse."""
        try:
            config = (await self._global()).config
        except HippoError as exc:
            log.warning("%s; no agent notes are watched until it is fixed", exc.message)
            return {}
        tools, warnings = selected_tools(config, os.environ)
        for warning in warnings:
            log.warning("%s", warning)
        return {tool: tool_home(tool, config, os.environ) for tool in tools}

    async def _compute_roots(self) -> tuple[list[str], list[str]]:
        """(existing roots, missing roots) of the enabled tools."""
        projects = list(self._project_roots())
        tools = await self._tools()
        return await asyncio.to_thread(_roots, tools, projects)

    # --- the watch loop --------------------------------------------------------------------------------

    async def _watch(self) -> None:
        first = True
        while not self._stop.is_set():
            before = set(self.roots)
            try:
                self.roots, self.missing = await self._compute_roots()
            except Exception:
                log.exception("could not work out the agent-note roots")
            self._known.set()
            if first or set(self.roots) - before:
                # Notes changed while the daemon was down, or a root that appeared may already hold
                # notes: no event will announce them.
                try:
                    await self._reconcile()
                except Exception:
                    log.exception("the reconcile of agent notes failed")
            first = False
            self._restart = asyncio.Event()
            if self._stop.is_set():
                self._restart.set()
            rescans = asyncio.get_running_loop().create_task(self._rescan(set(self.roots)))
            try:
                if self.roots:
                    log.info("watching %d agent-note roots (%d missing)", len(self.roots), len(self.missing))
                    async for changes in awatch(
                        *self.roots,
                        watch_filter=None,
                        debounce=self.debounce_ms,
                        step=50,
                        stop_event=self._restart,
                        recursive=True,
                    ):
                        await self._changed({path for _, path in changes})
                else:
                    await self._restart.wait()
            except Exception:
                # A root removed between the check and the start, or a watch error: try again shortly.
                log.exception("the agent-note watch stopped; restarting")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 1.0)
            finally:
                rescans.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await rescans

    async def _rescan(self, watching: set[str]) -> None:
        """Every rescanSeconds: restart the watch when the set of existing roots has changed."""
        while not self._restart.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._restart.wait(), self.rescan_seconds)
            if self._restart.is_set():
                return
            try:
                roots, _ = await self._compute_roots()
            except Exception:
                log.exception("the agent-note rescan failed")
                continue
            if set(roots) != watching:
                log.info("agent-note roots changed; restarting the watch")
                self._restart.set()

    async def _reconcile(self) -> None:
        """Queue every (store, tool): imports what changed while the daemon was down."""
        tools = await self._tools()
        for tool in tools:
            self._queue(Job(self.state.registry.global_root, tool, None))
        for project_root, store_root in self._project_roots().items():
            for tool in tools:
                self._queue(Job(store_root, tool, project_root))

    async def _changed(self, paths: set[str]) -> None:
        """Map changed paths to import jobs (daemon.md §11.3)."""
        tools = await self._tools()
        projects = self._project_roots()
        # Working out each project's note locations reads files (settings.json, every VS Code
        # workspace.json): a thread keeps that off the event loop.
        jobs = await asyncio.to_thread(_jobs, paths, tools, projects, self.state.registry.global_root)
        for job in jobs:
            self._queue(job)

    # --- the import queue ------------------------------------------------------------------------------

    def _queue(self, job: Job) -> None:
        self.pending.setdefault((job.store_root, job.tool), job)
        self._wake.set()

    async def _work(self) -> None:
        while not self._stop.is_set():
            await self._wake.wait()
            self._wake.clear()
            while self.pending and not self._stop.is_set():
                key = next(iter(self.pending))
                job = self.pending.pop(key)
                try:
                    await self._run(job)
                except HippoError as exc:
                    # A corrupt store was logged once when it was set aside; anything else is new.
                    level = logging.DEBUG if exc.code == sqlite_errors.CORRUPT else logging.WARNING
                    log.log(level, "importing %s notes skipped: %s", job.tool, exc.message)
                except Exception:
                    log.exception("importing %s notes into %s failed", job.tool, job.store_root)
                self.imports_done += 1

    async def _run(self, job: Job) -> None:
        registry = self.state.registry
        global_store = await self._global()
        store = sqlite_only(await registry.open(job.store_root), IMPORT)
        tools, _ = selected_tools(store.config, os.environ)
        if job.tool not in tools:
            return
        home = tool_home(job.tool, global_store.config, os.environ)
        tenant = os.environ.get("HIPPO_TENANT", "").strip() or "default"
        _, outcome = await sync_tool(
            self.state, store, job.tool, home, project_root=job.project_root, tenant=tenant, actor=ACTOR
        )
        if outcome.added or outcome.replaced or outcome.dormant:
            log.info(
                "%s notes → %s: %d added, %d replaced, %d dormant",
                job.tool,
                store.root,
                outcome.added,
                outcome.replaced,
                outcome.dormant,
            )


def _roots(tools: dict[str, str], projects: list[str]) -> tuple[list[str], list[str]]:
    """(existing, missing) watch roots of the tools (tool → home) whose home exists."""
    roots: list[str] = []
    for tool, home in tools.items():
        if os.path.isdir(home):
            roots += [r for r in sources.watch_roots(tool, home, projects) if r not in roots]
    existing = [r for r in roots if os.path.isdir(r)]
    return existing, [r for r in roots if r not in existing]


def _jobs(paths: set[str], tools: dict[str, str], projects: dict[str, str], global_root: str) -> list[Job]:
    """The import jobs that changed paths call for: a tool's user-note locations → the global
    store; a known project's locations → that project's store (projects: project root → store root)."""
    relevant = [p for p in paths if _relevant(p)]
    if not relevant:
        return []
    jobs: list[Job] = []
    for tool, home in tools.items():
        if any(loc.holds(p) for loc in sources.user_locations(tool, home) for p in relevant):
            jobs.append(Job(global_root, tool, None))
        for project_root, store_root in projects.items():
            locations = sources.project_locations(tool, home, project_root)
            if any(loc.holds(p) for loc in locations for p in relevant):
                jobs.append(Job(store_root, tool, project_root))
    return jobs


def _relevant(path: str) -> bool:
    """Note files, and folders (a deleted or created folder may hold notes); not other files."""
    name = os.path.basename(path)
    return name.endswith(".md") or name == "workspace.json" or "." not in name or os.path.isdir(path)


def start_watchers(state: DaemonView, config: dict[str, Any]) -> AgentWatcher | None:
    """Start the agent-note watcher unless `watch.enabled` is false."""
    section = config.get("watch")
    section = section if isinstance(section, dict) else {}
    if section.get("enabled", True) is False:
        log.info("watchers are off (watch.enabled)")
        return None
    watcher = AgentWatcher(
        state,
        debounce_ms=int(_number(section, "debounceMs", 0)),
        rescan_seconds=max(0.1, _number(section, "rescanSeconds", 0.1)),
    )
    watcher.start()
    return watcher
