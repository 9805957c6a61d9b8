"""The pure parts of the daily schedule: daily.time, the latest scheduled instant, catch-up, suspend."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from hippod.base import clock, daemon_state
from hippod.base.config import DAEMON_DEFAULTS, load_daemon_config
from hippod.base.daily_time import DailyTime, catch_up_due, latest_scheduled, parse_daily_time, wall_jumped
from hippod.daemon.app import new_state
from hippod.daemon.state import DaemonState
from hippod.jobs.daily_run import DailyRunner
from hippod.jobs.schedule import Schedule, start_schedule
from hippod.store.sqlite import memories
from hippod.store.stores import StoreRegistry

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("06:15", DailyTime(6, 15, 0)),
        ("6:05", DailyTime(6, 5, 0)),
        ("23:59:58", DailyTime(23, 59, 58)),
        (" 00:00 ", DailyTime(0, 0, 0)),
    ],
)
def test_parse_daily_time(text: str, expected: DailyTime) -> None:
    assert parse_daily_time(text) == expected


@pytest.mark.parametrize("text", ["24:00", "06:60", "06:15:60", "6", "06:15pm", "", "06-15"])
def test_parse_daily_time_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="is not a time of day"):
        parse_daily_time(text)


def test_daily_time_prints_seconds_only_when_set() -> None:
    assert str(DailyTime(6, 15)) == "06:15"
    assert str(DailyTime(6, 15, 7)) == "06:15:07"


def test_latest_scheduled_is_today_once_the_time_has_passed() -> None:
    now = datetime(2026, 10, 2, 9, 0, tzinfo=BERLIN)
    assert latest_scheduled(now, DailyTime(6, 15)) == datetime(2026, 10, 2, 6, 15, tzinfo=BERLIN)


def test_latest_scheduled_is_yesterday_before_the_time() -> None:
    now = datetime(2026, 10, 2, 6, 14, 59, tzinfo=BERLIN)
    assert latest_scheduled(now, DailyTime(6, 15)) == datetime(2026, 10, 1, 6, 15, tzinfo=BERLIN)


def test_latest_scheduled_includes_now_itself() -> None:
    now = datetime(2026, 10, 2, 6, 15, tzinfo=BERLIN)
    assert latest_scheduled(now, DailyTime(6, 15)) == now


def test_latest_scheduled_across_the_autumn_clock_change() -> None:
    # 2026-10-25 is 25 hours long in Berlin; 06:15 local is 05:15 UTC (was 04:15 UTC the day before).
    now = datetime(2026, 10, 25, 5, 30, tzinfo=UTC).astimezone(BERLIN)
    latest = latest_scheduled(now, DailyTime(6, 15))
    assert latest.astimezone(UTC) == datetime(2026, 10, 25, 5, 15, tzinfo=UTC)
    before = datetime(2026, 10, 25, 5, 0, tzinfo=UTC).astimezone(BERLIN)  # 06:00 local
    expected = datetime(2026, 10, 24, 4, 15, tzinfo=UTC)
    assert latest_scheduled(before, DailyTime(6, 15)).astimezone(UTC) == expected


def test_latest_scheduled_needs_a_time_zone() -> None:
    with pytest.raises(ValueError):
        latest_scheduled(datetime(2026, 10, 2, 9, 0), DailyTime(6, 15))


def test_catch_up_after_days_of_downtime_is_one_decision() -> None:
    now = datetime(2026, 10, 5, 9, 0, tzinfo=BERLIN)
    latest = latest_scheduled(now, DailyTime(6, 15))
    # Three scheduled instants were missed; the decision is simply "due", so one run follows.
    assert catch_up_due(now - timedelta(days=3, hours=5), latest)


def test_no_catch_up_when_a_run_started_after_the_latest_instant() -> None:
    now = datetime(2026, 10, 5, 9, 0, tzinfo=BERLIN)
    latest = latest_scheduled(now, DailyTime(6, 15))
    assert not catch_up_due(datetime(2026, 10, 5, 6, 15, tzinfo=BERLIN), latest)
    assert not catch_up_due(datetime(2026, 10, 5, 4, 20, tzinfo=UTC), latest)  # 06:20 Berlin, in UTC


def test_no_catch_up_without_any_record() -> None:
    assert not catch_up_due(None, datetime(2026, 10, 5, 6, 15, tzinfo=BERLIN))


def test_an_instant_missed_in_suspend_is_due_on_resume() -> None:
    # Last run yesterday 06:15; the machine slept from 23:00 to 08:30, across today's 06:15.
    last = datetime(2026, 10, 1, 6, 15, 2, tzinfo=BERLIN)
    resumed = datetime(2026, 10, 2, 8, 30, tzinfo=BERLIN)
    assert catch_up_due(last, latest_scheduled(resumed, DailyTime(6, 15)))
    # A suspend that did not cross 06:15 owes nothing.
    early = datetime(2026, 10, 2, 6, 0, tzinfo=BERLIN)
    assert not catch_up_due(last, latest_scheduled(early, DailyTime(6, 15)))


def test_wall_jump_detects_suspend_not_jitter() -> None:
    assert wall_jumped(wall_elapsed=9 * 3600 + 30, monotonic_elapsed=30)  # slept 9 h between checks
    assert not wall_jumped(wall_elapsed=30.4, monotonic_elapsed=30.0)
    assert not wall_jumped(wall_elapsed=29.0, monotonic_elapsed=30.0)  # clock stepped back a little


def write_daemon_json(root: Path, daily: object) -> None:
    (root / "daemon.json").write_text(json.dumps({"daily": daily}), encoding="utf-8")


def test_daemon_json_daily_defaults(tmp_path: Path) -> None:
    loaded = load_daemon_config(str(tmp_path))
    config, warnings = loaded.values, loaded.warnings
    assert config["daily"] == {"enabled": True, "time": "06:15", "days": 1, "catchUpDelaySeconds": 120}
    assert warnings == []


def test_daemon_json_daily_accepts_seconds_and_a_short_delay(tmp_path: Path) -> None:
    write_daemon_json(tmp_path, {"time": "14:03:09", "catchUpDelaySeconds": 1})
    loaded = load_daemon_config(str(tmp_path))
    config, warnings = loaded.values, loaded.warnings
    assert config["daily"] == {"enabled": True, "time": "14:03:09", "days": 1, "catchUpDelaySeconds": 1}
    assert warnings == []


def test_daemon_json_bad_daily_values_fall_back(tmp_path: Path) -> None:
    write_daemon_json(tmp_path, {"time": "25:00", "enabled": "yes", "days": 0, "catchUpDelaySeconds": -5})
    loaded = load_daemon_config(str(tmp_path))
    config, warnings = loaded.values, loaded.warnings
    assert config["daily"] == {"enabled": True, "time": "06:15", "days": 1, "catchUpDelaySeconds": 120}
    text = "\n".join(warnings)
    for key in ("daily.time", "daily.enabled", "daily.days", "daily.catchUpDelaySeconds"):
        assert key in text, text


# --- the Schedule in-process, over real stores ---------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DaemonState:
    """A daemon state over a real global store in a temporary HIPPO_HOME, not serving any socket."""
    home = tmp_path / "home"
    monkeypatch.setenv("HIPPO_HOME", str(home))
    return new_state(StoreRegistry(), str(tmp_path / "d.sock"), str(tmp_path / "hippod.log"), 1.0)


def plant_last_started(daemon: DaemonState, moment: datetime) -> None:
    daemon_state.update(daemon.registry.global_root, last_daily_started_at=clock.iso(moment))


async def sleep_count(daemon: DaemonState) -> int:
    store = await daemon.registry.open(daemon.registry.global_root)
    return int(await memories.get_meta(store.db.reader, "sleep_count") or 0)


@contextlib.asynccontextmanager
async def scheduled(daemon: DaemonState, **daily: object) -> AsyncIterator[Schedule]:
    """A started Schedule over the daemon's real stores, stopped and closed afterwards."""
    config = copy.deepcopy(DAEMON_DEFAULTS)
    config["daily"].update(daily)
    schedule = start_schedule(daemon, config)
    try:
        yield schedule
    finally:
        schedule.stop()
        await daemon.registry.close_all()


