"""The daemon's dispatch table answers every request body the wire carries, and only those, each with
a handler written for that body type."""

from __future__ import annotations

import asyncio
import inspect
import typing

import pytest

from hippoctl.protocol import messages as m
from hippod.base.errors import HippoError
from hippod.daemon import dispatch

WIRE = set(m.RequestBody.__args__)
# Every (body type, where its handler is), the choices of a flag included.
ROWS = list(dispatch.HANDLERS.items()) + [
    (kind, where) for kind, pair in dispatch.CHOICES.items() for where in pair
]


def test_every_request_body_has_a_handler() -> None:
    listed = set(dispatch.HANDLERS) | set(dispatch.CHOICES)
    assert {kind.__name__ for kind in WIRE - listed} == set()


def test_every_handler_answers_a_body_the_wire_carries() -> None:
    assert set(dispatch.HANDLERS) <= WIRE
    assert set(dispatch.CHOICES) <= WIRE
    assert not set(dispatch.HANDLERS) & set(dispatch.CHOICES)


@pytest.mark.parametrize(("kind", "where"), ROWS, ids=[f"{k.__name__}-{w[1]}" for k, w in ROWS])
def test_each_handler_takes_the_body_it_is_listed_under(kind: type, where: dispatch.Where) -> None:
    # What the type checker held the table to while it named the functions themselves.
    found = asyncio.run(dispatch.handler(where))
    assert inspect.iscoroutinefunction(found)
    params = list(inspect.signature(found).parameters.values())
    assert len(params) >= 2
    assert all(p.default is not inspect.Parameter.empty for p in params[2:])
    hints = typing.get_type_hints(found)
    assert hints[params[1].name] is kind
    assert typing.get_origin(hints["return"]) is tuple


def test_a_flag_chooses_the_handler() -> None:
    assert dispatch._where(m.Import(path="notes.md", format="agents")) == ("agents", "import_agents")
    assert dispatch._where(m.Import(path="notes.md", format="markdown")) == ("imports", "import_")
    assert dispatch._where(m.Context(pinned_only=True)) == ("pinned", "pinned_context")
    assert dispatch._where(m.Context()) == ("context", "context")
    assert dispatch._where(m.Recall(query="deploy")) == ("recall", "recall")


def test_an_unknown_body_is_named() -> None:
    with pytest.raises(AssertionError, match="no handler for Welcome"):
        dispatch._where(m.Welcome(protocol=1, daemon_version="0", pid=1, started_at="", home=""))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("where", "error"),
    [(("no_such_module", "verb"), "ModuleNotFoundError"), (("recall", "gone"), "AttributeError")],
)
def test_a_handler_that_no_longer_loads_is_named_with_the_remedy(where: dispatch.Where, error: str) -> None:
    # What a daemon meets when its installed code changed under it: a module gone, a function renamed.
    with pytest.raises(HippoError) as caught:
        asyncio.run(dispatch.handler(where))
    assert caught.value.code == "daemon_outdated"
    assert error in caught.value.message
    assert caught.value.hint == "hippoctl daemon restart"
