"""Heartbeats of long requests: a job that has sent its client nothing for a while sends an empty
Progress frame (daemon.md §6.5), in every phase, whatever the job is busy with.

The beat comes from a task of its own on the event loop, so it goes on while the job waits on a
worker thread (sleep planning, import parsing), on SQLite or on a subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from hippoctl.protocol import messages as m

# daemon.md §6.5 asks for a frame at least every 5 s; beating every second keeps the gaps inside
# that even when a loaded machine runs the loop late, and costs a few bytes a second.
HEARTBEAT_SECONDS = 1.0

# The request types daemon.md §8 calls jobs (and `share --auto`, `sync`, session-end of §5.4).
JOBS: tuple[type[m.Body], ...] = (
    m.Init,
    m.Setup,
    m.Sleep,
    m.DailyRunner,
    m.Share,
    m.Sync,
    m.Import,
    m.Export,
    m.Backup,
    m.Restore,
    m.Capture,
    m.LearnGit,
    m.Embed,
    m.SessionEnd,
    m.SlackBackfill,
)


def is_job(body: object) -> bool:
    """Whether a request body is a long job, whose client hears a heartbeat while it runs."""
    return isinstance(body, JOBS)


class Heartbeat:
    """Tracks when the client last heard from a request, and fills silences with empty frames."""

    def __init__(self, beat: Callable[[], Awaitable[None]], seconds: float = HEARTBEAT_SECONDS) -> None:
        self._beat = beat
        self.seconds = seconds
        self.last = time.monotonic()

    def sent(self) -> None:
        """A frame has just gone to the client."""
        self.last = time.monotonic()

    async def _run(self) -> None:
        while True:
            quiet_for = time.monotonic() - self.last
            if quiet_for < self.seconds:
                await asyncio.sleep(self.seconds - quiet_for)
                continue
            await self._beat()
            self.sent()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Beat while the body runs; no beat goes out once it has ended."""
        task = asyncio.get_running_loop().create_task(self._run())
        try:
            yield
        finally:
            task.cancel()
            # wait(), not await: a cancel of the body itself must still reach the body.
            await asyncio.wait({task})
