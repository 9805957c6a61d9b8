"""A busy daemon stops when asked (daemon.md §13): SIGTERM or `daemon stop` in the middle of embedding
an import, of an import, right after a large import, and of a sleep's plan; each time the process is
gone within `shutdownGraceSeconds` + 5 s, what was acknowledged is there after a restart, and what
was not embedded is embedded then."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from e2e.harness import niceness, parent_pid, pid_alive
from e2e.sleep_support import make, plant
from e2e.stop_support import (
    ACKNOWLEDGED,
    configure,
    db_handles,
    gone,
    holds,
    memories,
    notes,
    sigterm_gone,
    vectors,
)
from hippoctl.protocol import messages as m
from hippod.embed import queue

if TYPE_CHECKING:
    from e2e.harness import Hippo, RawConn

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
# Notes imported for the embedding stop: four of the embedding pass's batches.
EMBEDDED = 4 * queue.BATCH


def planner(daemon: int) -> int | None:
    """The pid of the daemon's child that plans a sleep, while one runs."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or parent_pid(int(name)) != daemon:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(b"hippod.store.sqlite.sleep_process" in arg for arg in argv):
            return int(name)
    return None


@pytest.mark.long
@pytest.mark.embeddings
def test_a_stop_while_embedding_an_import_keeps_everything_and_embeds_the_rest_after_restart(
    hippo: Hippo,
) -> None:
    configure(hippo)
    path = Path(hippo.root, "notes.md")
    # Seconds of the model's work: the pass stores a batch of vectors at a time, and the stop comes
    # after the first, with three left and the acknowledged memory queued behind them.
    notes(path, EMBEDDED, seed=1)
    hippo.start()
    assert hippo.ok("import", "--markdown", str(path)).stdout.startswith(f"Imported {EMBEDDED} of {EMBEDDED}")
    assert hippo.wait_for(lambda: vectors(hippo.db) > 0, 120), "the background pass never stored a vector"
    hippo.ok("remember", ACKNOWLEDGED)
    assert sigterm_gone(hippo) == 0
    assert vectors(hippo.db) < memories(hippo.db) == EMBEDDED + 1  # the stop came with some left to embed

    hippo.start()
    assert holds(hippo.db, ACKNOWLEDGED) and memories(hippo.db) == EMBEDDED + 1
    # The restarted daemon embeds, unasked, every memory the stop left without a vector.
    assert hippo.wait_for(lambda: vectors(hippo.db) == EMBEDDED + 1, 900, interval=0.5), vectors(hippo.db)
    line = hippo.ok("embed", "--status").stdout.splitlines()[0]
    assert f"{EMBEDDED + 1} of {EMBEDDED + 1} memories embedded" in line, line
    assert sigterm_gone(hippo) == 0


@pytest.mark.long
def test_a_stop_right_after_a_large_import_keeps_it_and_heals_its_mirrors_after_restart(hippo: Hippo) -> None:
    configure(hippo)
    path = Path(hippo.root, "notes.md")
    # More mirror files than a stop has time to write: the rest wait for the next start.
    notes(path, 30_000, seed=2)
    hippo.start()
    hippo.ok("remember", ACKNOWLEDGED)
    done = hippo.ctl("--timeout", "600", "import", "--markdown", str(path), timeout=900)
    assert done.returncode == 0 and done.stdout.startswith("Imported 30000 of 30000"), done.stderr
    assert sigterm_gone(hippo) == 0

    hippo.start()
    assert holds(hippo.db, ACKNOWLEDGED) and memories(hippo.db) == 30_001

    def healed() -> bool:
        [store] = hippo.json("status")["stores"]
        return bool(store["mirrors"]["missing"] == 0)

    assert hippo.wait_for(healed, 600, interval=0.5), hippo.json("status")["stores"][0]["mirrors"]


# A small vocabulary makes every line a candidate near-copy of many others: the duplicate check of
# this file runs for minutes.
SLOW_LINES = 30_000


