"""Arguments of the memory verbs (remember, recall, inspect, forget, outcome, status, embed), `version`
and `help`: the foundation's verbs, listed first by --help."""

from __future__ import annotations

import argparse

from hippoctl.args.argcheck import COUNT, MEMORY_ID, Number, UsageError, check, read_text, tags, utf8
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate


def add_verbs(verb: AddVerb) -> None:
    """Register the memory verbs, `version` and `help` on the hippoctl parser."""
    p = verb(
        "remember",
        "store one memory ('-' reads the text from stdin)",
        'hippoctl remember "Staging deploys need the VPN up first" --tag deploy',
        'hippoctl remember "pytest -x hides the later failures" --error --observed',
        "git log -1 --format=%B | hippoctl remember - --tag git",
    )
    p.add_argument("text", help="the memory's text, at least 3 characters; '-' reads it from stdin")
    p.add_argument("--tag", action="append", default=[], metavar="TAG", help="a tag (repeatable)")
    p.add_argument("--error", action="store_true", help="an error lesson: tag error, double half-life")
    p.add_argument("--pin", action="store_true", help="never decays; injected on every prompt")
    tier = p.add_mutually_exclusive_group()
    for name, meaning in (
        ("verified", "confirmed to be true (the default)"),
        ("observed", "seen happen, not confirmed"),
        ("inferred", "a guess worth checking"),
    ):
        tier.add_argument(f"--{name}", dest="confidence", action="store_const", const=name, help=meaning)
    p.add_argument("--scope", help="a scope label (also tagged scope:<s>); recall boosts the active scope")
    p.add_argument("--owner", help="who it belongs to: user:<id> or agent:<id>")
    p.add_argument(
        "--artifact-ref", metavar="URI", help="a URI it refers to, e.g. file:///path or gh://org/repo"
    )

    p = verb(
        "recall",
        "ranked retrieval from the project and global stores",
        'hippoctl recall "deploy staging"',
        'hippoctl recall "cache invalidation" --budget 2000 --why',
        "hippoctl recall postgres --limit 3 --json",
    )
    p.add_argument("query", help="the words to look for")
    p.add_argument("--budget", type=COUNT, metavar="TOKENS", help="token budget of the reply (default 4000)")
    p.add_argument("--limit", type=COUNT, metavar="N", help="at most N memories (default: as many as fit)")
    p.add_argument(
        "--min-results",
        type=COUNT,
        default=1,
        metavar="N",
        help="keep N results, each cut to fit the budget if need be (default 1)",
    )
    p.add_argument("--why", action="store_true", help="show how each score was made")
    p.add_argument("--scope", help="also memories of this scope (private and legacy scopes are hidden)")
    p.add_argument(
        "--local-bump",
        type=Number(0, real=True),
        metavar="F",
        help="weight of project hits over global ones (default 1.2)",
    )
    p.add_argument("--equal-sources", action="store_true", help="no bump for project hits")
    p.add_argument("--include-superseded", action="store_true", help="also memories a newer version replaced")
    p.add_argument(
        "--hops",
        type=Number(0, validate.MAX_HOPS),
        default=0,
        metavar="N",
        help=f"also memories up to N edges away in the entity graph (0 to {validate.MAX_HOPS}, default 0)",
    )
    p.add_argument(
        "--goal",
        metavar="TAG",
        help="memories tagged TAG or goal:TAG rank x1.5 (the goal stack does not lift this recall)",
    )
    p.add_argument(
        "--reranker",
        metavar="NAME",
        help="reorder the top results: cohere[:model] or voyage[:model] through the API (its key in "
        "the daemon's environment), local, or off (default: the store's reranker.default, off)",
    )

    p = verb(
        "inspect",
        "every field of a memory and its live strength math",
        "hippoctl inspect mem_0123456789ab",
        "hippoctl inspect mem_0123456789ab --json",
    )
    p.add_argument("id", type=MEMORY_ID, help="the memory's id (mem_...)")

    p = verb(
        "forget",
        "delete one memory",
        "hippoctl forget mem_0123456789ab",
        'hippoctl forget raw_0123456789ab --archive --reason "holds a customer name"',
    )
    p.add_argument("id", type=MEMORY_ID, help="the memory's id")
    p.add_argument("--archive", action="store_true", help="archive a raw row instead (needs --reason)")
    p.add_argument("--reason", help="why, kept in the audit log")
    p.add_argument(
        "--global-too",
        action="store_true",
        help="also remove its global copy when it was shared or promoted by hand (auto-share's always goes)",
    )

    p = verb(
        "outcome",
        "mark the last recalled batch (or --id) good or bad",
        "hippoctl outcome --good",
        "hippoctl outcome --bad --id mem_0123456789ab",
    )
    mark = p.add_mutually_exclusive_group(required=True)
    mark.add_argument("--good", dest="good", action="store_true", help="it helped: stronger, ranks higher")
    mark.add_argument(
        "--bad", dest="good", action="store_false", help="it was wrong: fades faster, ranks lower"
    )
    p.add_argument("--id", type=MEMORY_ID, help="mark this memory instead of the last recalled batch")

    verb(
        "status",
        "store health: counts, strengths, at-risk, last sleep",
        "hippoctl status",
        "hippoctl status --global --json",
    )

    p = verb(
        "embed",
        "embed every memory lacking a current vector (needs the hippod[embed] extra)",
        "hippoctl embed",
        "hippoctl embed --status",
    )
    p.add_argument("--status", action="store_true", help="only show how many memories have one")
    p = verb(
        "graph",
        "the entities the memories name and their relations (what recall --hops walks)",
        "hippoctl graph",
        "hippoctl graph --entity PaymentGateway --json",
    )
    p.add_argument("--entity", metavar="NAME", help="only the entities of this name and their neighbours")
    p.add_argument(
        "--limit", type=Number(1, 1000), default=100, metavar="N", help="at most N entities (default 100)"
    )
    verb("version", "client and daemon versions and protocols", "hippoctl version", "hippoctl version --json")
    p = verb(
        "help",
        "a verb's options and examples",
        "hippoctl help recall",
        "hippoctl help hook",
    )
    p.add_argument("topic", nargs="?", metavar="verb", help="the verb to explain (without it: every verb)")