async def test_first_start_records_now_and_runs_nothing(daemon: DaemonState) -> None:
    async with scheduled(daemon, catchUpDelaySeconds=0) as schedule:
        recorded, _ = daemon_state.read(daemon.registry.global_root)
        started = clock.parse_iso(recorded["last_daily_started_at"])
        assert abs((datetime.now(UTC) - started).total_seconds()) < 60
        assert schedule.scheduler is not None
        job = schedule.scheduler.get_job("daily")
        assert (job.coalesce, job.max_instances, job.misfire_grace_time) == (True, 1, None)
        assert schedule.scheduler.get_job("daily_catch_up") is None
        assert schedule.status().daily_next is not None
        await asyncio.sleep(0.3)
        assert daemon.daily is not None and daemon.daily.last is None


async def test_missed_days_catch_up_once_after_the_delay(daemon: DaemonState) -> None:
    plant_last_started(daemon, datetime.now(UTC) - timedelta(days=3, hours=1))
    async with scheduled(daemon, catchUpDelaySeconds=0.2) as schedule:
        assert schedule.status().catch_up_at is not None
        runner = daemon.daily
        assert runner is not None
        for _ in range(100):
            if runner.last is not None:
                break
            await asyncio.sleep(0.05)
        assert runner.last is not None and runner.last.trigger == "catch-up"
        await asyncio.sleep(0.3)
        assert await sleep_count(daemon) == 1
        log_text = Path(runner.log_path).read_text(encoding="utf-8")
        assert log_text.count("Daily run started") == 1
        assert "Daily maintenance complete: 0 workspaces processed, 0 command failures." in log_text


