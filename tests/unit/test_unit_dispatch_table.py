"""The daemon's dispatch table answers every request body the wire carries, and only those, each with
a handler written for that body type."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import pytest

from hippoctl.protocol import messages as m
from hippod.daemon import dispatch

WIRE = set(m.RequestBody.__args__)


def test_every_request_body_has_a_handler() -> None:
    listed = set(dispatch.HANDLERS) | set(dispatch.CHOOSERS)
    assert {kind.__name__ for kind in WIRE - listed} == set()


def test_every_handler_answers_a_body_the_wire_carries() -> None:
    assert set(dispatch.HANDLERS) <= WIRE
    assert set(dispatch.CHOOSERS) <= WIRE
    assert not set(dispatch.HANDLERS) & set(dispatch.CHOOSERS)


@pytest.mark.parametrize("kind", sorted(WIRE, key=lambda kind: kind.__name__), ids=lambda kind: kind.__name__)
def test_each_handler_takes_the_body_it_is_listed_under(kind: type) -> None:
    # What the type checker held the table to while it named the functions themselves.
    found = dispatch.handler(kind)
    assert inspect.iscoroutinefunction(found)
    params = list(inspect.signature(found).parameters)
    assert len(params) == 2
    hints = typing.get_type_hints(found)
    assert hints[params[1]] is kind
    assert typing.get_origin(hints["return"]) is tuple


def test_an_unknown_body_is_named() -> None:
    with pytest.raises(AssertionError, match="no handler for Welcome"):
        dispatch.handler(m.Welcome)  # type: ignore[arg-type]


def test_a_daemon_starts_without_the_handlers() -> None:
    # Importing the daemon loads no handler: each is imported by the first request that needs it.
    code = (
        "import sys; import hippod.daemon.app; "
        "print(sorted(n for n in sys.modules if n.startswith('hippod.handlers.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
