"""When the daily run is due: its clock time, the latest scheduled instant, catch-up (sleep.md §10.2-3);
and where it keeps its log."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from datetime import time as clock_time

_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")

# A wall clock that moved this much further than the monotonic clock between two checks means the
# machine was suspended (or its clock was set forward): far above scheduling jitter, far below a night.
WALL_JUMP_SECONDS = 60.0

LOG_NAME = "daily.log"


def log_path(daemon_log: str) -> str:
    """The daily run's log, beside the daemon's own log file `daemon_log`."""
    return os.path.join(os.path.dirname(daemon_log), LOG_NAME)


@dataclass(frozen=True, slots=True)
class DailyTime:
    """A local clock time of day; seconds are our addition so a test can schedule a few seconds ahead."""

    hour: int
    minute: int
    second: int = 0

    def __str__(self) -> str:
        text = f"{self.hour:02d}:{self.minute:02d}"
        return f"{text}:{self.second:02d}" if self.second else text


def parse_daily_time(text: str) -> DailyTime:
    """ "HH:MM" or "HH:MM:SS" (24-hour) as a DailyTime; ValueError names what is wrong."""
    match = _TIME.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a time of day (HH:MM or HH:MM:SS)")
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{text!r} is not a time of day (HH:MM or HH:MM:SS)")
    return DailyTime(hour, minute, second)


def latest_scheduled(now: datetime, at: DailyTime) -> datetime:
    """The latest instant <= now whose clock time in now's time zone is `at` (now must be aware).

    Comparisons go through UTC, because Python compares two datetimes sharing a tzinfo by their
    wall-clock fields, which is wrong across a daylight-saving change.
    """
    if now.tzinfo is None:
        raise ValueError("now must carry a time zone")
    zone = now.tzinfo
    instant = now.astimezone(UTC)
    for back in range(3):
        day = now.date() - timedelta(days=back)
        candidate = datetime.combine(day, clock_time(at.hour, at.minute, at.second), tzinfo=zone)
        if candidate.astimezone(UTC) <= instant:
            return candidate
    raise AssertionError("a time of day always occurs within the last two days")  # pragma: no cover


def catch_up_due(last_started: datetime | None, latest: datetime) -> bool:
    """True when no run has started since the latest scheduled instant (sleep.md §10.3).

    With no record at all the caller initialises the state to now and runs nothing (our choice), so
    a first start never runs a surprise job.
    """
    return last_started is not None and last_started.astimezone(UTC) < latest.astimezone(UTC)


def wall_jumped(wall_elapsed: float, monotonic_elapsed: float, tolerance: float = WALL_JUMP_SECONDS) -> bool:
    """True when the wall clock moved `tolerance` seconds more than the monotonic clock.

    On Linux the monotonic clock (which asyncio timers use) stands still while the machine is
    suspended, while the wall clock keeps going: the gap between the two is the time asleep.
    """
    return wall_elapsed - monotonic_elapsed > tolerance
