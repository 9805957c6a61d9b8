"""The throttled warning: a flood of refused connections is told once a minute, with its count."""

from __future__ import annotations

import logging

import pytest

from hippod.base.log_throttle import ThrottledWarning


async def test_a_flood_of_warnings_is_one_line_then_one_a_window(caplog: pytest.LogCaptureFixture) -> None:
    throttled = ThrottledWarning(logging.getLogger("test.throttle"), "refused %d: %s", every=3600)
    with caplog.at_level(logging.WARNING, logger="test.throttle"):
        for n in range(1000):
            throttled.note(f"reason {n}")
        assert caplog.messages == ["refused 1: reason 0"]
        throttled._close_window()  # the window's end: what came during it, in one line
        assert caplog.messages[1:] == ["refused 999: reason 999"]
        throttled._close_window()  # a quiet window ends the throttling
        assert len(caplog.messages) == 2
        throttled.note("again")
        assert caplog.messages[2:] == ["refused 1: again"]
