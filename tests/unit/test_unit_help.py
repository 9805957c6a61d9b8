"""Every verb explains itself: help text on every option and argument, and examples that parse.

The test walks the whole parser, so a verb or option added without help fails here.
"""

from __future__ import annotations

import argparse
import io
import shlex
from pathlib import Path

import pytest

from hippoctl.args import command as args
from hippoctl.args.argcheck import UsageError
from hippoctl.args.integrations import CLIENT_VERBS

PARSER = args.build_parser()
VERBS = sorted(PARSER.verb_parsers)
SHELL = {"|", "<", ">", ";", "&&", "||"}
# Verbs the client answers itself: they send no request body.
NO_BODY = CLIENT_VERBS | {"help", "version", "daemon", "watch"}


def _described(action: argparse.Action) -> bool:
    return bool(action.help) and action.help != argparse.SUPPRESS


def _hippoctl_argv(example: str) -> list[str]:
    """The arguments of the hippoctl command in an example line (shell redirections and pipes cut)."""
    words = shlex.split(example, comments=True)
    start = words.index("hippoctl") + 1
    argv: list[str] = []
    for word in words[start:]:
        if word in SHELL:
            break
        argv.append(word)
    return argv


def test_every_verb_is_in_the_walk() -> None:
    assert set(VERBS) == args.VERB_NAMES
    assert len(VERBS) >= 52


@pytest.mark.parametrize("verb", VERBS)
def test_every_option_and_argument_of_every_verb_has_help(verb: str) -> None:
    sub = PARSER.verb_parsers[verb]
    assert sub.description, verb
    missing = [a.option_strings[0] if a.option_strings else a.dest for a in sub._actions if not _described(a)]
    assert missing == [], f"{verb}: no help for {missing}"


def test_every_top_level_option_has_help() -> None:
    missing = [
        a.dest for a in PARSER._actions if not isinstance(a, argparse._SubParsersAction) and not _described(a)
    ]
    assert missing == []
    assert len(PARSER.examples) >= 2


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_help_shows_at_least_two_examples(verb: str) -> None:
    text = args.verb_help(verb)
    examples = text.split("\nexamples:\n", 1)[1].splitlines()
    assert len(examples) >= 2, text
    for line in examples:
        assert line.startswith("  ") and "hippoctl " in line, line


@pytest.mark.parametrize("verb", VERBS)
def test_every_example_is_a_valid_command_of_its_verb(
    verb: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"text read from stdin")))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "code").mkdir()  # the folder `init --scan ~/code` scans
    for example in PARSER.verb_parsers[verb].examples:
        argv = _hippoctl_argv(example)
        assert args.verb_of(argv) == verb, example
        try:
            parsed = args.build_parser(argv).parse(argv)
            if verb not in NO_BODY:
                args.build_body(parsed)
        except UsageError as exc:
            pytest.fail(f"{example}: {exc}")
