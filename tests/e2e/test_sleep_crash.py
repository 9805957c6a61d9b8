"""One transaction per sleep, proven with SIGKILL; concurrent sleeps of one store join one run."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

import pytest

from e2e.sleep_support import make, plant, project, query
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = "2031-01-01T00:00:00Z"
RECENT = "2030-12-31T00:00:00.000Z"


def _rows(count: int) -> list[Any]:
    """Half faded (they go dormant), half fresh pairs that merge: every phase has real work."""
    rows = [make(f"Faded note {i}: the legacy cron job {i} rotated logs at midnight") for i in range(count)]
    for i in range(count // 2):
        # Words of its own, so that each pair merges with itself only.
        text = " ".join(f"t{i}n{k}" for k in range(10)) + " nightly export failed"
        rows.append(make(text, last_retrieved=RECENT, created=RECENT))
        rows.append(make(text + " again", last_retrieved=RECENT, created=RECENT))
    return rows


def _table(db: str) -> list[tuple[Any, ...]]:
    return query(db, "SELECT * FROM memories ORDER BY id")


def _slept(hippo: Hippo, folder: str) -> Any:
    """A sleep's reply, heard as its client hears it: each frame within a minute of the last (the
    daemon beats every second while a sleep runs), however long the whole takes. Its planner runs
    below the daemon's priority, so on a loaded machine the 8,000 rows' plan can take minutes; a
    guard on the whole (the client runs of `hippo.json`) would fail a sleep that is only slow."""
    with hippo.raw(timeout=60) as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=folder, body=m.Sleep(no_share=True)))
        while isinstance(message := conn.recv(), m.Progress):
            pass
    assert isinstance(message, m.Result), message
    return message.data


@pytest.mark.long
def test_killed_sleep_leaves_the_store_as_before(hippo: Hippo) -> None:
    """SIGKILL after phase 3 (decay) was written inside the open transaction, before the commit.

    With --verbose the daemon streams a progress line as it starts writing each phase; the line for
    phase 8 arrives after every decay row was moved inside the transaction, while merge, dedupe, junk,
    conflicts and the record are still to be written. If the phases committed separately, the
    dormant moves would survive the kill.
    """
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    plant(db, _rows(4000))
    before = _table(db)
    hippo.start(fake_now=NOW)
    seen: list[str] = []
    with hippo.raw(timeout=60) as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=folder, body=m.Sleep(no_share=True, verbose=True)))
        while True:
            message = conn.recv()
            assert isinstance(message, m.Progress), (message, seen)
            seen.append(message.line)
            if message.line == "sleep: writing phase 8 (merge)":
                hippo.kill()
                break
    assert "sleep: writing phase 3 (decay)" in seen
    assert os.path.getsize(db + "-wal") > 0  # the moved rows had reached the log, uncommitted
    hippo.start(fake_now=NOW)
    assert hippo.json("status", cwd=folder)["stores"][0]["sleep_count"] == 0
    hippo.stop()
    assert _table(db) == before
    assert query(db, "SELECT count(*) FROM dormant_memories") == [(0,)]
    assert query(db, "SELECT count(*) FROM consolidation_runs") == [(0,)]
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'dormant_move'") == [(0,)]
    # The same sleep, left alone, does all of it.
    hippo.start(fake_now=NOW)
    data = _slept(hippo, folder)
    assert data["dormant_moved"] == 4000 and data["semantic_created"] == 2000


def test_concurrent_sleeps_join_one_run(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    plant(db, _rows(1500))
    hippo.start(fake_now=NOW)
    replies: list[Any] = [None, None]
    conns = [hippo.raw(timeout=60), hippo.raw(timeout=60)]
    for conn in conns:
        conn.hello()
    # Both requests are on the wire before the first can finish (its planning alone takes a while).
    for conn in conns:
        conn.send(m.Request(id=1, cwd=folder, body=m.Sleep(no_share=True)))

    def wait(index: int) -> None:
        while True:
            message = conns[index].recv()
            if not isinstance(message, m.Progress):
                replies[index] = message
                return

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for conn in conns:
        conn.close()
    assert all(isinstance(r, m.Result) for r in replies), replies
    assert replies[0].data == replies[1].data and replies[0].text == replies[1].text
    assert replies[0].data["dormant_moved"] == 1500
    assert hippo.json("status", cwd=folder)["stores"][0]["sleep_count"] == 1
    hippo.stop()
    assert query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)]
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'consolidate'") == [(1,)]
