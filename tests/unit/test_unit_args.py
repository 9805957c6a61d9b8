"""hippoctl's argument parsing: only the named verb's parser is built, with the same result."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippoctl import args
from hippoctl import argv as argv_module
from hippoctl.argcheck import UsageError
from hippoctl.protocol import messages as m


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (["recall", "x"], "recall"),
        (["--json", "-C", "/tmp", "--timeout", "3", "sleep", "--dry-run"], "sleep"),
        (["-C", "recall", "status"], "status"),  # "recall" is -C's value here
        (["--json"], None),
        ([], None),
    ],
)
def test_verb_of(argv: list[str], verb: str | None) -> None:
    assert argv_module.verb_of(argv) == verb


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "deploy cache", "--limit", "3", "--why"],
        ["--json", "-C", "/tmp", "decide", "list", "--status", "active"],
        ["remember", "a lesson", "--tag", "x", "--error", "--observed"],
        ["share", "--auto", "--min-score", "0.5", "--dry-run"],
        ["daemon", "status"],
    ],
)
def test_one_verb_parser_parses_like_the_full_one(argv: list[str]) -> None:
    assert vars(args.build_parser(argv).parse_args(argv)) == vars(args.build_parser().parse_args(argv))


def test_every_verb_is_known_and_unknown_ones_are_usage_errors() -> None:
    assert {
        "recall",
        "remember",
        "sleep",
        "decide",
        "daily-runner",
        "workspaces",
        "daemon",
    } <= args.VERB_NAMES
    with pytest.raises(UsageError, match="invalid choice: 'nosuch'"):
        args.build_parser(["nosuch"]).parse_args(["nosuch"])
    with pytest.raises(UsageError):
        args.build_parser(["recall"]).parse_args(["recall", "--bogus", "x"])


def test_numbers_the_wire_cannot_carry_are_usage_errors() -> None:
    for argv in (
        ["recall", "deploy cache", "--budget", str(2**63)],
        ["recall", "deploy cache", "--limit", str(2**70)],
        ["context", "deploy", "--budget", str(2**63)],
    ):
        with pytest.raises(UsageError, match="out of range"):
            args.build_body(args.build_parser(argv).parse_args(argv))
    argv = ["recall", "deploy cache", "--budget", str(2**63 - 1)]
    assert isinstance(args.build_body(args.build_parser(argv).parse_args(argv)), m.Recall)


def test_init_scan_is_read_against_the_directory_of_minus_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "code").mkdir()
    monkeypatch.chdir("/")
    argv = ["-C", str(tmp_path), "init", "--scan", "code"]
    body = args.build_body(args.build_parser(argv).parse_args(argv))
    assert isinstance(body, m.Init) and body.scan == str((tmp_path / "code").resolve())
