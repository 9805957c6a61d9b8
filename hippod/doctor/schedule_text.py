"""The schedule lines of `daemon status` (daemon.md §16), in local time."""

from __future__ import annotations

from datetime import datetime

import tzlocal

from hippoctl.protocol.replies import DailyRunResult, ScheduleStatus
from hippoctl.protocol.wording import plural
from hippod.base import clock


def _moment(stamp: str) -> datetime:
    return clock.parse_iso(stamp).astimezone(tzlocal.get_localzone())


def _local(stamp: str, *, with_date: bool = True) -> str:
    """A stored UTC instant as local wall time; seconds only when they are not zero."""
    moment = _moment(stamp)
    text = moment.strftime("%Y-%m-%d %H:%M" if with_date else "%H:%M")
    return text + moment.strftime(":%S") if moment.second else text


def _last_run(last: DailyRunResult) -> str:
    start = _local(last.started_at)
    if last.finished_at is None:
        return f"{start} (did not finish)"
    same_day = _moment(last.finished_at).date() == _moment(last.started_at).date()
    verdict = "ok" if last.ok else "failed"
    return (
        f"{start} → {_local(last.finished_at, with_date=not same_day)} {verdict} "
        f"({plural(last.workspaces, 'workspace')}, {plural(last.failures, 'failure')})"
    )


def schedule_lines(schedule: ScheduleStatus) -> list[str]:
    """`next scheduled: …` and `last daily run: …`."""
    if not schedule.daily_enabled:
        upcoming = "daily off (daemon.json daily.enabled is false)"
    else:
        upcoming = f"daily {_local(schedule.daily_next)} (local)" if schedule.daily_next else "daily -"
        if schedule.catch_up_at:
            upcoming += f" · catch-up {_local(schedule.catch_up_at)}"
    if schedule.reclaim_next:
        # Every few minutes: the time of day says it (daemon.md §14's "card reclaim 11:45").
        upcoming += f" · card reclaim {_moment(schedule.reclaim_next).strftime('%H:%M')}"
    lines = [f"next scheduled: {upcoming}"]
    last = "never" if schedule.last_daily is None else _last_run(schedule.last_daily)
    if schedule.running:
        last = f"running now; before: {last}"
    lines.append(f"last daily run: {last}")
    return lines
