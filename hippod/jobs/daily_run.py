"""The daily run: every registered workspace, then the global store, one run at a time (sleep.md §10.4-5).

A run is a task of its own: the client that asked for it (or the scheduler) only listens, so a
client that leaves does not stop it, and a second `daily-runner` joins the run that is going
instead of starting another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import traceback
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec

from hippoctl.protocol.replies import DailyRunResult
from hippoctl.protocol.wording import plural
from hippod.base import clock, daemon_state
from hippod.base.errors import HippoError
from hippod.base.logfile import open_append
from hippod.base.tenancy import acting_as
from hippod.calls.daemon_view import DaemonView, Say
from hippod.ingest.gitrun import learn_from_git
from hippod.sleep.run import SleepOptions, sleep_store
from hippod.store import workspaces
from hippod.store.stores import SqliteStore, Store, sqlite_only

if TYPE_CHECKING:
    from hippod.store.postgres.pg import TeamDatabase  # psycopg: a team server's alone

log = logging.getLogger("hippod.daily")


def summary_line(processed: int, failures: int) -> str:
    return (
        f"Daily maintenance complete: {plural(processed, 'workspace')} processed, "
        f"{plural(failures, 'command failure')}."
    )


async def learn_git(state: DaemonView, store: SqliteStore, days: int, say: Say) -> int:
    """`learn --git --days N` on one workspace (the folder holding its store); returns the lessons learned."""
    result = await learn_from_git(state, store, [os.path.dirname(store.root)], days, say)
    return len(result.lessons)


def _failure(exc: Exception) -> str:
    """What failed, for the run's lines and log: a HippoError's message, else only the type,
    since other messages might quote memory text."""
    return exc.message if isinstance(exc, HippoError) else exc.__class__.__name__


def _is_git_repo(path: str) -> bool:
    # A worktree or submodule has a .git file rather than a folder.
    return os.path.exists(os.path.join(path, ".git"))


class DailyRun:
    """One run in progress: its lines so far, the listeners that receive new ones, its task."""

    def __init__(self, trigger: str, log_path: str) -> None:
        self.trigger = trigger
        self.started = datetime.now(UTC)
        self.log_path = log_path
        self.lines: list[str] = []
        self.listeners: set[asyncio.Queue[str | None]] = set()
        self.task: asyncio.Task[DailyRunResult] | None = None

    def emit(self, line: str, *, stream: bool = True) -> None:
        """Record a line in daily.log and, unless it is the summary (the reply's text), send it on."""
        try:
            with open_append(self.log_path) as handle:
                handle.write(line + "\n")
        except OSError as exc:
            log.warning("could not write %s: %s", self.log_path, exc.__class__.__name__)
        if stream:
            self.lines.append(line)
            for queue in self.listeners:
                queue.put_nowait(line)

    def close(self) -> None:
        for queue in self.listeners:
            queue.put_nowait(None)


class DailyRunner:
    """Starts daily runs, lets later callers join the one that is going, and remembers the last one."""

    def __init__(self, state: DaemonView, days: int, log_path: str) -> None:
        self.state = state
        self.days = days
        self.log_path = log_path
        self.current: DailyRun | None = None
        self.last: DailyRunResult | None = None
        self.last_started: datetime | None = None

    @property
    def running(self) -> bool:
        return self.current is not None

    def load(self) -> None:
        """The last run as daemon-state.json recorded it (daemon start)."""
        recorded, warning = daemon_state.read(self.state.registry.global_root)
        if warning:
            log.warning("%s", warning)
        started = recorded.get("last_daily_started_at")
        if isinstance(started, str):
            with contextlib.suppress(ValueError):
                self.last_started = clock.parse_iso(started)
        with contextlib.suppress(msgspec.ValidationError):
            if isinstance(recorded.get("last_daily_result"), dict):
                self.last = msgspec.convert(recorded["last_daily_result"], DailyRunResult)

    def mark_started(self, moment: datetime) -> None:
        """Record a run start (or, with no record yet, "now", so that a first start runs nothing)."""
        self.last_started = moment
        self._record(last_daily_started_at=clock.iso(moment))

    def _record(self, **fields: object) -> None:
        try:
            daemon_state.update(self.state.registry.global_root, **fields)
        except OSError as exc:
            log.warning("could not write daemon-state.json: %s", exc.__class__.__name__)

    def start(self, trigger: str) -> DailyRun:
        """The running run, or a new one started now."""
        if self.current is not None:
            return self.current
        run = DailyRun(trigger, self.log_path)
        self.current = run
        # A fresh context: the run belongs to no request (not to the commit point of the one that started it).
        run.task = asyncio.get_running_loop().create_task(self._run(run), context=contextvars.Context())
        return run

    async def run_or_join(self, trigger: str, say: Say | None = None) -> tuple[DailyRunResult, bool]:
        """Run the job now, or join the one going; stream its lines to say. Returns (result, joined)."""
        joined = self.current is not None
        run = self.start(trigger)
        assert run.task is not None
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        line: str | None
        # Replaying the lines so far and subscribing happen with no await between them: none is lost.
        for line in run.lines:
            queue.put_nowait(line)
        if run.task.done():
            queue.put_nowait(None)
        run.listeners.add(queue)
        try:
            while True:
                line = await queue.get()
                if line is None:
                    break
                if say is not None:
                    await say(line)
        finally:
            run.listeners.discard(queue)
        # Shielded: a cancelled listener (Ctrl-C) leaves the run going.
        return await asyncio.shield(run.task), joined

    async def drain(self, timeout: float, unwind: float = 5.0) -> None:
        """At shutdown: let a running run finish for up to timeout seconds, then cancel it and wait
        up to `unwind` seconds for it to end."""
        run = self.current
        if run is None or run.task is None:
            return
        _, pending = await asyncio.wait({run.task}, timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=unwind)

    async def _run(self, run: DailyRun) -> DailyRunResult:
        started_at = clock.iso(run.started)
        self.mark_started(run.started)
        run.emit("", stream=False)  # a blank line between the blocks of daily.log
        run.emit(f"Daily run started {started_at} ({run.trigger})")
        log.info("daily run started (%s)", run.trigger)
        result = DailyRunResult(started_at=started_at, trigger=run.trigger)
        try:
            result = await self._body(run, result)
        except asyncio.CancelledError:
            result.summary = "Daily maintenance cancelled."
            result.ok = False
            run.emit(result.summary)
            raise
        finally:
            result.finished_at = clock.iso(datetime.now(UTC))
            self.last = result
            self._record(
                last_daily_finished_at=result.finished_at, last_daily_result=msgspec.to_builtins(result)
            )
            self.current = None
            run.close()
        log.info("daily run finished: %d workspaces, %d failures", result.workspaces, result.failures)
        return result

    async def _body(self, run: DailyRun, result: DailyRunResult) -> DailyRunResult:
        """Sequential over the registry; each failed step counts one failure and the run goes on."""
        registry = self.state.registry
        if registry.team is not None:
            return await self._team_body(run, result, registry.team)
        paths, warning = workspaces.read_or_empty(registry.global_root)
        if warning:
            log.warning("%s", warning)
            run.emit(warning)

        async def say(line: str) -> None:
            if line:
                run.emit("    " + line)

        for path in paths:
            found = workspaces.describe(path)
            if not found.exists or not found.has_store:
                result.skipped += 1
                run.emit(f"{path}: skipped ({'missing' if not found.exists else 'no .hippo/hippo.db'})")
                continue
            root = os.path.realpath(workspaces.store_dir(path))
            if root == registry.global_root:
                run.emit(f"{path}: skipped (its store is the global store, slept last)")
                continue
            result.workspaces += 1
            run.emit(f"{path}:")
            result.failures += await self._workspace(run, path, root, say)
        run.emit("global store:")
        result.failures += await self._step(run, "sleep", self._sleep(registry.global_root))
        if result.skipped:
            run.emit(f"{plural(result.skipped, 'registered workspace')} skipped (missing or without a store)")
        result.ok = result.failures == 0
        result.summary = summary_line(result.workspaces, result.failures)
        run.emit(result.summary, stream=False)
        return result

    async def _team_body(self, run: DailyRun, result: DailyRunResult, store: Store) -> DailyRunResult:
        """A team server's run: each tenant's sleep, by this server or another (store/postgres/daily.py)."""
        from hippod.store.postgres import daily as team_daily  # psycopg: a team server's alone
        from hippod.store.postgres.pg import TeamDatabase

        assert isinstance(store.db, TeamDatabase)
        try:
            found = await team_daily.tenants(store.db)
        except HippoError as exc:  # the database is away: the run fails, saying why, in one line
            log.warning("daily run: listing the tenants failed: %s", exc.message)
            run.emit(f"listing the tenants: failed ({exc.message})")
            found, result.failures = [], 1
        for tenant in found:
            result.workspaces += 1
            run.emit(f"tenant {tenant}:")
            result.failures += await self._step(run, "sleep", self._team_sleep(store, store.db, tenant))
        result.ok = result.failures == 0
        result.summary = (
            f"Daily maintenance complete: {plural(result.workspaces, 'tenant')} processed, "
            f"{plural(result.failures, 'command failure')}."
        )
        run.emit(result.summary, stream=False)
        return result

    async def _team_sleep(self, store: Store, db: TeamDatabase, tenant: str) -> str:
        from hippod.store.postgres import daily as team_daily

        with acting_as(tenant):
            async with team_daily.claimed(db, tenant, clock.now()) as skipped:
                if skipped is not None:
                    return f"skipped ({skipped})"
                r = await sleep_store(self.state, store, SleepOptions(no_learn=True, no_share=True))
        return f"{r.active} active, {r.dormant_moved} to dormant, {r.merged} merged"

    async def _workspace(self, run: DailyRun, path: str, root: str, say: Say) -> int:
        """learn --git (git repos only), then sleep without phase 1's git part; returns the failures."""
        failures = 0
        if _is_git_repo(path):
            failures += await self._step(run, f"learn --git --days {self.days}", self._learn(root, say))
        failures += await self._step(run, "sleep", self._sleep(root))
        return failures

    async def _learn(self, root: str, say: Say) -> str:
        store = sqlite_only(await self.state.registry.open(root), "learn --git")
        learned = await learn_git(self.state, store, self.days, say)
        return f"{plural(learned, 'lesson')} learned"

    async def _sleep(self, root: str) -> str:
        """One store's sleep; its outcome in a line (phase progress would swamp daily.log)."""
        store = await self.state.registry.open(root)
        r = await sleep_store(self.state, store, SleepOptions(git=False))
        deduped = r.deduped.episodic + r.deduped.semantic + r.deduped.cross_layer
        return (
            f"{r.active} active, {r.dormant_moved} to dormant, {r.merged} merged, {deduped} deduped, "
            f"{plural(r.conflicts.open, 'open conflict')}"
        )

    async def _step(self, run: DailyRun, name: str, step: Awaitable[str]) -> int:
        """Run one step; returns 1 when it failed (and says why), else 0."""
        try:
            outcome = await step
        except HippoError as exc:
            # Named already (a corrupt store, a full disk): its message is the whole story.
            log.warning("daily run: %s failed: %s", name, exc.message)
            run.emit(f"  {name}: failed ({exc.message})")
            return 1
        except Exception as exc:
            stack = "".join(traceback.format_tb(exc.__traceback__)).rstrip()
            log.warning("daily run: %s failed: %s\n%s", name, exc.__class__.__name__, stack)
            run.emit(f"  {name}: failed ({_failure(exc)})")
            return 1
        run.emit(f"  {name}: {outcome}")
        return 0
