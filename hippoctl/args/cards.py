"""Arguments of `card`: the work-queue cards (integrations.md §14)."""

from __future__ import annotations

import argparse

from hippoctl.args.argcheck import UsageError, needed, refuse_options, utf8
from hippoctl.args.registry import AddVerb, register
from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol import validate
from hippoctl.protocol.body import Body
from hippoctl.protocol.messages_cards import OUTCOMES, STATES

ACTIONS = (
    "create",
    "show",
    "list",
    "claim",
    "heartbeat",
    "block",
    "review",
    "complete",
    "reclaim",
    "comment",
    "depend",
)
_FLAGS = {
    "id": "a card number",
    "title": "--title",
    "repo": "--repo",
    "contract": "--contract",
    "budget": "--budget",
    "depends_on": "--depends-on",
    "status": "--status",
    "limit": "--limit",
    "runtime": "--runtime",
    "run": "--run",
    "reason": "--reason",
    "outcome": "--outcome",
    "body": "--body",
    "author": "--author",
    "on": "--on",
}
# What each action takes besides the card number.
_TAKES: dict[str, set[str]] = {
    "create": {"title", "repo", "contract", "budget", "depends_on"},
    "show": set(),
    "list": {"status", "limit"},
    "claim": {"runtime"},
    "heartbeat": {"run"},
    "block": {"reason", "run"},
    "review": {"run"},
    "complete": {"outcome", "run"},
    "reclaim": set(),
    "comment": {"body", "author"},
    "depend": {"on"},
}
_NO_CARD = ("create", "list", "reclaim")


def _number(text: str) -> int:
    """A card or run number: 1 to SQLite's largest id ("#3" reads as 3)."""
    digits = text.removeprefix("#")
    # isdigit() alone accepts "²", which int() refuses.
    if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= validate.MAX_ID:
        raise argparse.ArgumentTypeError(f"{text!r} is not a card or run number")
    return int(digits)


def _budget(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > validate.MAX_ID:
        raise argparse.ArgumentTypeError(f"{text!r} is not a budget (a whole number, 0 or more)")
    return int(text)


def add_verbs(verb: AddVerb) -> None:
    """Register `card` on the hippoctl parser."""
    p = verb(
        "card",
        "the work queue: card create|show|list|claim|heartbeat|block|review|complete|reclaim|comment|depend",
        'hippoctl card create --title "Add retries to the uploader" --depends-on 3',
        "hippoctl card claim 4 --runtime claude-code",
        'hippoctl card block 4 --run 1 --reason "needs the staging key"',
        "hippoctl card complete 4 --outcome success",
        "hippoctl card list --status ready",
    )
    p.add_argument("action", choices=ACTIONS, help="what to do")
    p.add_argument("id", nargs="?", type=_number, help="the card's number (all but create, list, reclaim)")
    p.add_argument("--title", help="create: what the card asks for (required)")
    p.add_argument("--repo", help="create: the repository it is about")
    p.add_argument("--contract", help="create: what done means")
    p.add_argument("--budget", type=_budget, help="create: a budget (tokens, minutes: your unit)")
    p.add_argument(
        "--depends-on",
        action="append",
        type=_number,
        default=[],
        metavar="ID",
        help="create: a card that must be done first (repeatable)",
    )
    p.add_argument("--status", choices=STATES, help="list: only cards in this state")
    p.add_argument("--limit", type=_number, help="list: at most this many")
    p.add_argument("--runtime", help="claim: who claims it (claude-code, codex, ...) (required)")
    p.add_argument("--run", type=_number, help="the run you hold; refused when it is not the live run")
    p.add_argument("--reason", help="block: why (required; kept as a comment)")
    p.add_argument(
        "--outcome", choices=OUTCOMES, help="complete: success (done) or failure/partial (shelved)"
    )
    p.add_argument("--body", help="comment: the text (required)")
    p.add_argument("--author", help="comment: who writes it (default: you)")
    p.add_argument(
        "--on",
        action="append",
        type=_number,
        default=[],
        metavar="ID",
        help="depend: a card it needs (repeatable)",
    )


def build(args: argparse.Namespace) -> Body:
    """The request body of `card <action>`; options the action does not take are refused."""
    action = args.action
    refuse_options(args, "card", _TAKES[action] | ({"id"} if action not in _NO_CARD else set()), _FLAGS)
    if action == "create":
        return mc.CardCreate(
            title=needed(args.title, "--title", "card create"),
            repo=utf8(args.repo, "--repo"),
            contract=utf8(args.contract, "--contract"),
            budget=args.budget,
            depends_on=args.depends_on,
        )
    if action == "list":
        return mc.CardList(status=args.status, limit=args.limit)
    if action == "reclaim":
        return mc.CardReclaim()
    if args.id is None:
        raise UsageError(f"card {action} needs the card's number")
    return _on_card(args, args.id)


def _on_card(args: argparse.Namespace, card: int) -> Body:
    action = args.action
    if action == "show":
        return mc.CardShow(id=card)
    if action == "claim":
        return mc.CardClaim(id=card, runtime=needed(args.runtime, "--runtime", "card claim"))
    if action == "heartbeat":
        return mc.CardHeartbeat(id=card, run=args.run)
    if action == "block":
        return mc.CardBlock(id=card, reason=needed(args.reason, "--reason", "card block"), run=args.run)
    if action == "review":
        return mc.CardReview(id=card, run=args.run)
    if action == "complete":
        if args.outcome is None:
            raise UsageError("card complete needs --outcome success|failure|partial")
        return mc.CardComplete(id=card, outcome=args.outcome, run=args.run)
    if action == "comment":
        return mc.CardComment(
            id=card, body=needed(args.body, "--body", "card comment"), author=utf8(args.author, "--author")
        )
    if not args.on:
        raise UsageError("card depend needs --on <id>")
    return mc.CardDepend(id=card, on=args.on)


register("cards", add_verbs, {"card": build})
