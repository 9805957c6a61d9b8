"""Command-line arguments: one argparse sub-command per verb, and the request body each one sends.

Usage errors are raised here, before the daemon is contacted (exit 2). The lifecycle verbs live in
`args_lifecycle.py`; this module holds the shared helpers and the foundation's verbs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from hippoctl import (
    __version__,
    args_backup,
    args_cards,
    args_context,
    args_continuity,
    args_hooks,
    args_http,
    args_ingest,
    args_integrations,
    args_lifecycle,
)
from hippoctl.argcheck import (
    COUNT,
    MEMORY_ID,
    SECONDS,
    Number,
    UsageError,
    check,
    read_text,
    tags,
    utf8,
)
from hippoctl.argv import verb_of
from hippoctl.parser import NO_JSON_VERBS, Parser, not_a_verb
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.version import PROTOCOL

# `import` has its own --json (args_ingest: a path after it or not).
_OWN_JSON_FLAG = frozenset({"import"})
GLOBAL_OPTIONS = "options every verb takes (before or after the verb)"


def _common(parser: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    # SUPPRESS keeps a subcommand's unset option from overwriting one given before the verb.
    s = argparse.SUPPRESS
    group = parser.add_argument_group(GLOBAL_OPTIONS)
    group.add_argument(
        "--global", dest="global_store", action="store_true", default=s, help="use the global store"
    )
    group.add_argument("-C", dest="directory", metavar="DIR", default=s, help="act as if run from DIR")
    group.add_argument(
        "--no-spawn", action="store_true", default=s, help="never start the daemon (also HIPPO_NO_SPAWN=1)"
    )
    group.add_argument(
        "--timeout",
        type=SECONDS,
        default=s,
        metavar="S",
        help="seconds to wait for a reply (default 60)",
    )
    if json_flag:
        group.add_argument("--json", action="store_true", default=s, help="print the reply data as JSON")


class _Unused:
    """Stands in for the parser of a verb that was not given: every call is a no-op."""

    def add_argument(self, *args: object, **kwargs: object) -> None:
        return None

    def add_mutually_exclusive_group(self, **kwargs: object) -> _Unused:
        return self


TOP_EXAMPLES = (
    'hippoctl remember "Staging deploys need the VPN" --error',
    'hippoctl recall "deploy staging" --why',
    "hippoctl help recall",
)
VERBS_NOTE = "Run `hippoctl help <verb>` (or `hippoctl <verb> --help`) for a verb's options and examples."


def unknown_verb(word: str) -> str:
    """The one-line error for a word that names no verb."""
    return not_a_verb(word, VERB_NAMES)


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The hippoctl parser; given argv, only the named verb gets its sub-parser.

    Building all of them costs a few milliseconds on every call, and hooks call hippoctl on every
    prompt. With no verb (or an unknown one) every verb is built, for --help and the error message.
    """
    parser = Parser(
        prog="hippoctl", description="Agent memory that learns what is wrong.", examples=TOP_EXAMPLES
    )
    parser.add_argument(
        "--version", action="version", version=version_line(), help="print hippoctl's version and exit"
    )
    _common(parser)
    verbs = parser.add_subparsers(
        dest="verb", metavar="<verb>", parser_class=Parser, title="verbs", description=VERBS_NOTE
    )
    only = verb_of(argv) if argv is not None else None
    if only is not None and only not in VERB_NAMES:
        only = None
    elif only is None and argv is not None and "--version" in argv:
        only = ""  # `hippoctl --version` needs no verb's parser

    def verb(name: str, help_text: str, *examples: str) -> Any:
        if only is not None and name != only:
            return _Unused()
        sub = verbs.add_parser(name, help=help_text, description=help_text, examples=examples)
        parser.verb_parsers[name] = sub
        if name != "help":
            _common(sub, json_flag=name not in NO_JSON_VERBS | _OWN_JSON_FLAG)
        return sub

    _foundation_verbs(verb)
    return parser


