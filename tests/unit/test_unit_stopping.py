"""The last resort of a stopping daemon (hippod/daemon/stopping.py): a process that something still holds past
its grace exits anyway, with status 0, saying so in its log."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from hippod.daemon.stopping import CANCEL_SECONDS, CLOSE_SECONDS, StopClock

HELD = textwrap.dedent(
    """
    import logging, sys, threading
    from hippod.daemon.stopping import StopClock, arm_exit

    logging.basicConfig(filename=sys.argv[1], level=logging.INFO)
    arm_exit(StopClock(0.5))
    # A thread the interpreter would wait for at exit, doing work that never checks for a stop.
    threading.Thread(target=threading.Event().wait).start()
    """
)


def test_a_process_held_past_its_grace_exits_with_status_0_and_says_why(tmp_path: Path) -> None:
    log = tmp_path / "hippod.log"
    done = subprocess.run([sys.executable, "-c", HELD, str(log)], timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "still stopping 4 s after the 0.5 s grace; exiting now" in log.read_text()


def test_the_stop_clock_counts_from_its_start() -> None:
    clock = StopClock(2.0, started=100.0)
    assert clock.deadline == 102.0
    later = StopClock(0.0)
    assert later.left() == 0.0
    assert 0 < later.unwind() <= CANCEL_SECONDS
    assert later.close_by() >= later.deadline + CLOSE_SECONDS - 0.01
