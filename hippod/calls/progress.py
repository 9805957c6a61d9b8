"""Counted progress of a long request: `Steps` is advanced by the work (in worker threads or on
the event loop) and `reporting()` sends it to the client as Progress frames with `done`/`total`,
which the client draws as a bar on a terminal (and drops on a pipe).

The work only assigns numbers; the frames go out from one task on the event loop, at most ten a
second, plus the first and the last frame of every step so the client can tell its rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hippod.calls.request import RequestContext

INTERVAL = 0.1
# How often a loop over many items reports where it is.
TICK_EVERY = 256

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Count:
    label: str
    done: int
    total: int


class Stopped(Exception):
    """Raised in the work, at its next tick, once the request it serves has been cancelled."""


class Steps:
    """The step a job is on and how far it has got; safe to advance from one worker thread.

    A step of fewer than `least` units sends nothing: it is over before a bar would help.
    Once `stop()` is called, the next `begin`, `tick` or `track` raises Stopped: a worker thread
    cannot be cancelled from outside, and without this a shutdown would wait for it to finish.
    """

    def __init__(self, least: int = 0) -> None:
        self.least = least
        self._lock = threading.Lock()
        self._current: Count | None = None
        self._pending: list[Count] = []
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False

    @classmethod
    def quiet(cls) -> Steps:
        """Steps that never show: for work done where nobody is watching."""
        return cls(least=sys.maxsize)

    def begin(self, label: str, total: int, *, shown: bool | None = None) -> None:
        """Start a step of `total` units, shown when it has `least` units or more (or as `shown` says)."""
        self._check()
        with self._lock:
            self._finish()
            show = total >= self.least if shown is None else shown
            self._current = Count(label, 0, total) if show else None
            if self._current is not None:
                self._pending.append(self._current)
        self._poke()

    def tick(self, done: int) -> None:
        """The current step has done `done` units."""
        self._check()
        with self._lock:
            current = self._current
            if current is not None and done != current.done:
                self._current = Count(current.label, min(done, current.total), current.total)

    def track(self, items: Iterable[T], every: int = TICK_EVERY) -> Iterator[T]:
        """The items one by one, the current step hearing how many are done every `every` items
        (a tick per item would cost more than the work in a tight loop)."""
        for done, item in enumerate(items):
            if done % every == 0:
                self.tick(done)
            yield item

    def stop(self) -> None:
        """The request was cancelled: have the work end at its next tick."""
        self._stopped = True

    def _check(self) -> None:
        if self._stopped:
            raise Stopped("the request was cancelled")

    def end(self) -> None:
        """The current step is complete."""
        with self._lock:
            if self._current is not None:
                self._current = Count(self._current.label, self._current.total, self._current.total)
            self._finish()
        self._poke()

    def _finish(self) -> None:
        if self._current is not None:
            self._pending.append(self._current)
            self._current = None

    def take(self) -> tuple[list[Count], Count | None]:
        """Frames that must go out (first and last of each step), and the current state."""
        with self._lock:
            pending, self._pending = self._pending, []
            return pending, self._current

    def attach(self, loop: asyncio.AbstractEventLoop | None, wake: asyncio.Event | None) -> None:
        """Have `begin` and `end` wake the reporter (an event set on its loop), or stop doing so."""
        self._loop, self._wake = loop, wake

    def _poke(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            # Thread-safe from a worker thread and from the loop's own thread alike.
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing left to tell
                loop.call_soon_threadsafe(wake.set)


class _Reporter:
    def __init__(self, ctx: RequestContext, steps: Steps) -> None:
        self.ctx, self.steps = ctx, steps
        self.sent: Count | None = None

    async def send(self) -> None:
        pending, current = self.steps.take()
        for count in [*pending, current]:
            if count is not None and count != self.sent:
                await self.ctx.count(count.label, count.done, count.total)
                self.sent = count

    async def run(self, wake: asyncio.Event, stop: asyncio.Event) -> None:
        # Stopped by an event, not by cancelling: on Python 3.11 a cancel that meets a wake-up
        # inside wait_for is lost, and the loop would never end.
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), INTERVAL)
            wake.clear()
            if not stop.is_set():
                await self.send()


@contextlib.asynccontextmanager
async def reporting(ctx: RequestContext, steps: Steps) -> AsyncIterator[None]:
    """Send `steps` to the client while the body runs, and whatever is left when it ends."""
    loop = asyncio.get_running_loop()
    wake, stop = asyncio.Event(), asyncio.Event()
    steps.attach(loop, wake)
    reporter = _Reporter(ctx, steps)
    task = loop.create_task(reporter.run(wake, stop))
    try:
        yield
    except BaseException:
        # Cancelled (a shutdown's grace ran out, the client went away) or failed: work still
        # running in a worker thread stops at its next tick instead of running on unheard.
        steps.stop()
        raise
    finally:
        steps.attach(None, None)
        stop.set()
        wake.set()
        await task
    await reporter.send()
