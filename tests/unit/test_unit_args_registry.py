"""The verb families' registry: every verb is listed once, and each that sends a request has a builder."""

from __future__ import annotations

import argparse

import pytest

from hippoctl.args import command, registry
from hippoctl.args.integrations import CLIENT_VERBS
from hippoctl.protocol import messages as m

# Verbs the client answers itself (or, for `daemon`, whose request cli.py builds from its action).
CLIENT_RUN = CLIENT_VERBS | {"help", "version", "daemon", "watch"}


def test_every_verb_sends_a_body_or_is_run_by_the_client() -> None:
    assert set(registry.BUILDERS) == command.VERB_NAMES - CLIENT_RUN
    assert CLIENT_RUN <= command.VERB_NAMES


def test_help_lists_the_families_in_order() -> None:
    listed = list(command.build_parser().verb_parsers)
    assert listed[0] == "remember" and listed[-1] == "daemon"
    assert listed.index("supersede") < listed.index("import") < listed.index("card") < listed.index("backup")


def _status(args: argparse.Namespace) -> m.Body:
    return m.Status()


def test_a_verb_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="remember"):
        registry.register("backup", lambda verb: None, {"remember": _status})


def test_a_family_outside_the_order_is_refused() -> None:
    with pytest.raises(ValueError, match="nowhere"):
        registry.register("nowhere", lambda verb: None, {"nowhere": _status})
