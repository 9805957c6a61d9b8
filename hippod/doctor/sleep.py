"""The Sleep and Daily run checks: when each store last slept, how the last daily run went, the next one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hippoctl.protocol.replies import ScheduleStatus
from hippoctl.protocol.replies_doctor import FAIL, OK, WARN, Check
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.doctor import Findings, ago, hippoctl
from hippod.doctor.schedule_text import schedule_lines
from hippod.doctor.stores import StoreFacts

# A store that has not slept for longer than this is falling behind (our choice).
SLEEP_WARN_DAYS = 7


def _age_days(stamp: str | None, now: datetime) -> float | None:
    if stamp is None:
        return None
    try:
        return clock.days_between(stamp, now)
    except ValueError:
        return None


def sleep_check(stores: Sequence[StoreFacts], now: datetime) -> list[Check]:
    """Warn when a store last slept more than 7 days ago, or never slept while holding older memories."""
    notes: list[str] = []
    behind: list[tuple[StoreFacts, str]] = []
    for facts in stores:
        if not facts.readable:
            continue
        slept = _age_days(facts.last_sleep, now)
        if slept is None:
            oldest = _age_days(facts.oldest_memory, now)
            if oldest is not None and oldest > SLEEP_WARN_DAYS:
                age = plural(int(oldest), "day")
                behind.append((facts, f"{facts.kind} store never slept; its oldest memory is {age} old"))
            else:
                notes.append(f"{facts.kind}: no sleep yet")
        elif slept > SLEEP_WARN_DAYS:
            behind.append((facts, f"{facts.kind} store last slept {ago(slept * 86400)} ago"))
        else:
            notes.append(f"{facts.kind}: last sleep {ago(slept * 86400)} ago")
    found = Findings("Sleep")
    if behind:
        first = behind[0][0]
        if len(behind) > 1:
            fix = hippoctl("daily-runner")
        elif first.kind == "global":
            fix = hippoctl("sleep", "--global")
        else:
            fix = hippoctl("sleep", directory=first.project_dir)
        for _, message in behind:
            found.add(WARN, message, fix)
    return found.checks("; ".join(notes) or "no store to sleep yet")


def daily_check(schedule: ScheduleStatus | None, daily_log: str) -> Check:
    """Fail when the last daily run failed; show the last and the next run."""
    if schedule is None:
        return Check("Daily run", WARN, "the daemon has no schedule running", hippoctl("daemon", "restart"))
    summary = "; ".join(schedule_lines(schedule))
    last = schedule.last_daily
    if last is not None and not schedule.running:
        if last.finished_at is None:
            return Check(
                "Daily run", WARN, f"the last daily run did not finish; {summary}", hippoctl("daily-runner")
            )
        if not last.ok:
            detail = f" ({last.summary})" if last.summary else ""
            return Check(
                "Daily run",
                FAIL,
                f"the last daily run failed{detail}; {summary}",
                f"see {daily_log}, then run: {hippoctl('daily-runner')}",
            )
    return Check("Daily run", OK, summary)
