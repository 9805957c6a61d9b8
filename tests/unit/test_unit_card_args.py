"""`hippoctl card ...` arguments (integrations.md §14): the bodies built, and usage errors (exit 2)."""

from __future__ import annotations

import pytest

from hippoctl.args import command as args
from hippoctl.args.argcheck import UsageError
from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc


def _body(argv: list[str]) -> m.Body:
    return args.build_body(args.build_parser(argv).parse_args(argv))


def test_bodies() -> None:
    assert _body(
        ["card", "create", "--title", "t", "--depends-on", "3", "--depends-on", "#4"]
    ) == mc.CardCreate(title="t", depends_on=[3, 4])
    assert _body(["card", "create", "--title", "t", "--budget", "0"]) == mc.CardCreate(title="t", budget=0)
    assert _body(["card", "list", "--status", "review"]) == mc.CardList(status="review")
    assert _body(["card", "claim", "#2", "--runtime", "codex"]) == mc.CardClaim(id=2, runtime="codex")
    assert _body(["card", "heartbeat", "2"]) == mc.CardHeartbeat(id=2)
    assert _body(["card", "block", "2", "--reason", "r", "--run", "3"]) == mc.CardBlock(
        id=2, reason="r", run=3
    )
    assert _body(["card", "complete", "2", "--outcome", "partial"]) == mc.CardComplete(
        id=2, outcome="partial"
    )
    assert _body(["card", "reclaim"]) == mc.CardReclaim()
    assert _body(["card", "comment", "2", "--body", "b"]) == mc.CardComment(id=2, body="b")
    assert _body(["card", "depend", "2", "--on", "1", "--on", "3"]) == mc.CardDepend(id=2, on=[1, 3])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["card", "claim", "2"], "card claim needs --runtime"),
        (["card", "claim", "--runtime", "x"], "card claim needs the card's number"),
        (["card", "create"], "card create needs --title"),
        (["card", "create", "--title", "  "], "card create needs --title"),
        (["card", "block", "1"], "card block needs --reason"),
        (["card", "complete", "1"], "card complete needs --outcome success|failure|partial"),
        (["card", "depend", "1"], "card depend needs --on <id>"),
        (["card", "list", "4"], "a card number does not go with `card list`"),
        (["card", "show", "4", "--runtime", "x"], "--runtime does not go with `card show`"),
        (["card", "claim", "4", "--runtime", "x", "--run", "1"], "--run does not go with `card claim`"),
    ],
)
def test_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        _body(argv)
    assert str(refused.value) == message


@pytest.mark.parametrize("bad", ["0", "-1", "x", "²", "9223372036854775808"])
def test_numbers_are_refused_by_the_parser(bad: str) -> None:
    with pytest.raises(UsageError) as refused:
        _body(["card", "show", bad])
    assert str(refused.value) == f"argument id: {bad!r} is not a card or run number"
