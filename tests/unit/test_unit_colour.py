"""Colour only on a terminal, never with NO_COLOR (any non-empty value) or TERM=dumb."""

from __future__ import annotations

import os
import pty
import re
from collections.abc import Callable, Iterator
from typing import TextIO

import pytest

from hippoctl import colour
from hippoctl.doctor import render
from hippoctl.protocol.replies_doctor import FAIL, OK, WARN, Check


def _writer(make: Callable[[], tuple[int, int]]) -> Iterator[TextIO]:
    """The writing end of a pair of file descriptors as a text stream; both ends closed after."""
    reader, writer = make()
    stream = os.fdopen(writer, "w")
    try:
        yield stream
    finally:
        stream.close()
        os.close(reader)


@pytest.fixture
def terminal() -> Iterator[TextIO]:
    yield from _writer(pty.openpty)


@pytest.fixture
def pipe() -> Iterator[TextIO]:
    yield from _writer(os.pipe)


def test_a_terminal_gets_colour_unless_no_color_is_set(terminal: TextIO) -> None:
    assert colour.enabled(terminal, {"TERM": "xterm"})
    assert colour.enabled(terminal, {"NO_COLOR": ""})  # empty is the same as unset
    assert not colour.enabled(terminal, {"NO_COLOR": "1"})
    assert not colour.enabled(terminal, {"NO_COLOR": "false"})  # any non-empty value
    assert not colour.enabled(terminal, {"TERM": "dumb"})


def test_a_pipe_never_gets_colour(pipe: TextIO) -> None:
    assert not colour.enabled(pipe, {})
    assert not colour.enabled(pipe, {"FORCE_COLOR": "1", "TERM": "xterm-256color"})


def test_a_closed_stream_gets_no_colour(pipe: TextIO) -> None:
    pipe.close()
    assert not colour.enabled(pipe, {})


def test_doctor_paints_only_the_status_and_keeps_the_columns() -> None:
    checks = [Check("Python", OK, "fine"), Check("Socket", WARN, "shared", "fix"), Check("D", FAIL, "x")]
    plain = render(checks)
    painted = render(checks, colours=True)
    assert "\x1b[" not in plain
    assert painted.splitlines()[0] == "\x1b[32mok  \x1b[0m  Python  fine"
    assert painted.splitlines()[1].startswith("\x1b[33mwarn\x1b[0m  Socket")
    assert painted.splitlines()[2].startswith("\x1b[31mFAIL\x1b[0m  D     ")
    assert re.sub("\x1b\\[[0-9]*m", "", painted) == plain
