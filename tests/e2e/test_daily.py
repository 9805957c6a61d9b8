"""End-to-end: the daily run on its schedule, catch-up, the registry verbs, daily-runner, daemon status."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo

ONE_DONE = "Daily maintenance complete: 1 workspace processed, 0 command failures."
TWO_ONE_FAILED = "Daily maintenance complete: 2 workspaces processed, 1 command failure."


def write_daily(hippo: Hippo, **daily: Any) -> None:
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "daemon.json").write_text(json.dumps({"daily": daily}), encoding="utf-8")


def daemon_state(hippo: Hippo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(hippo.home, "daemon-state.json").read_text(encoding="utf-8"))
    return data


def daily_log(hippo: Hippo) -> str:
    path = Path(hippo.home, "logs", "daily.log")
    return path.read_text(encoding="utf-8") if path.exists() else ""


def project(hippo: Hippo, name: str, *, init: bool = True) -> str:
    folder = os.path.join(hippo.root, name)
    os.makedirs(folder)
    if init:
        hippo.ok("init", cwd=folder)
    return os.path.realpath(folder)


def sleeps(hippo: Hippo, cwd: str | None = None) -> int:
    args = ("status",) if cwd else ("--global", "status")
    return int(hippo.json(*args, cwd=cwd)["stores"][0]["sleep_count"])


def consolidate_rows(db: str) -> int:
    """Sleep runs recorded in a store's audit log, read straight from the file (daemon stopped)."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM audit_log WHERE op = 'consolidate'").fetchone()[0])


def test_daily_job_runs_at_the_configured_time(hippo: Hippo) -> None:
    # Seconds in daily.time are our addition, so that this can wait seconds instead of a minute.
    at = datetime.now().astimezone() + timedelta(seconds=6)
    write_daily(hippo, time=at.strftime("%H:%M:%S"), catchUpDelaySeconds=0)
    hippo.start()
    proj = project(hippo, "proj")
    assert sleeps(hippo, proj) == 0
    assert datetime.now().astimezone() < at.replace(microsecond=0), "the set-up took longer than the margin"

    assert hippo.wait_for(lambda: ONE_DONE in daily_log(hippo), timeout=30), daily_log(hippo)
    assert datetime.now().astimezone() >= at.replace(microsecond=0)
    assert f"({'schedule'})" in daily_log(hippo)
    assert sleeps(hippo, proj) == 1
    assert sleeps(hippo) == 1
    state = daemon_state(hippo)
    assert state["last_daily_result"]["summary"] == ONE_DONE
    assert state["last_daily_result"]["trigger"] == "schedule"
    assert state["last_daily_finished_at"] >= state["last_daily_started_at"]


def test_first_start_runs_nothing_and_a_missed_run_catches_up_once(hippo: Hippo) -> None:
    write_daily(hippo, time="06:15", catchUpDelaySeconds=0.5)
    hippo.start()
    proj = project(hippo, "proj")
    # No record yet: it is initialised to now and nothing runs.
    assert "last_daily_started_at" in daemon_state(hippo)
    hippo.ok("daemon", "status")
    assert hippo.stop() == 0
    assert daily_log(hippo) == ""
    assert consolidate_rows(os.path.join(proj, ".hippo", "hippo.db")) == 0

    # The daemon was down over at least one 06:15: the next start catches up, once.
    state = daemon_state(hippo)
    yesterday = datetime.now(UTC) - timedelta(days=1, hours=1)
    state["last_daily_started_at"] = yesterday.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    Path(hippo.home, "daemon-state.json").write_text(json.dumps(state), encoding="utf-8")
    hippo.start()
    assert hippo.wait_for(lambda: ONE_DONE in daily_log(hippo), timeout=20), daily_log(hippo)
    assert "(catch-up)" in daily_log(hippo)
    assert sleeps(hippo, proj) == 1
    assert daemon_state(hippo)["last_daily_started_at"] > yesterday.isoformat()

    # A restart now owes nothing: a run has started since the latest 06:15.
    assert hippo.stop() == 0
    hippo.start()
    hippo.wait_for(lambda: False, timeout=1.5)
    assert hippo.stop() == 0
    assert daily_log(hippo).count("Daily run started") == 1
    assert consolidate_rows(os.path.join(proj, ".hippo", "hippo.db")) == 1
    assert consolidate_rows(hippo.db) == 1