def _remember(args: argparse.Namespace) -> m.Body:
    check(validate.owner_problem(args.owner))
    check(validate.artifact_ref_problem(args.artifact_ref))
    return m.Remember(
        content=read_text(args.text),
        tags=tags(args.tag),
        error=args.error,
        pin=args.pin,
        confidence=args.confidence,
        scope=utf8(args.scope, "--scope"),
        owner=utf8(args.owner, "--owner"),
        artifact_ref=utf8(args.artifact_ref, "--artifact-ref"),
    )


def _recall(args: argparse.Namespace) -> m.Body:
    check(validate.query_problem(utf8(args.query, "the query")))
    goal = None if args.goal is None else utf8(args.goal, "--goal").strip()
    if goal is not None:
        problem = validate.goal_problem(goal)
        check(None if problem is None else f"--goal: {problem}")
    if args.reranker is not None:
        check(validate.reranker_problem(utf8(args.reranker, "--reranker")))
    return m.Recall(
        query=args.query,
        budget=args.budget,
        limit=args.limit,
        min_results=args.min_results,
        why=args.why,
        local_bump=args.local_bump,
        equal_sources=args.equal_sources,
        include_superseded=args.include_superseded,
        scope=args.scope,
        hops=args.hops,
        goal=goal,
        reranker=args.reranker,
    )


def _inspect(args: argparse.Namespace) -> m.Body:
    return m.Inspect(id=args.id)


def _forget(args: argparse.Namespace) -> m.Body:
    if args.archive and not args.reason:
        raise UsageError("--archive needs --reason")
    return m.Forget(id=args.id, archive=args.archive, reason=args.reason, global_too=args.global_too)


def _outcome(args: argparse.Namespace) -> m.Body:
    return m.Outcome(good=args.good, id=args.id)


def _status(args: argparse.Namespace) -> m.Body:
    return m.Status()


def _embed(args: argparse.Namespace) -> m.Body:
    return m.Embed(status_only=args.status)


def _graph(args: argparse.Namespace) -> m.Body:
    entity = utf8(args.entity, "--entity") if args.entity is not None else None
    return m.Graph(entity=entity, limit=args.limit)


BUILDERS: dict[str, Builder] = {
    "remember": _remember,
    "recall": _recall,
    "inspect": _inspect,
    "forget": _forget,
    "outcome": _outcome,
    "status": _status,
    "embed": _embed,
    "graph": _graph,
}


register("foundation", add_verbs, BUILDERS)
