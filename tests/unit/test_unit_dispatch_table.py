"""The daemon's dispatch table answers every request body the wire carries, and only those."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.daemon.dispatch import HANDLERS


def test_every_request_body_has_a_handler() -> None:
    missing = {kind.__name__ for kind in m.RequestBody.__args__} - {kind.__name__ for kind in HANDLERS}
    assert missing == set()


def test_every_handler_answers_a_body_the_wire_carries() -> None:
    assert set(HANDLERS) <= set(m.RequestBody.__args__)
    assert len(HANDLERS) == len(m.RequestBody.__args__)
