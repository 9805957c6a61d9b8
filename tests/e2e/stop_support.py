"""Helpers for the stop tests: a daemon whose grace is short, stopped in the middle of long work and
required to be gone within its grace and 5 s (daemon.md §13), and what to read back afterwards."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import query

if TYPE_CHECKING:
    from e2e.harness import Hippo

# The daemon's shutdownGraceSeconds in these tests, and the bound its stop must keep: the grace is
# the budget of the work under way, the 5 s the slack of everything after it.
GRACE = 2
BOUND = GRACE + 5
ACKNOWLEDGED = "The staging deploy needs the VPN up first"


def configure(hippo: Hippo, store: dict[str, Any] | None = None) -> None:
    """daemon.json with the short grace (and no daily run), and the global store's config.json:
    no automatic sleep unless `store` says otherwise."""
    os.makedirs(hippo.home, mode=0o700, exist_ok=True)
    daemon = {"shutdownGraceSeconds": GRACE, "daily": {"enabled": False}}
    Path(hippo.home, "daemon.json").write_text(json.dumps(daemon), encoding="utf-8")
    config = {"autoSleep": {"enabled": False}, **(store or {})}
    Path(hippo.home, "config.json").write_text(json.dumps(config), encoding="utf-8")


def texts(count: int, seed: int) -> list[str]:
    """`count` texts of 12 pseudo-words from 4,000: no two are near-copies."""
    rng = random.Random(seed)
    words = sorted(
        {"".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(4000)}
    )
    return [" ".join(rng.sample(words, 12)) for _ in range(count)]


def notes(path: Path, lines: int, seed: int) -> None:
    """A Markdown file of `lines` bullets (see `texts`)."""
    bullets = ["- " + text for text in texts(lines, seed)]
    path.write_text("\n".join(["# Notes", *bullets]) + "\n", encoding="utf-8")


def sigterm_gone(hippo: Hippo) -> int:
    """SIGTERM the daemon; its exit status, which must come within BOUND seconds."""
    proc = hippo.proc
    assert proc is not None
    proc.send_signal(signal.SIGTERM)
    return gone(proc)


def gone(proc: subprocess.Popen[str]) -> int:
    """The daemon's exit status, once it is gone; failing when it is still there BOUND seconds on."""
    try:
        return proc.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"hippod was still running {BOUND} s after it was asked to stop") from None


def count(db: str, sql: str, params: tuple[Any, ...] = ()) -> int:
    """One number read from a store's file (read-only, beside a running daemon)."""
    if not os.path.exists(db):
        return 0
    [(value,)] = query(db, sql, params)
    return int(value)


def memories(db: str) -> int:
    return count(db, "SELECT count(*) FROM memories")


def vectors(db: str) -> int:
    """Memories with a stored vector (0 before the first one made the table hold any)."""
    try:
        return count(db, "SELECT count(*) FROM embeddings")
    except sqlite3.OperationalError:
        return 0


def holds(db: str, content: str) -> bool:
    return count(db, "SELECT count(*) FROM memories WHERE content = ?", (content,)) == 1


def db_handles(pid: int, db: str) -> int:
    """Descriptors the process has open on the store's file and its WAL (a new connection adds one)."""
    names = {db, db + "-wal"}
    found = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found += os.readlink(f"/proc/{pid}/fd/{fd}") in names
        except OSError:
            continue
    return found
