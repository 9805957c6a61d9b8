"""The arguments of each MCP tool (integrations.md §11), checked before any store is touched.

A tool's `arguments` object arrives as the MCP client sent it; `parse` turns it into the tool's
Struct or raises a usage error naming the tool and the argument. Budgets left out are None, so the
store's configured default applies (memory-model.md §4).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import msgspec

from hippoctl.protocol import validate
from hippod.base.errors import HippoError

MAX_DEPTH = 10


class Args(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of every tool's arguments: an argument the tool does not take is an error."""

    # Whether a team server serves the tool (as the request bodies' `on_team`, hippoctl/protocol/body.py).
    on_team: ClassVar[bool] = False

    def team_refusal(self, tool: str) -> str | None:
        """None when a team server serves this call; else what it is, for the error that names it."""
        return None if self.on_team else f"the MCP tool {tool}"


class RecallArgs(Args):
    on_team = True

    query: str
    budget: int | None = None
    limit: int | None = None
    scope: str | None = None
    include_continuity: bool = False
    session_id: str | None = None

    def team_refusal(self, tool: str) -> str | None:
        # The continuity preamble is a laptop's sessions.
        return f"the MCP tool {tool} with include_continuity" if self.include_continuity else None


class AssembleArgs(Args):
    session_id: str
    budget: int = 4000
    fresh_tail_count: int = 10
    summarize_older: bool = True
    scope: str | None = None


class DrillArgs(Args):
    on_team = True

    summary_id: str
    limit: int = 50
    budget: int | None = None
    depth: int = 1


class RememberArgs(Args):
    on_team = True

    text: str
    error: bool = False
    pin: bool = False
    tag: str | list[str] | None = None
    global_: bool = msgspec.field(default=False, name="global")


class OutcomeArgs(Args):
    on_team = True

    good: bool
    ids: list[str] | None = None


class ContextArgs(Args):
    on_team = True

    query: str | None = None
    budget: int | None = None
    scope: str | None = None
    pinned_only: bool = False


class StatusArgs(Args):
    on_team = True


class LearnArgs(Args):
    days: int = 7


class ConflictsArgs(Args):
    on_team = True

    status: str = "open"


class ResolveArgs(Args):
    on_team = True

    conflict_id: int
    keep: str
    forget: bool = False
    reject_loser: bool = False
    reason: str | None = None


class ShareArgs(Args):
    id: str
    force: bool = False


class PeersArgs(Args):
    pass


class BaserateArgs(Args):
    class_tag: str


class CardListArgs(Args):
    status: str | None = None


class CardShowArgs(Args):
    card_id: int


class CardCreateArgs(Args):
    title: str
    repo: str | None = None
    contract: str | None = None
    budget: int | None = None
    depends_on: list[int] | None = None


class CardClaimArgs(Args):
    card_id: int
    runtime: str


class CardMoveArgs(Args):
    card_id: int
    action: str
    run: int | None = None
    reason: str | None = None
    outcome: str | None = None


class CardCommentArgs(Args):
    card_id: int
    body: str


CARD_ACTIONS = ("heartbeat", "block", "review", "complete")

TOOLS: dict[str, type[Args]] = {
    "hippo_recall": RecallArgs,
    "hippo_assemble": AssembleArgs,
    "hippo_drill": DrillArgs,
    "hippo_remember": RememberArgs,
    "hippo_outcome": OutcomeArgs,
    "hippo_context": ContextArgs,
    "hippo_status": StatusArgs,
    "hippo_learn": LearnArgs,
    "hippo_conflicts": ConflictsArgs,
    "hippo_resolve": ResolveArgs,
    "hippo_share": ShareArgs,
    "hippo_peers": PeersArgs,
    "hippo_predict_baserate": BaserateArgs,
    "hippo_card_list": CardListArgs,
    "hippo_card_show": CardShowArgs,
    "hippo_card_create": CardCreateArgs,
    "hippo_card_claim": CardClaimArgs,
    "hippo_card_move": CardMoveArgs,
    "hippo_card_comment": CardCommentArgs,
}

