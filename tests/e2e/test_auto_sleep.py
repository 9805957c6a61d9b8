"""autoSleep (memory-model.md §4, sleep.md §1): after `autoSleep.threshold` new memories in 24 hours
since the last sleep, the daemon sleeps the store in the background, at most once per 24 hours."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import query

if TYPE_CHECKING:
    from e2e.harness import Hippo

WAIT = 60.0
TOPICS = ("deploy", "cache", "lint", "backup", "schema", "queue", "proxy", "tokens", "vault", "mirror")


def configure(hippo: Hippo, auto_sleep: dict[str, object]) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    Path(hippo.home, "config.json").write_text(json.dumps({"autoSleep": auto_sleep}))


def sleeps(hippo: Hippo) -> int:
    [store] = hippo.json("status", "--global")["stores"]
    return int(store["sleep_count"])


def remember(hippo: Hippo, first: int, last: int) -> None:
    for i in range(first, last):
        hippo.ok("remember", f"The {TOPICS[i]} step needs its own runbook entry", "--global")


def auto_lines(hippo: Hippo) -> list[str]:
    with open(hippo.log, encoding="utf-8") as handle:
        return [line for line in handle if "autoSleep: " in line]


def test_the_threshold_starts_one_sleep_per_window(hippo: Hippo) -> None:
    configure(hippo, {"threshold": 5})
    remember(hippo, 0, 4)
    assert sleeps(hippo) == 0  # four are fewer than five, whenever their checks run
    remember(hippo, 4, 5)
    assert hippo.wait_for(lambda: sleeps(hippo) == 1, WAIT), hippo.json("status", "--global")
    [line] = auto_lines(hippo)
    assert f"autoSleep: {os.path.realpath(hippo.home)} took 5 new memories since its last sleep" in line
    # Five more within the same 24 hours start no second automatic sleep; the sleep verb still runs.
    remember(hippo, 5, 10)
    hippo.ok("sleep", "--global")
    assert sleeps(hippo) == 2
    hippo.stop()
    assert len(auto_lines(hippo)) == 1
    assert query(hippo.db, "SELECT count(*) FROM audit_log WHERE op = 'consolidate'") == [(2,)]


def test_turned_off_it_never_runs(hippo: Hippo) -> None:
    configure(hippo, {"enabled": False, "threshold": 2})
    remember(hippo, 0, 4)
    # Stopping waits for the daemon's background work, so any sleep it had started would be recorded.
    hippo.stop()
    assert query(hippo.db, "SELECT value FROM meta WHERE key = 'sleep_count'") == [("0",)]
    assert auto_lines(hippo) == []