def wants_json(args: argparse.Namespace) -> bool:
    """Whether the reply's data is to be printed as JSON: --json before or after the verb.

    After `import`, a --json followed by a path names the export format instead; `export` to stdout
    with --json prints the export's JSON document, which is the reply's text (args_ingest).
    """
    if args_ingest.exports_to_stdout(args):
        return False
    return bool(getattr(args, "json", False)) or args_ingest.json_output(args)


def version_line() -> str:
    """`hippoctl --version`: the client's version and protocol (`hippoctl version` adds the daemon's)."""
    return f"hippoctl {__version__} (protocol {PROTOCOL})"


def verb_help(name: str) -> str:
    """A verb's --help text (`hippoctl help <verb>`)."""
    return build_parser([name]).verb_parsers[name].format_help()


def _foundation_verbs(verb: Callable[..., Any]) -> None:
    """Register every verb: the foundation's here, each group's in its args_* module."""
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
    verb("version", "client and daemon versions and protocols", "hippoctl version", "hippoctl version --json")
    p = verb(
        "help",
        "a verb's options and examples",
        "hippoctl help recall",
        "hippoctl help hook",
    )
    p.add_argument("topic", nargs="?", metavar="verb", help="the verb to explain (without it: every verb)")

    args_lifecycle.add_verbs(verb)
    args_ingest.add_verbs(verb)
    args_continuity.add_verbs(verb)
    args_hooks.add_verbs(verb)
    args_context.add_verbs(verb)
    args_integrations.add_verbs(verb)
    args_http.add_verbs(verb)
    args_cards.add_verbs(verb)
    args_backup.add_verbs(verb)

    p = verb(
        "daemon",
        "control and inspect the daemon",
        "hippoctl daemon status",
        "hippoctl daemon restart",
        "hippoctl daemon install-service --socket-activation",
    )
    p.add_argument(
        "action",
        choices=["start", "stop", "restart", "status", "install-service", "uninstall-service"],
        help="start, stop or restart it; status; install-service or uninstall-service (start at login)",
    )
    p.add_argument(
        "--socket-activation", action="store_true", help="install-service: start on the first connection"
    )


def _all_verbs() -> frozenset[str]:
    names: list[str] = []

    def record(name: str, help_text: str, *examples: str) -> Any:
        names.append(name)
        return _Unused()

    _foundation_verbs(record)
    return frozenset(names)


VERB_NAMES = _all_verbs()


def build_body(args: argparse.Namespace) -> m.Body:
    """The request body for a store verb; raises UsageError for arguments the daemon would refuse."""
    verb = args.verb
    if verb in args_integrations.BUILDERS:
        return args_integrations.BUILDERS[verb](args)
    if verb in args_http.BUILDERS:
        return args_http.BUILDERS[verb](args)
    if verb in args_backup.BUILDERS:
        return args_backup.BUILDERS[verb](args)
    if verb == "card":
        return args_cards.build(args)
    if verb == "remember":
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
    if verb == "recall":
        check(validate.query_problem(utf8(args.query, "the query")))
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
        )
    if verb == "inspect":
        return m.Inspect(id=args.id)
    if verb == "forget":
        if args.archive and not args.reason:
            raise UsageError("--archive needs --reason")
        return m.Forget(id=args.id, archive=args.archive, reason=args.reason, global_too=args.global_too)
    if verb == "outcome":
        return m.Outcome(good=args.good, id=args.id)
    if verb == "status":
        return m.Status()
    if verb == "embed":
        return m.Embed(status_only=args.status)
    continuity = args_continuity.BUILDERS.get(verb)
    if continuity is not None:
        return continuity(args)
    if verb in args_hooks.BUILDERS:
        return args_hooks.BUILDERS[verb](args)
    if verb in args_context.BUILDERS:
        return args_context.BUILDERS[verb](args)
    return args_lifecycle.build_body(args)