def test_workspaces_verbs_edit_the_registry(hippo: Hippo) -> None:
    hippo.start()
    assert hippo.ok("workspaces").stdout.startswith("No workspaces registered.")
    inited = project(hippo, "b-proj")  # init registers its project
    bare = project(hippo, "a-bare", init=False)
    gone = project(hippo, "c-gone", init=False)

    done = hippo.ok("workspaces", "add", "a-bare")  # relative to the client's cwd
    assert done.stdout.strip() == f"Added {bare} to the workspace registry"
    assert f"no hippo store in {bare} yet" in done.stderr
    assert hippo.ok("workspaces", "add", bare + "/").stdout.strip() == f"{bare} is already registered"
    hippo.ok("workspaces", "add", gone)
    os.rmdir(gone)

    registry = json.loads(Path(hippo.home, "workspaces.json").read_text(encoding="utf-8"))
    assert registry == {"version": 1, "workspaces": [bare, inited, gone]}

    listed = hippo.ok("workspaces", "list").stdout.splitlines()
    assert listed == [
        "3 registered workspaces:",
        f"  {bare}  (no hippo store)",
        f"  {inited}",
        f"  {gone}  (missing)",
    ]
    data = hippo.json("workspaces")
    assert [(w["path"], w["exists"], w["has_store"]) for w in data["workspaces"]] == [
        (bare, True, False),
        (inited, True, True),
        (gone, False, False),
    ]

    done = hippo.ctl("workspaces", "add", "no-such-dir")
    assert done.returncode == 1 and done.stderr.startswith("hippoctl: no such directory: "), done.stderr
    done = hippo.ok("workspaces", "remove", gone)
    assert done.stdout.strip() == f"Removed {gone} from the workspace registry"
    done = hippo.ctl("workspaces", "remove", gone)
    assert done.returncode == 1 and "not a registered workspace" in done.stderr
    assert hippo.ctl("workspaces", "add").returncode == 2

    Path(hippo.home, "workspaces.json").write_text("{broken", encoding="utf-8")
    done = hippo.ctl("workspaces", "add", bare)
    assert done.returncode == 1 and "workspaces.json is unreadable" in done.stderr, done.stderr
    assert Path(hippo.home, "workspaces.json").read_text(encoding="utf-8") == "{broken"


def test_daily_runner_streams_counts_failures_and_status_shows_it(hippo: Hippo) -> None:
    write_daily(hippo, time="06:15")
    hippo.start()
    good = project(hippo, "good")
    project(hippo, "bare", init=False)
    hippo.ok("workspaces", "add", "bare")
    broken = project(hippo, "broken", init=False)
    os.makedirs(os.path.join(broken, ".hippo"))
    Path(broken, ".hippo", "hippo.db").write_bytes(b"this is not a database" * 100)
    hippo.ok("workspaces", "add", broken)

    status = hippo.ok("daemon", "status").stdout
    assert "last daily run: never" in status
    upcoming = next(line for line in status.splitlines() if line.startswith("next scheduled: "))
    pattern = r"next scheduled: daily \d{4}-\d\d-\d\d 06:15 \(local\) · card reclaim \d\d:\d\d"
    assert re.fullmatch(pattern, upcoming), upcoming

    done = hippo.ctl("daily-runner")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Daily run started ") and lines[0].endswith("(manual)")
    assert f"{good}:" in lines and f"{broken}:" in lines
    assert f"{os.path.realpath(os.path.join(hippo.root, 'bare'))}: skipped (no .hippo/hippo.db)" in lines
    assert any(line.startswith("  sleep: ") and line.endswith(" open conflicts") for line in lines), lines
    assert any(line.startswith("  sleep: failed (") for line in lines), lines
    # The broken store failed one step; the run went on to the global store.
    assert lines[-1] == TWO_ONE_FAILED
    assert lines.count(TWO_ONE_FAILED) == 1
    assert sleeps(hippo, good) == 1
    assert sleeps(hippo) == 1

    status = hippo.ok("daemon", "status").stdout
    last = next(line for line in status.splitlines() if line.startswith("last daily run: "))
    assert last.endswith(" failed (2 workspaces, 1 failure)"), last
    info = hippo.json("daemon", "status")["schedule"]
    assert info["daily_enabled"] is True and info["daily_time"] == "06:15"
    assert info["daily_next"] is not None and info["daily_next"] > info["last_daily"]["started_at"]
    assert info["last_daily"]["workspaces"] == 2 and info["last_daily"]["failures"] == 1
    assert info["last_daily"]["ok"] is False


def test_two_daily_runners_share_one_run(hippo: Hippo) -> None:
    write_daily(hippo, time="06:15")
    hippo.start()
    proj = project(hippo, "proj")
    db = os.path.join(proj, ".hippo", "hippo.db")
    runners: list[subprocess.Popen[str]] = []
    # Holding the project's write lock keeps the first run inside its sleep until the second client joined.
    blocker = sqlite3.connect(db, isolation_level=None, timeout=10)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        for _ in range(2):
            runners.append(
                subprocess.Popen(
                    [sys.executable, "-m", "hippoctl", "--json", "daily-runner"],
                    cwd=hippo.root,
                    env=hippo.env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            if len(runners) == 1:
                assert hippo.wait_for(lambda: f"{proj}:" in daily_log(hippo), timeout=20), daily_log(hippo)
        assert runners[1].stderr is not None
        joined_head = runners[1].stderr.readline()
        assert joined_head.strip() == "(a daily run is already going; joining it)"
    finally:
        blocker.rollback()
        blocker.close()
    replies = []
    for runner in runners:
        # Plain reads: communicate() would skip what readline() already buffered.
        assert runner.stdout is not None and runner.stderr is not None
        out, err = runner.stdout.read(), runner.stderr.read()
        assert runner.wait(timeout=30) == 0, err
        replies.append((json.loads(out), err))
    assert [reply["joined"] for reply, _ in replies] == [False, True]
    assert replies[0][0]["run"] == replies[1][0]["run"]
    assert replies[0][0]["run"]["summary"] == ONE_DONE
    for _, err in replies:  # both streamed the run's lines, the joiner from its start
        assert f"{proj}:" in err and "  sleep: 0 active, 0 to dormant, 0 merged" in err
    assert daily_log(hippo).count("Daily run started") == 1
    assert sleeps(hippo, proj) == 1
    assert sleeps(hippo) == 1
