"""A stopping daemon's time (daemon.md §13): what it waits for shares `shutdownGraceSeconds`,
counted from the moment it was asked to stop, and it is gone a few seconds after that.

Work still running when the grace ends is cancelled: a request's or a sleep's transaction rolls
back (nothing was acknowledged for it), work in a worker thread ends at its next checkpoint
(thread_stop.py), and background embedding was stopped at once, the memories it had not reached
being embedded after the next start (embed/queue.py). Should something still hold the process (a
statement or a thread that cannot be interrupted), `arm_exit` ends it anyway EXIT_AFTER seconds past
the grace, with exit status 0: everything acknowledged was committed before its reply, and SQLite's
write-ahead log keeps every database whole.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

log = logging.getLogger("hippod.app")

# What work cancelled at the end of the grace gets to unwind (roll back, leave its thread).
CANCEL_SECONDS = 1.0
# Past the grace, the stores' closing may still write pending mirrors this long.
CLOSE_SECONDS = 1.0
# Past the grace, the process exits whatever still runs (the stop's bound is grace + 5 s).
EXIT_AFTER = 4.0


class StopClock:
    """The deadlines of one stop, from the moment it began (time.monotonic())."""

    def __init__(self, grace: float, started: float | None = None) -> None:
        self.grace = max(0.0, grace)
        self.started = time.monotonic() if started is None else started
        self.deadline = self.started + self.grace

    def left(self) -> float:
        """Seconds of the grace left (0 once it is over)."""
        return max(0.0, self.deadline - time.monotonic())

    def unwind(self) -> float:
        """Seconds cancelled work may still take to end: the rest of the grace, then CANCEL_SECONDS."""
        return max(0.0, self.deadline - time.monotonic()) + CANCEL_SECONDS

    def close_by(self) -> float:
        """When the stores' closing stops writing mirrors (a time.monotonic())."""
        return max(self.deadline, time.monotonic()) + CLOSE_SECONDS


def arm_exit(clock: StopClock) -> threading.Thread:
    """Exit the process EXIT_AFTER seconds past the grace if it is still there (a daemon thread,
    which an exiting interpreter does not wait for)."""

    def watch() -> None:
        time.sleep(max(0.0, clock.deadline + EXIT_AFTER - time.monotonic()))
        log.error(
            "still stopping %.0f s after the %g s grace; exiting now (what was acknowledged is stored)",
            EXIT_AFTER,
            clock.grace,
        )
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):  # a full disk must not keep the process alive
                handler.flush()
        os._exit(0)

    thread = threading.Thread(target=watch, name="hippod-stop-watch", daemon=True)
    thread.start()
    return thread
