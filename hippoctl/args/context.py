"""Arguments of `context` (recall.md §9) and `tokens` (continuity.md §7)."""

from __future__ import annotations

import argparse

from hippoctl.args.argcheck import COUNT, DAYS, UsageError, check, utf8
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.messages_ingest import FORMATS, FRAMINGS


def add_verbs(verb: AddVerb) -> None:
    """Register `context` and `tokens` on the hippoctl parser."""
    p = verb(
        "context",
        "memory for an agent's prompt: the task in hand and the memories that fit a budget",
        'hippoctl context "flaky login test"',
        "hippoctl context --auto --budget 800 --framing suggest",
        "hippoctl context --pinned-only --include-recent 5 --format additional-context",
    )
    p.add_argument(
        "query", nargs="?", help="what to find; without it (and without --auto) the strongest memories"
    )
    p.add_argument("--auto", action="store_true", help="derive the query from git's changed paths or branch")
    p.add_argument(
        "--budget",
        type=COUNT,
        metavar="TOKENS",
        help="token budget (default defaultContextBudget, 1500); 0 prints nothing",
    )
    p.add_argument("--limit", type=COUNT, metavar="N", help="at most N memories (default: as many as fit)")
    p.add_argument(
        "--framing",
        choices=FRAMINGS,
        default="observe",
        help="how memories are put to the agent: observe (default), suggest or assert",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="markdown",
        help="markdown (default), json, or additional-context (Claude Code's hook JSON)",
    )
    p.add_argument("--pinned-only", action="store_true", help="only pinned memories (the per-prompt block)")
    p.add_argument(
        "--include-recent", type=COUNT, default=0, metavar="N", help="with --pinned-only: N newest too"
    )
    p.add_argument("--scope", help="also memories of this scope (private and legacy scopes are hidden)")
    p.add_argument(
        "--cross-project", action="store_true", help="also other projects' memories, in their own section"
    )
    p.add_argument("--strict", action="store_true", help="report failures with exit codes")

    p = verb(
        "tokens",
        "memory tokens handed to agents, re-read and saved, per surface",
        "hippoctl tokens",
        "hippoctl tokens --days 7 --here --json",
    )
    p.add_argument("--days", type=DAYS, default=30, metavar="N", help="the last N days (default 30)")
    p.add_argument("--here", action="store_true", help="only the current project")


def _context(args: argparse.Namespace) -> m.Body:
    query = args.query
    if query is not None:
        check(validate.query_problem(utf8(query, "the query")))
    if args.include_recent and not args.pinned_only:
        raise UsageError("--include-recent goes with --pinned-only")
    return m.Context(
        query=query,
        auto=args.auto,
        budget=args.budget,
        limit=args.limit,
        framing=args.framing,
        format=args.format,
        pinned_only=args.pinned_only,
        include_recent=args.include_recent,
        scope=utf8(args.scope, "--scope"),
        cross_project=args.cross_project,
    )


def _tokens(args: argparse.Namespace) -> m.Body:
    return m.Tokens(days=args.days, here=args.here)


BUILDERS: dict[str, Builder] = {
    "context": _context,
    "tokens": _tokens,
}

register("context", add_verbs, BUILDERS)
