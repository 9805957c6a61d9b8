"""Counted progress: the daemon's Steps and their frames, and the client's bar line."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hippoctl.progress import Bar, render
from hippoctl.protocol import messages as m
from hippod.calls.progress import Count, Steps, Stopped, reporting


class _Sink:
    """Stands in for a request's connection: records the frames a handler sends."""

    def __init__(self) -> None:
        self.counts: list[tuple[str, int, int]] = []
        self.lines: list[str] = []

    async def count(self, label: str, done: int, total: int) -> None:
        self.counts.append((label, done, total))

    async def say(self, line: str, stream: str = "out") -> None:
        self.lines.append(line)


def test_steps_keep_the_first_and_last_frame_of_each_shown_step() -> None:
    steps = Steps(least=100)
    steps.begin("small", 10)
    steps.tick(5)
    steps.end()
    steps.begin("reading", 1000)
    steps.tick(400)
    steps.tick(5000)  # never past the total
    assert steps.take() == ([Count("reading", 0, 1000)], Count("reading", 1000, 1000))
    steps.end()
    steps.begin("writing", 200, shown=True)
    pending, current = steps.take()
    assert pending == [Count("reading", 1000, 1000), Count("writing", 0, 200)]
    assert current == Count("writing", 0, 200)
    quiet = Steps.quiet()
    quiet.begin("anything", 10**9)
    assert quiet.take() == ([], None)


def test_track_hands_out_the_items_and_tells_the_step_every_so_often() -> None:
    steps = Steps(least=1)
    steps.begin("reading", 600)
    seen: list[Count | None] = []
    items = []
    for item in steps.track(range(600), every=256):
        items.append(item)
        seen.append(steps.take()[1])
    assert items == list(range(600))
    assert sorted({c.done for c in seen if c is not None}) == [0, 256, 512]
    assert seen[256] == Count("reading", 256, 600)


async def test_reporting_sends_each_step_from_start_to_end_across_threads() -> None:
    sink = _Sink()
    steps = Steps(least=1)

    def work() -> None:
        for label in ("checking for duplicates", "preparing memories"):
            steps.begin(label, 3000)
            for done in range(0, 3000, 256):
                steps.tick(done)
            steps.end()

    ctx: Any = sink
    async with reporting(ctx, steps):
        thread = threading.Thread(target=work)
        thread.start()
        await asyncio.to_thread(thread.join)
    for label in ("checking for duplicates", "preparing memories"):
        mine = [c for c in sink.counts if c[0] == label]
        assert mine[0] == (label, 0, 3000) and mine[-1] == (label, 3000, 3000)
        assert [c[1] for c in mine] == sorted(c[1] for c in mine)
    assert sink.lines == []


async def test_a_cancelled_request_stops_its_work_in_a_worker_thread_at_the_next_tick() -> None:
    steps = Steps(least=1)
    started, ended = threading.Event(), []

    def work() -> None:
        steps.begin("checking for duplicates", 10**9)
        try:
            for _ in steps.track(range(10**9)):
                started.set()
        except Stopped:
            ended.append("stopped")

    thread = threading.Thread(target=work)
    ctx: Any = _Sink()

    async def request() -> None:
        async with reporting(ctx, steps):
            thread.start()
            await asyncio.to_thread(thread.join)

    task = asyncio.get_running_loop().create_task(request())
    await asyncio.to_thread(started.wait)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(thread.join)  # would run for a billion items without the stop
    assert ended == ["stopped"]
    with pytest.raises(Stopped):
        steps.tick(1)


def test_render_fits_the_line_and_reads_rate_and_eta() -> None:
    line = render("checking for duplicates", 12_000, 20_000, 4_000.0, 100)
    assert (
        line == "checking for duplicates: 12,000/20,000 [##################------------]   4,000/s ETA 0:02"
    )
    # The counts keep their width as they grow, so the bar does not move.
    assert render("reading conversations", 250, 4_000, 2_158.4, 100).startswith(
        "reading conversations:   250/4,000 [#-"
    )
    assert render("writing memories", 0, 500, None, 80).endswith("     --/s ETA --:--")
    assert render("writing memories", 500, 500, None, 80).endswith("ETA 0:00")
    assert render("reading", 1, 7200, 1.0, 80).endswith("ETA 1:59:59")
    narrow = render("checking for duplicates", 12_000, 20_000, 4_000.0, 50)
    assert "[" not in narrow and len(narrow) == 49


def test_bar_redraws_in_place_and_clears() -> None:
    out = io.StringIO()
    bar = Bar(out)
    bar.clear()
    assert out.getvalue() == ""  # nothing drawn, nothing to erase
    bar.update(m.Progress(id=1, line="writing memories", stream="err", done=0, total=10))
    bar.update(m.Progress(id=1, line="writing memories", stream="err", done=10, total=10))
    bar.clear()
    text = out.getvalue()
    assert text.startswith("\rwriting memories:  0/10 [")
    assert "\rwriting memories: 10/10 [" in text and text.endswith("\r\x1b[K")
    assert "\n" not in text


def test_the_client_entry_point_does_not_load_the_bar() -> None:
    # Every hook call imports hippoctl.cli: the bar is loaded only when a counted frame arrives.
    code = "import sys, hippoctl.cli; print('hippoctl.progress' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "False"
