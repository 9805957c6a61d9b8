"""A progress bar for the counted steps of a long request (Progress frames with `done`/`total`).

Drawn on stderr only when stderr is a terminal, on one line redrawn in place: the step, the count,
a bar, the rate and the time left, e.g.
`checking for duplicates: 12,288/20,000 [##########--------] 4,096/s ETA 0:02`. The line is erased
when the reply arrives, so the terminal keeps only the reply. Standard library only, and imported
by cli.py only once such a frame arrives: it costs nothing on a verb that never reports counts.
"""

from __future__ import annotations

import os
import time
from typing import TextIO

from hippoctl.protocol import messages as m

BAR_MAX = 30
BAR_MIN = 8
CLEAR_TO_END = "\x1b[K"


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def render(label: str, done: int, total: int, rate: float | None, columns: int) -> str:
    """One line for the step, fitted to `columns` (the bar shrinks first, then the line is cut)."""
    if rate is None or rate <= 0:
        speed, eta = "--/s", "ETA --:--"
    else:
        speed, eta = f"{rate:,.0f}/s", f"ETA {_clock((total - done) / rate)}"
    if done >= total:
        eta = "ETA 0:00"
    # Counts and rate padded to their widest, so the bar holds still while the numbers grow.
    head = f"{label}: {done:>{len(f'{total:,}')},}/{total:,}"
    tail = f"{speed:>9} {eta}"
    room = columns - 1 - len(head) - len(tail) - 4  # the spaces and the brackets
    if room >= BAR_MIN:
        width = min(BAR_MAX, room)
        filled = width if total <= 0 else min(width, width * done // total)
        line = f"{head} [{'#' * filled}{'-' * (width - filled)}] {tail}"
    else:
        line = f"{head} {tail}"
    return line[: max(columns - 1, 0)]


class Bar:
    """The line on a terminal: redrawn for each counted frame, erased by `clear()`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.label: str | None = None
        self.started = 0.0
        self.first = 0
        self.drawn = False

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            columns = 0
        return columns or 80  # a terminal that reports no size (a fresh pty) gets the usual width

    def update(self, progress: m.Progress) -> None:
        done, total = progress.done or 0, progress.total or 0
        now = time.monotonic()
        if progress.line != self.label:
            # A new step: its rate counts from its first frame.
            self.label, self.started, self.first = progress.line, now, done
        elapsed = now - self.started
        rate = (done - self.first) / elapsed if elapsed > 0 and done > self.first else None
        line = render(progress.line, done, total, rate, self._columns())
        self.stream.write(f"\r{line}{CLEAR_TO_END}")
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write(f"\r{CLEAR_TO_END}")
            self.stream.flush()
            self.drawn = False
