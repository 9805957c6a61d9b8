"""Command-line arguments: one argparse sub-command per verb, and the request body each one sends.

Usage errors are raised here, before the daemon is contacted (exit 2). Each verb family's module of
this package registers its verbs and their builders (registry.py); this module builds the parser
from them, with the options every verb takes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from hippoctl import __version__

# Each family module registers its verbs and their request builders when imported (registry.py).
from hippoctl.args import (  # noqa: F401
    backup,
    cards,
    context,
    continuity,
    daemon,
    foundation,
    goals,
    hooks,
    http,
    ingest,
    integrations,
    lifecycle,
    registry,
)
from hippoctl.args.argcheck import SECONDS, UsageError
from hippoctl.args.argv import verb_of
from hippoctl.args.parser import NO_JSON_VERBS, Parser, not_a_verb
from hippoctl.protocol.body import Body
from hippoctl.protocol.version import PROTOCOL

# `import` has its own --json (ingest.py: a path after it or not).
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

    _add_verbs(verb)
    return parser


def wants_json(args: argparse.Namespace) -> bool:
    """Whether the reply's data is to be printed as JSON: --json before or after the verb.

    After `import`, a --json followed by a path names the export format instead; `export` to stdout
    with --json prints the export's JSON document, which is the reply's text (ingest.py).
    """
    if ingest.exports_to_stdout(args):
        return False
    return bool(getattr(args, "json", False)) or ingest.json_output(args)


def version_line() -> str:
    """`hippoctl --version`: the client's version and protocol (`hippoctl version` adds the daemon's)."""
    return f"hippoctl {__version__} (protocol {PROTOCOL})"


def verb_help(name: str) -> str:
    """A verb's --help text (`hippoctl help <verb>`)."""
    return build_parser([name]).verb_parsers[name].format_help()


def _add_verbs(verb: Callable[..., Any]) -> None:
    """Every family's verbs, in --help's order."""
    for add_verbs in registry.families():
        add_verbs(verb)


def _all_verbs() -> frozenset[str]:
    names: list[str] = []

    def record(name: str, help_text: str, *examples: str) -> Any:
        names.append(name)
        return _Unused()

    _add_verbs(record)
    return frozenset(names)


VERB_NAMES = _all_verbs()


def build_body(args: argparse.Namespace) -> Body:
    """The request body for a store verb; raises UsageError for arguments the daemon would refuse."""
    builder = registry.BUILDERS.get(args.verb)
    if builder is None:
        raise UsageError(f"unknown verb {args.verb}")
    return builder(args)