async def test_resume_after_a_missed_instant_runs_once(daemon: DaemonState) -> None:
    # The clock watcher calls _run_if_due("resume") when it sees a suspend; the cron job may fire too.
    plant_last_started(daemon, datetime.now(UTC) - timedelta(days=1, hours=1))
    async with scheduled(daemon, catchUpDelaySeconds=3600) as schedule:
        await asyncio.gather(schedule._run_if_due("resume"), schedule._run_if_due("schedule"))
        assert await sleep_count(daemon) == 1
        assert daemon.daily is not None and daemon.daily.last is not None
        assert daemon.daily.last.trigger == "resume"
        await schedule._run_if_due("resume")  # nothing is owed any more
        assert await sleep_count(daemon) == 1


async def test_disabled_schedule_plans_nothing(daemon: DaemonState) -> None:
    plant_last_started(daemon, datetime.now(UTC) - timedelta(days=2))
    async with scheduled(daemon, enabled=False, catchUpDelaySeconds=0) as schedule:
        assert schedule.scheduler is not None
        assert [job.id for job in schedule.scheduler.get_jobs()] == ["card_reclaim"]
        status = schedule.status()
        assert (status.daily_enabled, status.daily_next, status.catch_up_at) == (False, None, None)
        assert status.reclaim_next is not None
        await asyncio.sleep(0.2)
        assert daemon.daily is not None and daemon.daily.last is None


async def test_clock_watcher_runs_a_missed_instant_after_a_suspend(
    daemon: DaemonState, tmp_path: Path
) -> None:
    # The one stand-in here is the wall clock the watcher reads: a real suspend cannot happen in a test.
    plant_last_started(daemon, datetime.now(UTC) - timedelta(days=1, hours=1))
    runner = DailyRunner(daemon, 1, str(tmp_path / "daily.log"))
    daily = dict(DAEMON_DEFAULTS["daily"], catchUpDelaySeconds=3600)
    schedule = Schedule(runner, daily)
    asleep = [0.0]
    schedule.wall_clock = lambda: time.time() + asleep[0]
    schedule.check_seconds = 0.05
    schedule.start()
    try:
        await asyncio.sleep(0.3)
        assert runner.last is None  # no jump, no run: the catch-up waits its hour
        asleep[0] = 9 * 3600.0  # the machine "slept" nine hours between two checks
        for _ in range(100):
            if runner.last is not None:
                break
            await asyncio.sleep(0.05)
        assert runner.last is not None and runner.last.trigger == "resume"
        assert await sleep_count(daemon) == 1
    finally:
        schedule.stop()
        await daemon.registry.close_all()
