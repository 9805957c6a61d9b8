"""Every numeric option of every verb follows one rule (argcheck.Number): a value outside its range
is a one-line usage error naming the option, before the daemon is contacted."""

from __future__ import annotations

import argparse

import pytest

from hippoctl import prompt_hook
from hippoctl.args import command as args
from hippoctl.args.argcheck import Number, UsageError
from hippoctl.protocol import validate

# The conflict number of `resolve` is an id, checked with the other ids.
IDS = {("resolve", "n")}


def numeric_options() -> list[tuple[str, argparse.Action]]:
    found = []
    for verb in sorted(args.VERB_NAMES):
        parser = args.build_parser([verb]).verb_parsers[verb]
        for action in parser._actions:
            if action.type in (int, float) and (verb, action.dest) not in IDS:
                raise AssertionError(f"{verb} {action.option_strings or action.dest} skips the number rule")
            if isinstance(action.type, Number):
                found.append((verb, action))
    return found


OPTIONS = numeric_options()


def test_the_rule_covers_the_options_the_issue_names() -> None:
    named = {(verb, action.option_strings[0]) for verb, action in OPTIONS if action.option_strings}
    for pair in (
        ("context", "--budget"),
        ("recall", "--budget"),
        ("recall", "--limit"),
        ("status", "--timeout"),
    ):
        assert pair in named
    assert len(OPTIONS) > 40  # --timeout alone is on every verb


@pytest.mark.parametrize(("verb", "action"), OPTIONS, ids=[f"{v}{a.option_strings}" for v, a in OPTIONS])
def test_a_value_out_of_range_is_refused_by_name(verb: str, action: argparse.Action) -> None:
    rule = action.type
    assert isinstance(rule, Number)
    flag = action.option_strings[0]
    below = rule.low if rule.above else rule.low - 1
    bad = [str(below), "nan" if rule.real else "1.5", "x"]
    if rule.high is not None:
        bad.append(str(rule.high + 1))
    for value in bad:
        with pytest.raises(UsageError) as caught:
            args.build_parser([verb]).parse([verb, f"{flag}={value}"])
        assert str(caught.value).startswith(f"{flag} "), (verb, value, caught.value)
        assert "\n" not in str(caught.value)
    good = rule.high if rule.high is not None else rule.low + 1
    assert rule.parse(f"{good:g}", flag) == good


def test_context_and_recall_refuse_a_negative_budget_alike() -> None:
    messages = []
    for argv in (["context", "--budget", "-1"], ["recall", "q", "--budget", "-1"]):
        with pytest.raises(UsageError) as caught:
            args.build_parser(argv).parse(argv)
        messages.append(str(caught.value))
    assert messages == ["--budget must be 0 or more"] * 2
    # A budget of 0 stays the documented "print nothing".
    argv = ["context", "--budget", "0"]
    assert args.build_body(args.build_parser(argv).parse(argv)).budget == 0  # type: ignore[attr-defined]


def test_the_prompt_hook_follows_the_same_rule() -> None:
    for flags, message in (
        (["--budget", "-1"], "--budget must be 0 or more"),
        (["--include-recent", "-2"], "--include-recent must be 0 or more"),
        (["--timeout", "0"], "--timeout must be more than 0"),
        (["--budget", "many"], "--budget needs a whole number, not 'many'"),
    ):
        with pytest.raises(prompt_hook.HookUsageError, match=f"^{message}$"):
            prompt_hook.parse(["context", "--pinned-only", *flags])


def test_number_problem_wording() -> None:
    assert validate.number_problem("--budget", 0, 0) is None
    assert validate.number_problem("--budget", -1, 0) == "--budget must be 0 or more"
    assert validate.number_problem("--limit", 1001, 1, 1000) == "--limit must be between 1 and 1000"
    assert validate.number_problem("--timeout", 0.0, 0, above=True) == "--timeout must be more than 0"
    assert (
        validate.number_problem("--importance", float("inf"), 0, 1) == "--importance must be between 0 and 1"
    )
