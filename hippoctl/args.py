"""Command-line arguments: one argparse sub-command per verb, and the request body each one sends.

Usage errors are raised here, before the daemon is contacted (exit 2). The lifecycle verbs live in
`args_lifecycle.py`; this module holds the shared helpers and the foundation's verbs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from hippoctl import (
    args_context,
    args_continuity,
    args_hooks,
    args_ingest,
    args_integrations,
    args_lifecycle,
)
from hippoctl.argcheck import UsageError, check, in_wire_range, read_text, utf8
from hippoctl.argv import verb_of
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


# `import --json <path>` names hippod's own export format, so after `import` the reply-as-JSON flag
# is given before the verb instead: `hippoctl --json import --markdown notes.md`.
_NO_JSON_FLAG = frozenset({"import"})


def _common(parser: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    # SUPPRESS keeps a subcommand's unset option from overwriting one given before the verb.
    s = argparse.SUPPRESS
    parser.add_argument(
        "--global", dest="global_store", action="store_true", default=s, help="use the global store"
    )
    parser.add_argument("-C", dest="directory", metavar="DIR", default=s, help="act as if run from DIR")
    parser.add_argument("--no-spawn", action="store_true", default=s, help="never start the daemon")
    parser.add_argument("--timeout", type=float, default=s, metavar="S", help="seconds to wait for a reply")
    if json_flag:
        parser.add_argument("--json", action="store_true", default=s, help="print the reply data as JSON")


class _Unused:
    """Stands in for the parser of a verb that was not given: every call is a no-op."""

    def add_argument(self, *args: object, **kwargs: object) -> None:
        return None

    def add_mutually_exclusive_group(self, **kwargs: object) -> _Unused:
        return self


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The hippoctl parser; given argv, only the named verb gets its sub-parser.

    Building all of them costs a few milliseconds on every call, and hooks call hippoctl on every
    prompt. With no verb (or an unknown one) every verb is built, for --help and the error message.
    """
    parser = Parser(prog="hippoctl", description="Agent memory that learns what is wrong.")
    _common(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", parser_class=Parser)
    only = verb_of(argv) if argv is not None else None
    if only is not None and only not in VERB_NAMES:
        only = None

    def verb(name: str, help_text: str) -> Any:
        if only is not None and name != only:
            return _Unused()
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        _common(sub, json_flag=name not in _NO_JSON_FLAG)
        return sub

    _foundation_verbs(verb)
    return parser


def _foundation_verbs(verb: Callable[[str, str], Any]) -> None:
    """Register every verb: the foundation's here, the lifecycle's in args_lifecycle."""
    p = verb("remember", "store one memory ('-' reads the text from stdin)")
    p.add_argument("text")
    p.add_argument("--tag", action="append", default=[], metavar="T")
    p.add_argument("--error", action="store_true", help="an error lesson: tag error, double half-life")
    p.add_argument("--pin", action="store_true", help="never decays; injected on every prompt")
    tier = p.add_mutually_exclusive_group()
    for name in ("verified", "observed", "inferred"):
        tier.add_argument(f"--{name}", dest="confidence", action="store_const", const=name)
    p.add_argument("--scope")
    p.add_argument("--owner", help="user:<id> or agent:<id>")
    p.add_argument("--artifact-ref", metavar="URI")

    p = verb("recall", "ranked retrieval from the project and global stores")
    p.add_argument("query")
    p.add_argument("--budget", type=int, help="token budget (default 4000)")
    p.add_argument("--limit", type=int)
    p.add_argument("--min-results", type=int, default=1)
    p.add_argument("--why", action="store_true", help="show how each score was made")
    p.add_argument("--scope")
    p.add_argument("--local-bump", type=float, metavar="F")
    p.add_argument("--equal-sources", action="store_true")
    p.add_argument("--include-superseded", action="store_true")

    p = verb("inspect", "every field of a memory and its live strength math")
    p.add_argument("id")

    p = verb("forget", "delete one memory")
    p.add_argument("id")
    p.add_argument("--archive", action="store_true", help="archive a raw row instead")
    p.add_argument("--reason")

    p = verb("outcome", "mark the last recalled batch (or --id) good or bad")
    mark = p.add_mutually_exclusive_group(required=True)
    mark.add_argument("--good", dest="good", action="store_true")
    mark.add_argument("--bad", dest="good", action="store_false")
    p.add_argument("--id")

    verb("status", "store health: counts, strengths, at-risk, last sleep")

    p = verb("embed", "embed every memory lacking a current vector (needs the hippod[embed] extra)")
    p.add_argument("--status", action="store_true", help="only show how many memories have one")
    verb("version", "client and daemon versions and protocols")

    args_lifecycle.add_verbs(verb)
    args_ingest.add_verbs(verb)
    args_continuity.add_verbs(verb)
    args_hooks.add_verbs(verb)
    args_context.add_verbs(verb)
    args_integrations.add_verbs(verb)

    p = verb("daemon", "control and inspect the daemon")
    p.add_argument(
        "action", choices=["start", "stop", "restart", "status", "install-service", "uninstall-service"]
    )
    p.add_argument(
        "--socket-activation", action="store_true", help="install-service: start on the first connection"
    )


def _all_verbs() -> frozenset[str]:
    names: list[str] = []

    def record(name: str, help_text: str) -> Any:
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
    if verb == "remember":
        check(validate.owner_problem(args.owner))
        check(validate.artifact_ref_problem(args.artifact_ref))
        return m.Remember(
            content=read_text(args.text),
            tags=[utf8(t, "--tag") for t in args.tag],
            error=args.error,
            pin=args.pin,
            confidence=args.confidence,
            scope=utf8(args.scope, "--scope"),
            owner=utf8(args.owner, "--owner"),
            artifact_ref=utf8(args.artifact_ref, "--artifact-ref"),
        )
    if verb == "recall":
        check(validate.query_problem(utf8(args.query, "the query")))
        for name in ("budget", "limit", "min_results"):
            value = getattr(args, name)
            in_wire_range(value, f"--{name.replace('_', '-')}")
            if value is not None and value < 0:
                raise UsageError(f"--{name.replace('_', '-')} must be 0 or more")
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
        return m.Forget(id=args.id, archive=args.archive, reason=args.reason)
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
