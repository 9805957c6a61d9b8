"""Heartbeats of long requests: which requests get them, and that they fill a silence and stop
with the request."""

from __future__ import annotations

import asyncio

from hippoctl.protocol import messages as m
from hippod.daemon.heartbeat import Heartbeat, is_job


def test_jobs_are_the_long_requests() -> None:
    long_ones = [
        m.Sleep(),
        m.Import(format="markdown", path="notes.md"),
        m.LearnGit(),
        m.Embed(),
        m.DailyRunner(),
        m.Init(),
    ]
    assert all(is_job(body) for body in long_ones)
    assert not any(is_job(body) for body in (m.Remember(content="x"), m.Recall(query="x"), m.Status()))


def test_a_silent_request_hears_beats_until_it_ends() -> None:
    beats: list[int] = []

    async def run() -> None:
        first = asyncio.Event()

        async def beat() -> None:
            beats.append(1)
            first.set()

        heartbeat = Heartbeat(beat, seconds=0.01)
        async with heartbeat.running():
            await first.wait()  # a request that says nothing until a beat has gone out
        ended = len(beats)
        await asyncio.sleep(0.05)
        assert len(beats) == ended, "a beat went out after the request ended"

    asyncio.run(run())
    assert beats
