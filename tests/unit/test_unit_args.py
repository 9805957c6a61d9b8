"""hippoctl's argument parsing: only the named verb's parser is built, with the same result."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippoctl.args import argv as argv_module
from hippoctl.args import command as args
from hippoctl.args.argcheck import UsageError
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
    with pytest.raises(UsageError, match="unknown verb 'nosuch'"):
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


def _error(argv: list[str]) -> str:
    with pytest.raises(UsageError) as caught:
        args.build_parser(argv).parse(argv)
    return str(caught.value)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["recal", "deploy"], "unknown verb 'recal'; did you mean 'recall'?"),
        (["--json", "stauts"], "unknown verb 'stauts'; did you mean 'status'?"),
        (["teleport"], "unknown verb 'teleport' (hippoctl --help lists them)"),
        (
            ["hook", "instal", "codex"],
            "hook: action 'instal' is not one of list, install, uninstall; did you mean 'install'?",
        ),
        (
            ["daemon", "restrat"],
            "daemon: action 'restrat' is not one of start, stop, restart, status, "
            "install-service, uninstall-service; did you mean 'restart'?",
        ),
        (["wm", "psh"], "wm: action 'psh' is not one of push, read, clear, flush; did you mean 'push'?"),
        (
            ["export", "--format", "mardown"],
            "--format 'mardown' is not one of json, markdown; did you mean 'markdown'?",
        ),
        (["recall", "x", "--limt", "3"], "unknown option '--limt'; did you mean '--limit'?"),
        (["recall", "--limt", "3", "cache"], "unknown option '--limt'; did you mean '--limit'?"),
        (["recall", "--limt"], "unknown option '--limt'; did you mean '--limit'?"),  # no query left
        (["recall", "x", "--bogus"], "unknown option '--bogus'"),
        (["status", "extra"], "unexpected argument: extra"),
        # An unknown option before the verb is named, not its value taken for the verb.
        (["--tmeout", "3", "status"], "unknown option '--tmeout'; did you mean '--timeout'?"),
        (["--tmeout=3", "status"], "unknown option '--tmeout'; did you mean '--timeout'?"),
        # Between an action that changes something and one that only looks, the one that looks.
        (
            ["daemon", "stat"],
            "daemon: action 'stat' is not one of start, stop, restart, status, "
            "install-service, uninstall-service; did you mean 'status'?",
        ),
        (
            ["hook", "install", "claude"],
            "hook: target 'claude' is not one of claude-code, codex, cursor, openclaw, opencode, pi; "
            "did you mean 'claude-code'?",
        ),
        (["inspect", ""], "the memory id is empty"),
        (["forget", "  "], "the memory id is empty"),
        (["outcome", "--good", "--id", ""], "--id is empty"),
        (["watch", "true", "--json"], "watch has no JSON output; leave out --json"),
    ],
)
def test_a_mistyped_word_gets_one_line_naming_the_closest_choice(argv: list[str], message: str) -> None:
    assert _error(argv) == message


@pytest.mark.parametrize(
    "argv",
    [
        ["-C/tmp", "--glob", "status"],  # a short option's value attached; the start of --global
        ["recall", "--lim", "2", "cache"],  # the start of --limit
        ["recall", "-42"],  # a negative number is a word, not an option
        ["--timeout=3", "recall", "cache"],
    ],
)
def test_known_options_in_every_form_argparse_takes_are_not_called_unknown(argv: list[str]) -> None:
    args.build_parser(argv).parse(argv)


def _parsed(argv: list[str]) -> tuple[m.Body, bool]:
    parsed = args.build_parser(argv).parse(argv)
    return args.build_body(parsed), args.wants_json(parsed)


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "recall", "deploy"],
        ["recall", "deploy", "--json"],
        ["recall", "--json", "deploy"],
        ["status", "--json"],
        ["last-sleep", "--keep", "--json"],
        ["context", "--pinned-only", "--json"],
        ["daemon", "status", "--json"],
    ],
)
def test_json_is_the_same_switch_before_and_after_the_verb(argv: list[str]) -> None:
    parsed = args.build_parser(argv).parse(argv)
    assert args.wants_json(parsed)
    plain = [word for word in argv if word != "--json"]
    assert not args.wants_json(args.build_parser(plain).parse(plain))


def test_import_json_with_a_path_is_the_format_and_alone_is_the_output_switch(tmp_path: Path) -> None:
    export = str(tmp_path / "export.json")
    notes = str(tmp_path / "notes.md")
    body, as_json = _parsed(["import", "--json", export])
    assert isinstance(body, m.Import) and (body.format, body.path, as_json) == ("json", export, False)
    body, as_json = _parsed(["import", "--markdown", notes, "--json"])
    assert isinstance(body, m.Import) and (body.format, body.path, as_json) == ("markdown", notes, True)
    body, as_json = _parsed(["import", "--json", "--markdown", notes])
    assert isinstance(body, m.Import) and (body.format, as_json) == ("markdown", True)
    body, as_json = _parsed(["import", "--json", export, "--json", "--dry-run"])
    assert isinstance(body, m.Import) and (body.format, body.dry_run, as_json) == ("json", True, True)
    body, as_json = _parsed(["--json", "import", "--json", export])
    assert isinstance(body, m.Import) and (body.format, as_json) == ("json", True)
    body, as_json = _parsed(["import", "--agents", "--json"])
    assert isinstance(body, m.Import) and (body.format, as_json) == ("agents", True)
    with pytest.raises(UsageError, match=r"^import needs a source: --chatgpt, .* or --agents$"):
        _parsed(["import", "--json"])
    with pytest.raises(
        UsageError, match=f"^import reads one source: --json {export} or --markdown, not both$"
    ):
        _parsed(["import", "--markdown", notes, "--json", export])


def test_export_json_to_stdout_is_the_json_document_and_markdown_refuses_it(tmp_path: Path) -> None:
    # To stdout the reply's text is the JSON document itself, printed as it is, not the reply's data.
    for argv in (["export", "--json"], ["--json", "export"], ["export", "-", "--json"]):
        body, as_json = _parsed(argv)
        assert isinstance(body, m.Export) and (body.path, body.format, as_json) == (None, "json", False)
    body, as_json = _parsed(["export", str(tmp_path / "out.md"), "--format", "markdown", "--json"])
    assert isinstance(body, m.Export) and body.format == "markdown" and as_json
    with pytest.raises(UsageError, match=r"^export --json prints the memories as JSON"):
        _parsed(["export", "--format", "markdown", "--json"])
