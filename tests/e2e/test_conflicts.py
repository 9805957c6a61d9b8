"""Conflicts end to end: detection, the listing, mirrors, auto-resolution and `resolve`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

ON = "The feature flag is enabled for production users"
OFF = "The feature flag is disabled for production users"


def _pair(hippo: Hippo, folder: str, a: str = ON, b: str = OFF) -> tuple[str, str]:
    first = hippo.json("remember", a, cwd=folder)["id"]
    second = hippo.json("remember", b, cwd=folder)["id"]
    return first, second


def test_detect_list_mirror_and_keep(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    on, off = _pair(hippo, folder)
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert data["conflicts"] == {"open": 1, "new": 1, "auto_resolved": 0}
    a, b = sorted((on, off))
    text = {on: ON, off: OFF}
    done = hippo.ok("conflicts", cwd=folder)
    reason = "enabled/disabled mismatch on overlapping statement"
    assert done.stdout.splitlines() == [
        f"#1 [open] score=0.67 {reason}",
        f"  {a}  {text[a]}",
        f"  {b}  {text[b]}",
    ]
    mirror = os.path.join(folder, ".hippo", "conflicts", "conflict_1.md")
    assert hippo.wait_for(lambda: os.path.isfile(mirror), timeout=10)
    assert f"memory_a: {a}" in open(mirror, encoding="utf-8").read()  # noqa: SIM115
    inspect = hippo.json("inspect", on, cwd=folder)
    assert inspect["memory"]["conflicts_with"] == [off]
    assert hippo.json("status", cwd=folder)["stores"][0]["open_conflicts"] == 1

    shown = hippo.ok("resolve", "1", cwd=folder).stdout
    assert shown.startswith(f"#1 [open] score=0.67 {reason}\n") and ON in shown and OFF in shown
    done = hippo.ctl("resolve", "1", "--keep", "mem_000000000000", cwd=folder)
    assert done.returncode == 2 and "--keep must be one side of conflict #1" in done.stderr
    before = hippo.json("inspect", off, cwd=folder)["memory"]["half_life_days"]  # merged: demoted already
    done = hippo.ok("resolve", "1", "--keep", on, cwd=folder)
    assert done.stdout.strip() == f"Resolved conflict #1: kept {on}; {off} half-life halved"
    assert hippo.json("inspect", off, cwd=folder)["memory"]["half_life_days"] == before / 2
    assert hippo.json("inspect", on, cwd=folder)["memory"]["conflicts_with"] == []
    assert hippo.wait_for(lambda: not os.path.exists(mirror), timeout=10)
    # Detected again, but a user resolved it: it stays resolved.
    again = hippo.json("sleep", "--no-share", cwd=folder)
    assert again["conflicts"] == {"open": 0, "new": 0, "auto_resolved": 0}
    listed = hippo.json("conflicts", "--status", "all", cwd=folder)["conflicts"]
    assert [(c["id"], c["status"], c["resolved_by"]) for c in listed] == [(1, "resolved", "user")]
    assert hippo.ok("conflicts", cwd=folder).stdout.strip() == "No open conflicts."
    done = hippo.ctl("resolve", "1", "--keep", on, cwd=folder)
    assert done.returncode == 1 and "already resolved" in done.stderr
    assert hippo.ctl("resolve", "7", cwd=folder).returncode == 1
    hippo.stop()
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'conflict_resolve'") == [(1,)]


def test_auto_resolved_when_no_longer_detected(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    on, off = _pair(hippo, folder, "Always use Sled for local storage", "Never use Sled for local storage")
    assert hippo.json("sleep", "--no-share", cwd=folder)["conflicts"]["new"] == 1
    hippo.ok("forget", off, cwd=folder)
    data = hippo.json("sleep", "--no-share", cwd=folder)
    assert data["conflicts"] == {"open": 0, "new": 0, "auto_resolved": 1}
    listed = hippo.json("conflicts", "--status", "resolved", cwd=folder)["conflicts"]
    assert [(c["status"], c["resolved_by"]) for c in listed] == [("resolved", "auto")]
    assert hippo.json("inspect", on, cwd=folder)["memory"]["conflicts_with"] == []


def test_resolve_forget_and_reject_loser(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    on, off = _pair(hippo, folder)
    sync_on, sync_off = _pair(
        hippo, folder, "Background sync works on iOS", "Background sync is broken on iOS"
    )
    hippo.json("sleep", "--no-share", cwd=folder)
    listed = {
        frozenset((c["a"]["id"], c["b"]["id"])): c["id"]
        for c in hippo.json("conflicts", cwd=folder)["conflicts"]
    }
    flag, sync = listed[frozenset((on, off))], listed[frozenset((sync_on, sync_off))]
    done = hippo.ok("resolve", str(flag), "--keep", on, "--forget", cwd=folder)
    assert done.stdout.strip() == f"Resolved conflict #{flag}: kept {on}; {off} forgotten"
    assert hippo.ctl("inspect", off, cwd=folder).returncode == 1
    done = hippo.ok(
        "resolve", str(sync), "--keep", sync_on, "--reject-loser", "--reason", "it works now", cwd=folder
    )
    assert done.stdout.strip().endswith(f"{sync_off} value rejected and removed")
    refused = hippo.ctl("remember", "background SYNC is   broken on iOS", cwd=folder)
    assert refused.returncode == 1 and "rejected" in refused.stderr
    hippo.stop()
    (row,) = query(db, "SELECT reason, source_memory_id FROM rejected_values")
    assert row == ("it works now", sync_off)
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'reject_value'") == [(1,)]
    assert query(db, "SELECT count(*) FROM memories WHERE id IN (?, ?)", (off, sync_off)) == [(0,)]


def test_a_memory_restored_from_dormant_is_checked_again(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-01-01T00:00:00Z")
    old = hippo.json("remember", "The feature flag is enabled for production users")["id"]
    hippo.stop()
    hippo.start(fake_now="2031-01-02T00:00:00Z")
    assert hippo.json("sleep")["dormant_moved"] == 1
    hippo.ok("remember", "The feature flag is disabled for production users")
    assert hippo.json("sleep")["conflicts"]["open"] == 0  # the old side is dormant
    hippo.ok("dormant", "restore", old)
    # Both sides were there before the last sleep, but the restored one changed since: compared.
    assert hippo.json("sleep")["conflicts"] == {"open": 1, "new": 1, "auto_resolved": 0}