def test_daemon_stop_during_an_import_rolls_it_back_and_tells_its_client(hippo: Hippo) -> None:
    configure(hippo)
    rng = random.Random(7)
    syllables = [c + v for c in "bcdfgklmnprstvz" for v in "aeiou"]
    words = sorted({"".join(rng.sample(syllables, 3)) for _ in range(400)})
    path = Path(hippo.root, "slow.md")
    lines = ["- " + " ".join(rng.sample(words, 12)) for _ in range(SLOW_LINES)]
    path.write_text("\n".join(["# Notes", *lines]) + "\n", encoding="utf-8")
    hippo.start()
    hippo.ok("remember", ACKNOWLEDGED)
    daemon = hippo.proc
    assert daemon is not None
    with hippo.raw(timeout=120) as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=hippo.root, body=m.Import(format="markdown", path=str(path))))
        while not (isinstance(frame := conn.recv(), m.Progress) and frame.line == "checking for duplicates"):
            assert isinstance(frame, m.Progress), frame
        stopper = subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "daemon", "stop"],
            env=hippo.env,
            cwd=hippo.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert gone(daemon) == 0
        # The client hears that its import did not happen, never that it did.
        while isinstance(frame := conn.recv(), m.Progress):
            pass
        assert isinstance(frame, m.Error), frame
    out, err = stopper.communicate(timeout=60)
    assert stopper.returncode == 0 and out == "hippod stopped\n", (out, err)

    hippo.start()
    assert holds(hippo.db, ACKNOWLEDGED) and memories(hippo.db) == 1  # the import was rolled back whole


def _planning(hippo: Hippo, conn: RawConn) -> tuple[int, int]:
    """Ask for a sleep on `conn` and wait until its planner runs: (the daemon's pid, the planner's)."""
    daemon = hippo.proc
    assert daemon is not None
    conn.hello()
    conn.send(m.Request(id=1, cwd=hippo.root, body=m.Sleep(no_share=True)))
    assert hippo.wait_for(lambda: planner(daemon.pid) is not None, 120)
    child = planner(daemon.pid)
    assert child is not None
    return daemon.pid, child


@pytest.mark.long
@linux_only
def test_a_stop_during_a_sleep_plan_cancels_the_sleep_and_keeps_the_store(hippo: Hippo) -> None:
    configure(hippo)
    # Long memories from a large vocabulary: comparing them takes the plan minutes.
    rng = random.Random(3)
    vocabulary = [f"w{n}x" for n in range(20_000)]
    plant(hippo.db, [make(" ".join(rng.choices(vocabulary, k=400))) for _ in range(3000)])
    hippo.start()
    hippo.ok("remember", ACKNOWLEDGED)
    with hippo.raw(timeout=600) as conn:
        daemon, child = _planning(hippo, conn)
        # The plan runs in a child of the daemon, below its priority (planning in a thread held the
        # interpreter's lock and slowed every request answered meanwhile), reading the store through
        # a connection of its own: once that is open, the plan runs.
        assert hippo.wait_for(lambda: db_handles(child, hippo.db) > 0, 120)
        assert niceness(child) == niceness(daemon) + 10
        assert sigterm_gone(hippo) == 0
        while isinstance(frame := conn.recv(), m.Progress):
            pass
        assert isinstance(frame, m.Error), frame
    assert not pid_alive(child)  # killed and reaped, not left planning

    hippo.start()
    assert holds(hippo.db, ACKNOWLEDGED) and memories(hippo.db) == 3001
    assert hippo.json("status")["stores"][0]["sleep_count"] == 0  # nothing of the sleep was written

    # A daemon killed outright takes its planner with it.
    with hippo.raw(timeout=600) as conn:
        _, child = _planning(hippo, conn)
        hippo.kill()
    assert hippo.wait_for(lambda: not pid_alive(child), 30)