_AT = re.compile(r"^(?P<what>.*) - at `\$\.?(?P<path>[^`]*)`$")
_FIELD = re.compile(r"^Object (?P<what>missing required|contains unknown) field `(?P<name>[^`]*)`$")


def _message(error: msgspec.ValidationError) -> str:
    """msgspec's message in the tool's words: `budget: expected int, got str`."""
    text = str(error)
    field = _FIELD.match(text)
    if field is not None:
        kind = "missing required" if field["what"] == "missing required" else "unknown"
        return f"{kind} argument `{field['name']}`"
    at = _AT.match(text)
    if at is not None:
        what = at["what"]
        return f"{at['path'] or 'arguments'}: {what[:1].lower()}{what[1:]}"
    return text


def _at_least(tool: str, name: str, value: int | None, low: int) -> None:
    if value is not None and value < low:
        raise HippoError("usage", f"{tool}: {name} must be {low} or more")


def _check(tool: str, args: Args) -> None:
    """Range checks the types alone do not make."""
    match args:
        case RecallArgs():
            _at_least(tool, "budget", args.budget, 0)
            _at_least(tool, "limit", args.limit, 0)
        case AssembleArgs():
            _at_least(tool, "budget", args.budget, 0)
            _at_least(tool, "fresh_tail_count", args.fresh_tail_count, 0)
        case DrillArgs():
            _at_least(tool, "limit", args.limit, 1)
            _at_least(tool, "budget", args.budget, 0)
            if not 1 <= args.depth <= MAX_DEPTH:
                raise HippoError("usage", f"{tool}: depth must be between 1 and {MAX_DEPTH}")
        case ContextArgs():
            if args.budget is not None and args.budget < 0:
                raise HippoError("usage", f"{tool}: budget must be 0 or more")
        case LearnArgs():
            _at_least(tool, "days", args.days, 1)
        case OutcomeArgs() if args.ids is not None and not args.ids:
            raise HippoError("usage", f"{tool}: ids must name at least one memory (or be left out)")
        case CardShowArgs() | CardClaimArgs() | CardCommentArgs():
            _card_numbers(tool, [args.card_id])
        case CardMoveArgs():
            _card_numbers(tool, [args.card_id], args.run)
            _check_move(tool, args)
        case CardCreateArgs():
            _card_numbers(tool, args.depends_on or [])
        case _:
            pass


def _card_numbers(tool: str, cards: list[int], run: int | None = None) -> None:
    """Card and run numbers are row numbers: 1 to SQLite's largest integer."""
    for value, what in [*((c, "card number") for c in cards), (run, "run number")]:
        problem = None if value is None else validate.id_problem(value, f"{tool}: the {what}")
        if problem is not None:
            raise HippoError("usage", problem)


def _check_move(tool: str, args: CardMoveArgs) -> None:
    """hippo_card_move's action decides which of reason and outcome it needs."""
    if args.action not in CARD_ACTIONS:
        raise HippoError("usage", f"{tool}: action must be one of {', '.join(CARD_ACTIONS)}")
    if args.action == "block" and not (args.reason or "").strip():
        raise HippoError("usage", f"{tool}: block needs a reason")
    if args.action == "complete" and args.outcome is None:
        raise HippoError("usage", f"{tool}: complete needs an outcome (success, failure or partial)")
    if args.reason is not None and args.action != "block":
        raise HippoError("usage", f"{tool}: reason goes with block only")
    if args.outcome is not None and args.action != "complete":
        raise HippoError("usage", f"{tool}: outcome goes with complete only")


def parse(tool: str, arguments: dict[str, Any]) -> Args:
    """The tool's arguments as its Struct; a usage error for an unknown tool or a bad argument."""
    kind = TOOLS.get(tool)
    if kind is None:
        raise HippoError("usage", f"unknown tool {tool!r}; the tools are {', '.join(TOOLS)}")
    try:
        args = msgspec.convert(arguments, kind)
    except msgspec.ValidationError as exc:
        raise HippoError("usage", f"{tool}: {_message(exc)}") from None
    _check(tool, args)
    return args


def tags(value: str | list[str] | None) -> list[str]:
    """`tag` as a list, as repeated `--tag` flags give it."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
