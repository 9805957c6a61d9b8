"""Work in worker threads that a cancelled caller does not leave running (hippod/base/thread_stop.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hippod.base import thread_stop


def _until_stopped(started: threading.Event, ended: list[str]) -> str:
    """Loop on checkpoints until stopped; notes how it ended."""
    started.set()
    try:
        while True:
            thread_stop.checkpoint()
            threading.Event().wait(0.01)
    except thread_stop.Stopped:
        ended.append("stopped")
        raise


async def test_a_cancelled_caller_stops_the_thread_at_its_next_checkpoint() -> None:
    started, ended = threading.Event(), list[str]()
    task = asyncio.get_running_loop().create_task(thread_stop.run(_until_stopped, started, ended))
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The thread ends by itself: without the checkpoint it would loop for ever.
    for _ in range(3000):
        if ended:
            break
        await asyncio.sleep(0.01)
    assert ended == ["stopped"]


async def test_work_that_is_not_cancelled_runs_to_its_end_and_a_checkpoint_outside_does_nothing() -> None:
    def work(n: int) -> int:
        for _ in range(n):
            thread_stop.checkpoint()
        return n

    assert await thread_stop.run(work, 1000) == 1000
    thread_stop.checkpoint()  # not in a thread of `run`: nothing to stop
    assert await asyncio.to_thread(work, 5) == 5


async def test_detached_work_answers_in_a_daemon_thread_and_a_cancelled_caller_does_not_wait() -> None:
    def where() -> tuple[str, bool]:
        current = threading.current_thread()
        return current.name, current.daemon

    assert await thread_stop.detached(where) == ("hippod-detached", True)

    def fails() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await thread_stop.detached(fails)

    release = threading.Event()
    task = asyncio.get_running_loop().create_task(thread_stop.detached(release.wait, 60))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task  # at once, though the thread still waits
    release.set()
