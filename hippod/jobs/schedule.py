"""The daemon-owned schedule: the `daily` job, catch-up after downtime, and runs missed in suspend
(daemon.md §12, sleep.md §10.2-3).

Three ways lead to a daily run, and all of them go through `_run_if_due`, which starts a run only
when none has started since the latest scheduled instant (and joins one that is going), so they
never add up to two runs for one scheduled instant:

- the apscheduler `CronTrigger` at `daily.time` in the local time zone (`coalesce=True`,
  `max_instances=1`, `misfire_grace_time=None`: however late the scheduler wakes, the missed
  instants run once);
- catch-up at daemon start: if `last_daily_started_at` (daemon-state.json) is before the latest
  scheduled instant, one run `daily.catchUpDelaySeconds` (120) after startup; with no record yet
  the record is set to now and nothing runs;
- resume after suspend. asyncio timers, and so apscheduler's wake-up, count monotonic time, which
  on Linux stands still while the machine sleeps: a run due during the night would otherwise start
  only once the remaining monotonic wait had passed after resume. A watcher compares the wall and
  monotonic clocks every `CLOCK_CHECK_SECONDS`; when the wall clock has moved more than a minute
  further, the machine was asleep (or the clock was set forward), so it wakes the scheduler (which
  recomputes its timers from the wall clock) and runs the job now if an instant was missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import tzlocal
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from hippoctl.protocol.replies import ScheduleStatus
from hippod.base import clock
from hippod.base.daily_time import (
    DailyTime,
    catch_up_due,
    latest_scheduled,
    log_path,
    parse_daily_time,
    wall_jumped,
)
from hippod.calls.daemon_view import DaemonView
from hippod.jobs.card_reclaim import reclaim_all
from hippod.jobs.daily_run import DailyRunner
from hippod.store import workspaces

log = logging.getLogger("hippod.schedule")

CLOCK_CHECK_SECONDS = 30.0
DAILY_JOB = "daily"
CATCH_UP_JOB = "daily_catch_up"
RECLAIM_JOB = "card_reclaim"


class Schedule:
    """The scheduler and the clock watcher; started before the daemon binds, stopped at shutdown."""

    def __init__(self, runner: DailyRunner, daily: dict[str, Any], reclaim_minutes: float = 0) -> None:
        self.runner = runner
        self.reclaim_minutes = reclaim_minutes
        self.enabled = bool(daily["enabled"])
        self.at: DailyTime = parse_daily_time(daily["time"])
        self.catch_up_delay = float(daily["catchUpDelaySeconds"])
        self.zone = tzlocal.get_localzone()
        self.scheduler: AsyncIOScheduler | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        # The clock watcher's wall clock and interval; a test may set them before start().
        self.wall_clock: Callable[[], float] = time.time
        self.check_seconds = CLOCK_CHECK_SECONDS

    def now(self) -> datetime:
        """The wall clock in the local zone: the scheduler's clock, which HIPPO_FAKE_NOW does not fix."""
        return datetime.now(self.zone)

    def start(self) -> None:
        """Load the last run, schedule the daily job and decide on a catch-up run (daemon.md §4.7),
        and schedule the card reclaim."""
        self.runner.load()
        if not log.isEnabledFor(logging.DEBUG):
            # Our own lines say when a run starts and ends; apscheduler's would repeat them.
            logging.getLogger("apscheduler").setLevel(logging.WARNING)
        scheduler = AsyncIOScheduler(timezone=self.zone)
        if self.reclaim_minutes > 0:
            scheduler.add_job(
                reclaim_all,
                IntervalTrigger(minutes=self.reclaim_minutes, timezone=self.zone),
                args=[self.runner.state],
                id=RECLAIM_JOB,
                name=RECLAIM_JOB,
                coalesce=True,
                max_instances=1,
            )
        if self.enabled:
            self._schedule_daily(scheduler)
        else:
            log.info("daily run disabled in daemon.json")
        scheduler.start()
        self.scheduler = scheduler
        if self.enabled:
            self._spawn(self._watch_clock())

    def _schedule_daily(self, scheduler: AsyncIOScheduler) -> None:
        """The daily job, and a catch-up run when one was missed."""
        scheduler.add_job(
            self._run_if_due,
            CronTrigger(hour=self.at.hour, minute=self.at.minute, second=self.at.second, timezone=self.zone),
            args=["schedule"],
            id=DAILY_JOB,
            name=DAILY_JOB,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=None,
        )
        now = self.now()
        if self.runner.last_started is None:
            self.runner.mark_started(now)
        elif catch_up_due(self.runner.last_started, latest_scheduled(now, self.at)):
            when = now + timedelta(seconds=self.catch_up_delay)
            log.info("a daily run was missed; catching up at %s", when.isoformat(timespec="seconds"))
            scheduler.add_job(
                self._run_if_due,
                DateTrigger(run_date=when, timezone=self.zone),
                args=["catch-up"],
                id=CATCH_UP_JOB,
                name=CATCH_UP_JOB,
                misfire_grace_time=None,
            )

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_if_due(self, trigger: str) -> None:
        """Run (or join) the daily job unless a run has started since the latest scheduled instant."""
        if not self.runner.running and not catch_up_due(
            self.runner.last_started, latest_scheduled(self.now(), self.at)
        ):
            log.info("daily run (%s) not needed: one already started since %s", trigger, self.at)
            return
        try:
            await self.runner.run_or_join(trigger)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("daily run (%s) failed", trigger)

    async def _watch_clock(self) -> None:
        """Notice a suspend (the wall clock ran ahead of the monotonic one) and catch up at once."""
        wall, mono = self.wall_clock(), time.monotonic()
        while True:
            await asyncio.sleep(self.check_seconds)
            new_wall, new_mono = self.wall_clock(), time.monotonic()
            if wall_jumped(new_wall - wall, new_mono - mono):
                log.info(
                    "the wall clock jumped %.0f s ahead (suspend?)", (new_wall - wall) - (new_mono - mono)
                )
                if self.scheduler is not None:
                    self.scheduler.wakeup()
                self._spawn(self._run_if_due("resume"))
            wall, mono = new_wall, new_mono

    def stop(self) -> None:
        """Stop scheduling (daemon.md §13.3); a run that is going is drained by the runner."""
        for task in list(self._tasks):
            task.cancel()
        if self.scheduler is not None:
            with contextlib.suppress(Exception):
                self.scheduler.shutdown(wait=False)
            self.scheduler = None

    def _job_time(self, job_id: str) -> str | None:
        job = self.scheduler.get_job(job_id) if self.scheduler is not None else None
        moment = job.next_run_time if job is not None else None
        return clock.iso(moment) if isinstance(moment, datetime) else None

    def status(self) -> ScheduleStatus:
        """The `schedule` part of `daemon status`."""
        return ScheduleStatus(
            daily_enabled=self.enabled,
            daily_time=str(self.at),
            daily_next=self._job_time(DAILY_JOB),
            catch_up_at=self._job_time(CATCH_UP_JOB),
            reclaim_next=self._job_time(RECLAIM_JOB),
            running=self.runner.running,
            last_daily=self.runner.last,
        )


def start_schedule(state: DaemonView, config: dict[str, Any]) -> Schedule:
    """Daemon start (daemon.md §4.5-7): check the registry, set up the runner, start the schedule."""
    _, warning = workspaces.read_or_empty(state.registry.global_root)
    if warning:
        log.warning("%s", warning)
    runner = DailyRunner(state, int(config["daily"]["days"]), log_path(state.log_file))
    schedule = Schedule(runner, config["daily"], float(config["cardReclaimMinutes"]))
    state.daily, state.schedule = runner, schedule
    schedule.start()
    return schedule
