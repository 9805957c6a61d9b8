"""A warning that cannot flood the log: a flood of refused connections would otherwise write a line
each, thousands a second, and rotate the useful log away."""

from __future__ import annotations

import asyncio
import logging
import time

EVERY_SECONDS = 60.0


class ThrottledWarning:
    """The first occurrence is logged at once; later ones are counted and logged at most once every
    `every` seconds, as one line with their count and the latest reason."""

    def __init__(self, logger: logging.Logger, template: str, every: float = EVERY_SECONDS) -> None:
        # `template` takes the count, then the reason: "refused %d connection(s): %s".
        self.logger = logger
        self.template = template
        self.every = every
        self.count = 0
        self.reason = ""
        self._window: asyncio.TimerHandle | None = None

    def note(self, reason: str) -> None:
        """One more occurrence, for `reason`."""
        self.count += 1
        self.reason = reason
        if self._window is None:
            self._emit()
            self._open_window()

    def _emit(self) -> None:
        self.logger.warning(self.template, self.count, self.reason)
        self.count = 0

    def _open_window(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop to time the window: the next occurrence is logged at once
        self._window = loop.call_later(self.every, self._close_window)

    def _close_window(self) -> None:
        # What came during the window is told now; a quiet window ends the throttling.
        self._window = None
        if self.count:
            self._emit()
            self._open_window()


class RepeatFilter(logging.Filter):
    """Lets each of `messages` through at most once every `every` seconds; the next one let through
    says how many were held back since. For the lines a client can make the daemon write at will."""

    def __init__(self, messages: frozenset[str], every: float = EVERY_SECONDS) -> None:
        super().__init__()
        self.messages = messages
        self.every = every
        self._seen: dict[str, tuple[float, int]] = {}  # message -> (when last let through, held since)

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str) or record.msg not in self.messages:
            return True
        now = time.monotonic()
        last, held = self._seen.get(record.msg, (None, 0))
        if last is not None and now - last < self.every:
            self._seen[record.msg] = (last, held + 1)
            return False
        self._seen[record.msg] = (now, 0)
        if held:
            record.msg = f"{record.msg} ({held} more since the last such line)"
        return True
