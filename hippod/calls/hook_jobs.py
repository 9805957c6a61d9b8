"""Hook jobs (daemon.md §5.4, §13.3): the work a hook request leaves the daemon after its reply.

A job stands written down as a spool file (ingest.md §8) from before the reply until its last
effect has committed, and only then is the file removed. A daemon killed or stopped in between
leaves the file, and the next start replays it; each effect of the job is applied once however
often that happens (the job records what it did in the transactions that do it).

Jobs of one store run in turn, and at most `concurrency` run at once overall. A graceful stop
starts no more: the queued jobs stay in the spool for the next start, and the running ones get the
grace period to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hippoctl.protocol import spool

log = logging.getLogger("hippod.jobs")

# Told why a job failed (path of its spool file, message): the spool replayer notes it as a try.
FailureNote = Callable[[str, str], None]


@dataclass(eq=False)
class HookJob:
    """One job: its request key, the store it works on, the spool file standing for it, the work."""

    key: str
    store: str
    home: str
    document: spool.SpoolFile
    work: Callable[[], Awaitable[None]]
    # Marks the job records when done, so that a request asking for the same again can see it queued.
    marks: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return os.path.join(spool.spool_root(self.home), self.document.kind, self.key + spool.SUFFIX)


def write_down(job: HookJob) -> None:
    """Write the job's spool file unless it is there already (a replayed request's own file)."""
    if not os.path.exists(job.path):
        spool.write(job.home, job.key + spool.SUFFIX, job.document)


def remove(job: HookJob) -> None:
    """The job is done: its spool file and any note of failed tries go."""
    for path in (job.path, job.path[: -len(spool.SUFFIX)] + spool.ERR_SUFFIX):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


class HookJobs:
    """The daemon's queue of hook jobs."""

    def __init__(self, concurrency: int = 2) -> None:
        self.concurrency = max(1, concurrency)
        self.on_failure: FailureNote | None = None
        self._queued: list[HookJob] = []
        self._running: dict[asyncio.Task[None], HookJob] = {}
        # Keys a request is deciding about right now, so that the same request arriving twice at once
        # (live, and replayed from its spool file) queues one job.
        self._reserved: set[str] = set()
        self._closed = False

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def pending(self) -> int:
        return len(self._queued)

    def _jobs(self) -> list[HookJob]:
        return [*self._queued, *self._running.values()]

    def holds(self, key: str) -> bool:
        """True while a job for `key` is queued or running, or a request for it is being decided."""
        return key in self._reserved or any(job.key == key for job in self._jobs())

    def marked(self, mark: str) -> bool:
        """True when a queued or running job will record `mark` when it is done."""
        return any(mark in job.marks for job in self._jobs())

    def reserve(self, key: str) -> bool:
        """Claim `key` for a request being decided; False when it is held already."""
        if self.holds(key):
            return False
        self._reserved.add(key)
        return True

    def release(self, key: str) -> None:
        """The request for `key` is decided (a job was submitted for it, or none is needed)."""
        self._reserved.discard(key)

    async def submit(self, job: HookJob) -> None:
        """Write the job down in the spool, then queue it; it starts when its store and a slot are free."""
        try:
            await asyncio.to_thread(write_down, job)
        except OSError as exc:
            # The job still runs; only a crash before it is done would lose it.
            log.warning("could not write hook job %s to the spool: %s", job.key, exc)
        self._queued.append(job)
        self._start_next()

    def _start_next(self) -> None:
        if self._closed:
            return
        busy = {job.store for job in self._running.values()}
        for job in list(self._queued):
            if len(self._running) >= self.concurrency:
                break
            if job.store in busy:
                continue
            self._queued.remove(job)
            busy.add(job.store)
            task = asyncio.get_running_loop().create_task(self._run(job))
            self._running[task] = job
            task.add_done_callback(self._finished)

    async def _run(self, job: HookJob) -> None:
        try:
            await job.work()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("hook job %s failed; its spool file stays to be tried again", job.key)
            if self.on_failure is not None:
                self.on_failure(job.path, f"internal error in hippod ({type(exc).__name__}); see its log")
            return
        remove(job)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        self._start_next()

    def close(self) -> int:
        """Start no more jobs; the queued ones are left in the spool. Returns how many were left."""
        self._closed = True
        left, self._queued = self._queued, []
        for job in left:
            try:
                write_down(job)
            except OSError as exc:
                log.error("hook job %s could not be written back to the spool and is lost: %s", job.key, exc)
        if left:
            log.info("left %d hook jobs in the spool for the next start", len(left))
        return len(left)

    async def drain(self, timeout: float, unwind: float = 5.0) -> None:
        """Wait up to `timeout` seconds for the running jobs, then cancel the rest (they stay spooled)
        and wait up to `unwind` seconds for them to end."""
        if not self._running:
            return
        _, left = await asyncio.wait(set(self._running), timeout=max(0.1, timeout))
        for task in left:
            task.cancel()
        if left:
            log.info("cancelled %d running hook jobs; they stay in the spool for the next start", len(left))
            await asyncio.wait(left, timeout=unwind)
